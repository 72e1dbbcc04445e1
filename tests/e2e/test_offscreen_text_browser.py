r"""Paragraphs and checks out of the window are not rendered until they near it (``content-visibility: auto`` in the
frame's ``PAGE_CSS``): a move that redraws a whole lesson lays out and paints only the text in view. Titles are
never skipped: their glyphs reach past their box, and the paint containment that comes with skipping would clip them.
"""

from __future__ import annotations

import pytest
from conftest import goto
from playwright.sync_api import Page

pytestmark = pytest.mark.e2e

#: Whether the browser renders an element's content now (false while ``content-visibility: auto`` skips it).
RENDERED = "(e) => e.firstElementChild.checkVisibility({contentVisibilityAuto: true})"


@pytest.mark.parametrize("width", [1280, 390])
def test_text_out_of_the_window_is_skipped_until_it_nears_it(page: Page, app_url: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    goto(page, f"{app_url}/RoPE?lang=en", charts=1)
    main = page.locator('[data-testid="stMain"]')
    paragraphs, checks = main.locator('[data-testid="stMarkdown"]'), main.locator('[data-testid="stAlert"]')

    def rendered_soon(element) -> None:  # the browser decides what is near the window at its next rendering update
        page.wait_for_function(f"(e) => ({RENDERED})(e)", arg=element.element_handle(), timeout=5_000)

    rendered_soon(paragraphs.first)  # the first paragraph, in the first screen
    rendered_soon(checks.first)  # the key takeaway itself
    last = paragraphs.last  # the sources, at the foot of a long page
    assert not last.evaluate(RENDERED)
    assert not checks.last.evaluate(RENDERED)
    last.scroll_into_view_if_needed()
    rendered_soon(last)
    title = main.locator('[data-testid="stHeading"]').first
    assert title.evaluate("(e) => getComputedStyle(e).contentVisibility") == "visible"
