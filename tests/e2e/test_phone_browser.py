r"""The app on a phone held upright (an iPhone's 390 × 844, touch, its User-Agent): the first figure starts in the
first screen, nothing is wider than the screen, and no line starts with closing punctuation."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import TEXT_ON_TITLE, full_screenshot, wait_rendered
from playwright.sync_api import Browser, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from posenc_ui import catalog
from posenc_ui.i18n import CLOSING_MARKS

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
IPHONE_UA = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.0 Mobile/15E148 Safari/604.1"
)
#: The top of the first figure, px from the top of the screen (a table is not a figure: Compare's used to stand in).
FIRST_FIGURE_TOP = """() => {
  const e = document.querySelector('.posenc-chart');
  return e ? e.getBoundingClientRect().top : null;
}"""
#: Closing punctuation laid out at the start of a line: its box is a line below the text or maths just before it.
LINE_STARTS = f"""() => {{
  const closing = /[{CLOSING_MARKS}]/, found = [];
  const boxes = document.querySelectorAll('[data-testid=stMarkdownContainer], [data-testid=stCaptionContainer]');
  for (const box of boxes) {{
    const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {{
      if (node.parentElement.closest('.katex')) continue;
      const s = node.textContent;
      for (let i = 0; i < s.length; i++) {{
        if (!closing.test(s[i])) continue;
        const here = document.createRange(); here.setStart(node, i); here.setEnd(node, i + 1);
        const before = document.createRange();
        if (i > 0) {{ before.setStart(node, i - 1); before.setEnd(node, i); }}
        else if (node.previousSibling) before.selectNode(node.previousSibling);
        else continue;
        const me = here.getBoundingClientRect(), rects = before.getClientRects();
        if (!rects.length || !me.width) continue;
        const last = rects[rects.length - 1];
        if (me.top > last.top + last.height / 2) found.push(s.slice(Math.max(0, i - 12), i + 8));
      }}
    }}
  }}
  return found;
}}"""

#: Figure titles drawn so far whose top lies above their figure's top edge (cut off), with how far, in px.
TITLES_CUT = """() => [...document.querySelectorAll('.posenc-chart')].flatMap((chart) => {
  const title = chart.querySelector('.g-gtitle');
  const over = title ? chart.getBoundingClientRect().top - title.getBoundingClientRect().top : 0;
  return over > 0.5 ? [`${title.textContent.slice(0, 40)}: ${over.toFixed(1)} px`] : [];
})"""


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(
        viewport=PHONE, user_agent=IPHONE_UA, is_mobile=True, has_touch=True, device_scale_factor=2
    )
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("entry", catalog.PAGES, ids=lambda p: p.id)
def test_a_phone_sees_the_first_figure_in_the_first_screen(phone: Page, app_url: str, entry, lang: str) -> None:
    phone.goto(f"{app_url}/{entry.url_path}?lang={lang}")
    wait_rendered(phone, charts=1)
    limit = PHONE["height"] - 40
    try:  # the layout settles (fonts, maths, the figures' own layout) a moment after the script has run
        phone.wait_for_function(f"() => ({FIRST_FIGURE_TOP})() < {limit}", timeout=10_000)
    except PlaywrightTimeout:
        pass
    top = phone.evaluate(FIRST_FIGURE_TOP)
    assert top is not None and top < limit, f"the first figure starts at {top} px"
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"], "wider than the screen"
    assert not phone.evaluate(LINE_STARTS), "a line starts with closing punctuation"
    assert not phone.evaluate(TITLES_CUT), "a figure's title is cut off at its top"  # wrapped titles were, by 3–7 px
    assert not phone.evaluate(TEXT_ON_TITLE), "text runs into its figure's title"  # three axis titles did, at 390 px
    # the punctuation after a formula is drawn inside it (posenc_ui.i18n.glue_punctuation): KaTeX must still parse it
    assert phone.evaluate("() => document.querySelectorAll('.katex-error').length") == 0, "a formula failed to render"
    full_screenshot(phone, f"{entry.id}-{lang}-iphone")


#: RoPE's clocks: blank px between the legend and the first clock's label, and between the last clock and the buttons.
CLOCK_GAPS = """() => {
  const chart = document.querySelector('.posenc-chart'), box = (s) => chart.querySelector(s).getBoundingClientRect();
  const faces = box('.scatterlayer .trace'), labels = [...chart.querySelectorAll('.infolayer .annotation')];
  const top = Math.min(...labels.map((a) => a.getBoundingClientRect().top));
  return {above: top - box('.legend').bottom, below: box('.updatemenu-container').top - faces.bottom,
          height: chart.getBoundingClientRect().height};
}"""


def test_a_figure_drawn_to_scale_has_no_blank_band_on_a_phone(phone: Page, app_url: str) -> None:
    r"""RoPE's clocks are drawn to scale, two a row, in a figure 910 px high on a laptop. At 390 px the clocks shrink
    to the width, and the figure shrinks with them (``layout.meta.fit``): it used to keep its 910 px, and plotly
    centred the clocks in it: 126 px of blank space between the legend and the clocks, 142 px under them. Now 695 px
    high, 30 and 50 px."""
    phone.goto(f"{app_url}/RoPE?lang=en")
    wait_rendered(phone, charts=1)
    gaps = phone.evaluate(CLOCK_GAPS)
    # what is left: the room the y range keeps above the labels and below the last clock (0.3 radii, ~20 px each),
    # the legend's row and the buttons' padding; the old bands were 126 and 142 px
    assert gaps["above"] < 80 and gaps["below"] < 80, gaps
    # 350 px of plot width × 6.8 / 5.4 for the clocks, plus plotly's margins (~255 px with the slider): ~695 px
    assert gaps["height"] < 760, gaps
