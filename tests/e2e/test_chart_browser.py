r"""Charts in real Chromium: a slider redraws a plot in place (``Plotly.react``), it never rebuilds it.

``st.plotly_chart`` rebuilt every chart whose figure changed (a new element, ``Plotly.newPlot``): the plot's SVG was
a new node after each move. :mod:`posenc_ui.frame.chart` keeps the node and changes what is inside it.
"""

from __future__ import annotations

import pytest
from conftest import goto, wait_rendered
from playwright.sync_api import Page

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
