r"""An exported figure in real Chromium from ``file://``, the network off: its slider still changes the plot."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, Route

from posenc_ui import export
from posenc_ui.state import defaults
from posenc_ui.views import VIEWS

pytestmark = pytest.mark.e2e

PLOT = "document.querySelector('.js-plotly-plot')"


def _exported(folder: Path, page_id: str, name: str, lang: str) -> Path:
    r"""The file the app's download panel gives for ``name`` at the page's defaults (plotly.js inlined)."""
    view = next(v for v in VIEWS if v.page_id == page_id)
    values = defaults(view.params, lang)
    shown = view.figures[name](values, lang)
    path = folder / f"posenc-{page_id}-{name}-{lang}.html"
    path.write_bytes(export.download_builder(view, name, values, lang, shown, "html")())
    return path


def _plot_state(page: Page) -> dict:
    return page.evaluate(
        f"() => ({{title: {PLOT}.layout.title.text, active: {PLOT}.layout.sliders[0].active,"
        f" z: JSON.stringify({PLOT}.data[0].z)}})"  # the typed-array spec, or the array plotly.js decoded
    )


@pytest.mark.parametrize(("page_id", "name", "lang"), [("sinusoidal", "heatmap", "zh"), ("alibi", "slopes", "en")])
def test_an_exported_figure_keeps_its_slider_offline(page: Page, tmp_path: Path, page_id, name, lang) -> None:
    path = _exported(tmp_path, page_id, name, lang)
    off_machine: list[str] = []

    def only_files(route: Route) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            off_machine.append(route.request.url)
            route.abort()

    page.context.set_offline(True)
    page.context.route("**/*", only_files)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri())
    page.wait_for_selector(".js-plotly-plot .slider-rail-touch-rect", timeout=20_000)
    before = _plot_state(page) if page_id == "sinusoidal" else None
    title_before = page.evaluate(f"() => {PLOT}.layout.title.text")

    rail = page.locator(".slider-rail-touch-rect").first.bounding_box()
    assert rail is not None
    page.mouse.click(rail["x"] + rail["width"] - 2, rail["y"] + rail["height"] / 2)  # the last step
    page.wait_for_function(f"() => {PLOT}.layout.title.text !== {title_before!r}", timeout=10_000)

    steps = page.evaluate(f"() => {PLOT}.layout.sliders[0].steps.length")
    after = page.evaluate(f"() => ({{title: {PLOT}.layout.title.text, active: {PLOT}.layout.sliders[0].active}})")
    assert after["active"] == steps - 1 and after["title"] != title_before
    if before is not None:  # the heatmap's cells are the new frame's, not just its title
        assert _plot_state(page)["z"] != before["z"]
    assert not errors and not off_machine
