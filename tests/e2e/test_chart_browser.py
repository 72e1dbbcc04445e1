r"""Charts in real Chromium: a slider redraws a plot in place (``Plotly.react``), it never rebuilds it.

``st.plotly_chart`` rebuilt every chart whose figure changed (a new element, ``Plotly.newPlot``): the plot's SVG was
a new node after each move. :mod:`posenc_ui.frame.chart` keeps the node and changes what is inside it, and draws a
chart below the window when the browser is idle.
"""

from __future__ import annotations

import pytest
from conftest import goto, wait_rendered
from playwright.sync_api import Page

from posenc_ui.frame.chart import LEAN_BUNDLE
from posenc_ui.i18n import t

pytestmark = pytest.mark.e2e

#: Marks the first chart's SVG node and returns a fingerprint of what it draws.
MARK = """() => { const svg = document.querySelector('.posenc-chart .main-svg'); svg.dataset.kept = 'yes';
  return svg.querySelector('.xtick')?.textContent + '|' + svg.innerHTML.length; }"""
STATE = """() => { const svg = document.querySelector('.posenc-chart .main-svg');
  return [svg.dataset.kept ?? null, svg.querySelector('.xtick')?.textContent + '|' + svg.innerHTML.length]; }"""


def test_a_slider_redraws_the_chart_in_place(page: Page, app_url: str, console_errors) -> None:
    goto(page, f"{app_url}/Sinusoidal?lang=en", charts=3)
    before = page.evaluate(MARK)
    slider = page.get_by_role("slider", name=t("sinusoidal.length", "en"))
    for _ in range(3):  # L feeds the first chart: 128 → 134
        slider.focus()
        slider.press("ArrowRight")
        page.wait_for_timeout(300)
        wait_rendered(page)
    page.wait_for_function(f"() => ({STATE})()[1] !== {before!r}", timeout=10_000)
    kept, after = page.evaluate(STATE)
    assert kept == "yes", "the plot was rebuilt: a new SVG node"
    assert after != before
    assert page.locator(".posenc-chart .main-svg").count() >= 3
    assert not console_errors


def test_a_figure_with_frames_plays_them(page: Page, app_url: str, console_errors) -> None:
    r"""RoPE's clocks carry their animation as plotly frames: ▶ must turn the hands (frames reach plotly.js)."""
    goto(page, f"{app_url}/RoPE?lang=en", charts=1)
    clocks = page.locator(".posenc-chart").first
    assert clocks.evaluate("(div) => div._transitionData._frames.length") > 1
    hands = "(div) => [...div.querySelectorAll('.scatterlayer path.js-line')].map((p) => p.getAttribute('d')).join()"
    before = clocks.evaluate(hands)
    clocks.locator(".updatemenu-button").first.click()  # ▶
    page.wait_for_function(f"() => ({hands})(document.querySelector('.posenc-chart')) !== {before!r}", timeout=10_000)
    assert not console_errors


EVERY_DRAWN = "() => [...document.querySelectorAll('.posenc-chart')].every((d) => d.querySelector('.main-svg'))"


def test_plotly_js_bundles_load_as_the_figures_need_them(page: Page, app_url: str, console_errors) -> None:
    r"""A page of cartesian figures loads only plotly.js's cartesian bundle; the extension page's polar arcs load the
    full bundle too, in that tab, and are drawn as polar bars (a bundle without them would draw nothing there)."""
    scripts: list[str] = []
    page.on("request", lambda request: request.resource_type == "script" and scripts.append(request.url))
    goto(page, f"{app_url}/RoPE?lang=en", charts=1)
    page.wait_for_function(EVERY_DRAWN, timeout=30_000)
    assert any(url.endswith(f"/app/static/{LEAN_BUNDLE.name}") for url in scripts)
    assert not any("/PlotlyChart." in url for url in scripts), "the full bundle loaded for cartesian figures"
    goto(page, f"{app_url}/Context_extension?lang=en", charts=1)
    page.wait_for_function(EVERY_DRAWN, timeout=30_000)
    types = page.evaluate("() => [...document.querySelectorAll('.posenc-chart')].map((d) => d._fullData[0].type)")
    assert types.count("barpolar") == 1 and set(types) - {"barpolar"} <= {"scatter", "bar", "heatmap"}
    assert any("/PlotlyChart." in url for url in scripts)
    assert page.locator(".posenc-chart .polarlayer .trace path").count() > 0
    assert not console_errors


#: Per chart: whether it is below the window, and a fingerprint of what it draws.
CHARTS = """() => [...document.querySelectorAll('.posenc-chart')].map((div) => [
  div.getBoundingClientRect().top > innerHeight,
  [...div.querySelectorAll('.xtick, .ytick')].map((t) => t.textContent).join() + '|' + div.innerHTML.length])"""


def test_a_chart_below_the_window_is_redrawn_without_scrolling_to_it(page: Page, app_url: str) -> None:
    r"""Charts out of view wait for an idle moment, not for the reader to scroll: none is left stale."""
    goto(page, f"{app_url}/Sinusoidal?lang=en", charts=3)
    page.wait_for_function(EVERY_DRAWN, timeout=30_000)
    before = page.evaluate(CHARTS)
    below = [i for i, (out, _) in enumerate(before) if out]
    assert below, "the page should have charts below the window"
    slider = page.get_by_role("slider", name=t("sinusoidal.length", "en"))
    slider.focus()
    slider.press("ArrowRight")  # L feeds charts in view and below it
    wait_rendered(page)
    page.wait_for_function(
        f"([was, below]) => {{ const now = ({CHARTS})(); return below.some((i) => now[i][1] !== was[i][1]); }}",
        arg=[before, below],
        timeout=10_000,
    )
    assert all(out for out, _ in (page.evaluate(CHARTS)[i] for i in below))  # still below: drawn without a scroll
