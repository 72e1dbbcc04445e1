r"""Sections in real Chromium: a slider of a section reruns the section alone, and an open panel still follows it.

AppTest always reruns the whole script, so only a browser sees a section rerun on its own (docs/streamlit.md).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from conftest import goto, wait_rendered
from playwright.sync_api import Page, expect

from posenc_ui.i18n import t

pytestmark = pytest.mark.e2e

#: Counts the bytes the server sends over the app's websocket (installed before the app's own scripts run).
COUNT_BYTES = """(() => {
  window.__received = 0;
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (e) => { window.__received += e.data.byteLength ?? e.data.size ?? 0; });
    }
  };
})();"""


def query(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def press(page: Page, label: str, key: str = "ArrowRight") -> int:
    r"""One arrow-key move of the slider ``label``; the bytes the server sent for it."""
    before = page.evaluate("() => window.__received")
    slider = page.get_by_role("slider", name=label)
    slider.focus()
    slider.press(key)
    page.wait_for_timeout(300)  # the key press reaches the server, which starts the rerun
    wait_rendered(page)
    return page.evaluate("() => window.__received") - before


def test_a_section_slider_reruns_only_its_section_and_keeps_the_link(page: Page, app_url: str, console_errors) -> None:
    page.add_init_script(COUNT_BYTES)
    goto(page, f"{app_url}/RoPE?lang=en", charts=2)
    grid = press(page, t("rope.grid", "en"))  # the last section's slider: the patch grid alone is redrawn
    page.wait_for_function("() => location.search.includes('grid=9')")
    expect(page.get_by_role("slider", name=t("rope.grid", "en"))).to_have_value("9")
    whole = press(page, t("rope.dim", "en"))  # d feeds every figure: the whole lesson reruns
    page.wait_for_function("() => location.search.includes('dim=')")
    assert query(page)["grid"] == "9"  # the link still holds what the section wrote
    assert 0 < grid * 10 < whole, (grid, whole)  # ~7 KB against ~310 KB when measured
    assert not console_errors


def test_an_open_share_box_follows_a_section_slider(page: Page, app_url: str) -> None:
    r"""The share box shows the link of the view on screen: a section's move reruns the whole page while it is open."""
    page.add_init_script(COUNT_BYTES)
    goto(page, f"{app_url}/RoPE?lang=en", charts=2)
    share = page.locator("[data-testid=stExpander]").filter(has_text=t("share.title", "en"))
    share.get_by_text(t("share.title", "en")).click()
    link = share.locator("[data-testid=stCode] code").first
    expect(link).to_contain_text("/RoPE?")
    assert "tolerance=" not in link.inner_text()
    press(page, t("rope.tolerance", "en"))
    expect(link).to_contain_text("tolerance=")
    assert query(page)["tolerance"] in link.inner_text()
