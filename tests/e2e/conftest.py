r"""Browser fixtures: one real ``streamlit run`` server per session, driven by Debian's Chromium.

pytest-playwright launches the browser; :func:`browser_type_launch_args` points it at ``/usr/bin/chromium`` with the
flags that keep it off the (closed) network. Screenshots land in ``artifacts/screenshots/`` (ignored by git) for a
person to look at; the whole-page ones (:func:`full_screenshot`) only with ``POSENC_SCREENSHOTS=1``: each took 1–4 s
on the 2-core CI machine, some eighty of them a run, and a run's artifacts are thrown away with its clone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from server import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_server, stop_server

SCREENSHOTS = ROOT / "artifacts" / "screenshots"
#: Streamlit's frontend first probes ``/<page>/_stcore/{health,host-config}`` on a deep link (treating the page
#: path as a base path), gets 404 and falls back to ``/_stcore/...``: harmless, and not ours to fix.
#: How long a page's first run may take: the real model's page loads the model and computes its defaults then.
FIRST_RUN_MS = 360_000
KNOWN_PROBE = re.compile(r"/_stcore/(health|host-config)$")
#: How long an ``expect`` waits for what a rerun draws. Playwright's 5 s default was once too short on the CI machine
#: while xdist's other worker ran the real model: opening the share box reruns the RoPE page, and its code block
#: came later than that.
expect.set_options(timeout=30_000)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    proc = start_server(free_port())
    port = proc.args[proc.args.index("--server.port") + 1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


@pytest.fixture
def console_errors(page: Page) -> list[str]:
    r"""Console errors of ``page`` (Streamlit's own base-path probes excluded), collected as they happen."""
    errors: list[str] = []

    def record(msg) -> None:
        if msg.type == "error" and not KNOWN_PROBE.search(msg.location.get("url", "")):
            errors.append(f"{msg.text} @ {msg.location.get('url')}")

    page.on("console", record)
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    return errors


#: Text of a figure that runs into its title, as "title / text": an axis title (a y-axis title longer than the plot
#: is high spills past its top) or an annotation (a line's label above the plot, under an enlarged title).
TEXT_ON_TITLE = """() => [...document.querySelectorAll('.posenc-chart')].flatMap((chart) => {
  const title = chart.querySelector('.g-gtitle'), t = title && title.getBoundingClientRect();
  if (!t || !t.height) return [];
  const others = [...chart.querySelectorAll('.infolayer > g[class$="title"]:not(.g-gtitle), .infolayer .annotation')];
  return others.filter((other) => {
    const a = other.getBoundingClientRect();
    return a.width && a.left < t.right - 1 && t.left < a.right - 1 && a.top < t.bottom - 1 && t.top < a.bottom - 1;
  }).map((other) => `${title.textContent.slice(0, 40)} / ${other.textContent.slice(0, 30)}`);
})"""


def wait_rendered(page: Page, *, charts: int = 0) -> None:
    r"""Until the script has run, the connection is up and at least ``charts`` Plotly charts have drawn."""
    # The real model's page loads the model and runs its forwards on its first visit to a server (about two minutes on
    # the 2-core machine, docs/real_model.md); every other page is done in seconds.
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=FIRST_RUN_MS)
    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]', timeout=30_000)
    if charts:
        page.wait_for_function(
            f"() => document.querySelectorAll('.posenc-chart .main-svg').length >= {charts}",
            timeout=30_000,
        )


def goto(page: Page, url: str, *, charts: int = 0) -> None:
    page.goto(url)
    wait_rendered(page, charts=charts)


def full_screenshot(page: Page, name: str) -> Path | None:
    r"""The whole scrolling page (Streamlit scrolls an inner element, so the viewport is grown to fit it), where
    ``POSENC_SCREENSHOTS`` asks for it; otherwise nothing (None)."""
    if not os.environ.get("POSENC_SCREENSHOTS"):
        return None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    width = page.viewport_size["width"]
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], [data-testid=stMainBlockContainer]')]"
        ".map(e => e.scrollHeight), 600)"
    )
    page.set_viewport_size({"width": width, "height": min(height + 40, 16_000)})
    page.wait_for_timeout(600)  # plotly re-lays out to the new viewport
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
