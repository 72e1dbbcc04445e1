r"""An exported figure in real Chromium from ``file://``, the network off: its slider still changes the plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route

from posenc_ui import export
from posenc_ui.lessons import VIEWS
from posenc_ui.state import defaults

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


#: The plotted numbers of every trace (the typed-array spec, or the arrays plotly.js decoded).
NUMBERS = f"JSON.stringify({PLOT}.data.map((t) => [t.x, t.y, t.z, t.r, t.theta]))"


# The polar arcs inline plotly.js's full bundle; the others its cartesian one (posenc_ui.plotlyjs).
EXPORTED = [("sinusoidal", "heatmap", "zh"), ("alibi", "slopes", "en"), ("extension", "ood", "en")]


@pytest.mark.parametrize(("page_id", "name", "lang"), EXPORTED)
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
    before = page.evaluate(f"() => {NUMBERS}")
    drawn_as = page.evaluate(
        f"() => [{PLOT}.data.map((t) => t.type ?? 'scatter'), {PLOT}._fullData.map((t) => t.type)]"
    )
    assert drawn_as[0] == drawn_as[1]  # a bundle without a trace's type would quietly draw it as another

    rail = page.locator(".slider-rail-touch-rect").first.bounding_box()
    assert rail is not None
    page.mouse.click(rail["x"] + rail["width"] - 2, rail["y"] + rail["height"] / 2)  # the last step
    last = f"{PLOT}.layout.sliders[0].steps.length - 1"
    page.wait_for_function(f"() => {PLOT}.layout.sliders[0].active === {last}", timeout=10_000)
    page.wait_for_function(f"() => {NUMBERS} !== {json.dumps(before)}", timeout=10_000)  # the new frame's numbers
    assert not errors and not off_machine
