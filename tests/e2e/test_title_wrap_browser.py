r"""Figure titles wrap to the width the figure is drawn at (a phone's two or three lines are one on a laptop), never
run past its edge, and presenter mode draws the figure's own text larger (title, axis titles, tick labels)."""

from __future__ import annotations

import pytest
from conftest import goto
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from posenc_ui.figures.style import BASE_FONT, TITLE_SIZE
from posenc_ui.frame.present import PRESENT_FONT

pytestmark = pytest.mark.e2e

#: Per chart drawn so far: lines of its title as drawn, lines of the phone's wrap (meta.titles[0]), whether the
#: title lies inside the chart, and its font size.
TITLES = """() => [...document.querySelectorAll('.posenc-chart')].filter((c) => c.querySelector('.g-gtitle text'))
  .map((chart) => {
    const text = chart.querySelector('.g-gtitle text'), box = text.getBoundingClientRect();
    const frame = chart.getBoundingClientRect(), wraps = chart.layout?.meta?.titles;
    return {
      drawn: Math.max(1, text.querySelectorAll('tspan.line').length),
      phone: wraps ? wraps[0][1].split('<br>').length : null,
      inside: box.left >= frame.left - 0.5 && box.right <= frame.right + 0.5,
      size: parseFloat(getComputedStyle(text).fontSize),
      tick: parseFloat(getComputedStyle(chart.querySelector('.xtick text') ?? text).fontSize),
    };
  })"""


@pytest.mark.parametrize(("width", "path"), [(1280, "ALiBi"), (390, "ALiBi"), (1280, "Compare")])
def test_titles_wrap_to_the_width_the_figure_is_drawn_at(page: Page, app_url: str, width: int, path: str) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    goto(page, f"{app_url}/{path}?lang=en", charts=1)
    try:  # every chart in view has drawn its title
        page.wait_for_function(f"() => ({TITLES})().filter((t) => t.phone > 1).length > 0", timeout=15_000)
    except PlaywrightTimeout:
        pass
    page.wait_for_timeout(500)
    titles = page.evaluate(TITLES)
    assert titles, "no figure title drawn"
    assert all(t["inside"] for t in titles), titles  # no title runs past its figure's edge
    wrapped = [t for t in titles if t["phone"] and t["phone"] > 1]
    assert wrapped, "no title that a phone wraps was drawn"
    if width >= 1280:  # a laptop's figure is wider: fewer lines than the phone's wrap
        assert all(t["drawn"] < t["phone"] for t in wrapped), titles
    else:
        assert all(t["drawn"] == t["phone"] for t in wrapped), titles


def test_presenter_mode_enlarges_the_figures_own_text(page: Page, app_url: str) -> None:
    page.set_viewport_size({"width": 1280, "height": 720})
    goto(page, f"{app_url}/ALiBi?lang=en&present=true&figure=weights", charts=1)
    page.wait_for_timeout(800)
    (title,) = page.evaluate(TITLES)
    assert title["size"] == pytest.approx(TITLE_SIZE * PRESENT_FONT / BASE_FONT, abs=0.2), title
    assert title["tick"] >= PRESENT_FONT - 0.5, title  # tick labels follow the figure's enlarged default
    assert title["inside"], title


def test_a_narrowed_window_wraps_the_titles_again(page: Page, app_url: str) -> None:
    r"""A laptop's one-line titles become the phone's wrap when the window narrows (a phone turned upright)."""
    page.set_viewport_size({"width": 1280, "height": 900})
    goto(page, f"{app_url}/ALiBi?lang=en", charts=1)
    page.wait_for_timeout(800)
    page.set_viewport_size({"width": 390, "height": 900})
    settled = (
        f"() => {{ const t = ({TITLES})().filter((t) => t.phone > 1);"
        " return t.length && t.every((t) => t.drawn === t.phone); }"
    )
    try:  # the resize settles (250 ms), then the redraw; slower on a busy machine
        page.wait_for_function(settled, timeout=15_000)
    except PlaywrightTimeout:
        pass
    titles = page.evaluate(TITLES)
    wrapped = [t for t in titles if t["phone"] and t["phone"] > 1]
    assert wrapped and all(t["drawn"] == t["phone"] for t in wrapped), titles
    assert all(t["inside"] for t in titles), titles
