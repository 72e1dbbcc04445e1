r"""The lab's own settings in real Chromium: the lag control, hidden while another task is chosen, comes back with the
value the chart shows (AppTest keeps widget state that the browser's Streamlit drops, so this needs a browser)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from conftest import goto, wait_rendered
from playwright.sync_api import Page

from posenc_ui.i18n import t

pytestmark = pytest.mark.e2e


def _pick(page: Page, task: str) -> None:
    page.locator("[data-testid=stButtonGroup] button", has_text=t(f"lab.task.{task}", "en")).first.click()
    page.wait_for_timeout(300)
    wait_rendered(page, charts=1)


def test_the_lag_survives_a_round_trip_through_the_other_tasks(page: Page, app_url: str, console_errors) -> None:
    goto(page, f"{app_url}/Extrapolation_lab?lang=en", charts=1)
    slider = page.get_by_role("slider", name=t("lab.lag", "en"))
    assert slider.get_attribute("aria-valuetext") == "2"
    for task in ("retrieval", "text", "lag"):
        _pick(page, task)
    slider = page.get_by_role("slider", name=t("lab.lag", "en"))
    shown = slider.get_attribute("aria-valuetext")
    lag = parse_qs(urlparse(page.url).query).get("lag", ["2"])[0]
    assert shown == lag == "2", (shown, lag)
    assert not console_errors
