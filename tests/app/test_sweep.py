r"""Serverless sliders: each view's declared sweep is one its recipe reads, every exported figure has a frame for
every value the core accepts, shows the page's figure at the current values, and stays a reasonable size."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

from posenc_core import PosEncError
from posenc_ui import export, sweep
from posenc_ui.figures.built import typed_array, unwire
from posenc_ui.lessons import VIEWS
from posenc_ui.state import defaults

VIEWS_BY_ID = {view.page_id: view for view in VIEWS}
SWEPT = [(view.page_id, name) for view in VIEWS for name in view.sweeps]

#: Bytes of one exported figure beyond plotly.js. Measured at the defaults (docs/benchmarks.md, "Exported files"): the
#: largest is ALiBi's bias, 1.86 MB (24 frames × 3 heatmaps thinned to FRAME_CELLS = 16 000 cells a frame, ~7 bytes
#: a float32 cell: ≤ 2.7 MB by construction, less where panels leave cells blank). 2.5 MB is that 1.86 MB plus a third
#: for words and settings that differ by language or a future tweak of a builder, and stays under the 2.7 MB ceiling.
MAX_FIGURE_BYTES = 2_500_000


def _swept(page_id: str, name: str, lang: str = "en") -> tuple[go.Figure, dict[str, Any]]:
    view = VIEWS_BY_ID[page_id]
    values = defaults(view.params, lang)
    return sweep.swept_figure(view, name, values, lang), values


def _same(a: Any, b: Any) -> bool:
    r"""Equal figure parts: typed arrays and lists compared as numbers (NaN equal to NaN), dicts key by key."""
    a, b = unwire(a), unwire(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray | list | tuple) and isinstance(b, np.ndarray | list | tuple):
        try:
            return np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True)
        except (TypeError, ValueError):  # words, or ragged: element by element
            return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_every_figure_is_swept_or_says_why_it_is_still(view) -> None:
    assert not set(view.sweeps) & set(view.static)
    assert set(view.sweeps) | set(view.static) == set(view.figures)
    assert all(reason.strip() for reason in view.static.values())


@pytest.mark.parametrize(("page_id", "name"), SWEPT)
def test_a_sweep_names_a_parameter_its_recipe_reads(page_id: str, name: str) -> None:
    view = VIEWS_BY_ID[page_id]
    assert view.sweeps[name] in view.figures[name].uses


@pytest.mark.parametrize(("page_id", "name"), SWEPT)
def test_the_export_has_a_frame_for_every_value_the_core_accepts_and_shows_the_page_figure(page_id, name) -> None:
    view = VIEWS_BY_ID[page_id]
    fig, values = _swept(page_id, name)
    swept = view.sweeps[name]
    accepted = []
    for value in sweep.sweep_values(view.param(swept), values):
        try:
            view.figures[name](sweep.with_value(view, values, swept, value), "en")
        except PosEncError:
            continue
        accepted.append(value)
    assert len(fig.frames) == len(accepted) <= sweep.MAX_FRAMES
    (slider,) = fig.layout.sliders
    active = accepted.index(values[swept])
    assert slider.active == active and len(slider.steps) == len(accepted)
    page = sweep.lighten(view.figures[name](values, "en").to_dict())
    shown = fig.to_dict()
    assert _same(shown["data"], page["data"]) and _same(shown["frames"][active]["data"], page["data"])
    assert fig.layout.title.text == page["layout"].get("title", {}).get("text")


@pytest.mark.parametrize(("page_id", "name"), SWEPT)
def test_every_exported_slider_moves_its_figure(page_id: str, name: str) -> None:
    r"""A slider whose frames are all one picture tells the reader nothing moves: sweep a control that does."""
    fig, _ = _swept(page_id, name)
    frames = [{"data": frame["data"], "layout": frame.get("layout", {})} for frame in fig.to_dict()["frames"]]
    assert any(not _same(frame, frames[0]) for frame in frames[1:])  # a marker in the layout moves too


@pytest.mark.parametrize(("page_id", "name"), SWEPT)
def test_an_exported_figure_stays_under_the_measured_bound(page_id: str, name: str) -> None:
    fig, _ = _swept(page_id, name, "zh")
    assert len(export.html_bytes(fig, bundles="../")) <= MAX_FIGURE_BYTES


@pytest.mark.parametrize(("count", "current"), [(5, 3), (256, 7), (256, 255), (24, 0), (25, 13)])
def test_sweep_values_are_at_most_max_frames_and_hold_the_current_value(count: int, current: int) -> None:
    from posenc_ui.state import IntParam

    param = IntParam("x", 0, lo=0, hi=count - 1)
    picked = sweep.sweep_values(param, {"x": current})
    assert current in picked and len(picked) <= sweep.MAX_FRAMES and picked == sorted(set(picked))
    assert picked[0] == 0 and picked[-1] == count - 1
    assert len(picked) == count if count <= sweep.MAX_FRAMES else len(picked) >= sweep.MAX_FRAMES - 1


def test_a_still_figure_exports_as_drawn() -> None:
    view = VIEWS_BY_ID["rope"]
    values = defaults(view.params, "en")
    assert sweep.swept_figure(view, "toy", values, "en") is view.figures["toy"](values, "en")


def test_heatmaps_are_thinned_to_the_frame_budget() -> None:
    z = np.arange(400 * 300, dtype=np.float64).reshape(400, 300)
    trace = {"type": "heatmap", "z": typed_array(z), "y": typed_array(np.arange(400.0)), "x": list(range(300))}
    fig = {"data": [trace], "layout": {}}
    thin = sweep.lighten(fig, max_cells=10_000)["data"][0]
    shape = unwire(thin["z"]).shape
    assert math.prod(shape) <= 10_000 and unwire(thin["z"]).dtype == np.float32
    assert len(unwire(thin["y"])) == shape[0] and len(thin["x"]) == shape[1]


def test_the_html_download_keeps_the_slider_and_images_stay_as_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    view = VIEWS_BY_ID["sinusoidal"]
    values = defaults(view.params, "zh")
    shown = view.figures["heatmap"](values, "zh")
    page = export.download_builder(view, "heatmap", values, "zh", shown, "html")().decode()
    assert "Plotly.addFrames" in page and '"sliders"' in page and "底数 base: " in page  # says what it moves
    assert "Plotly.animate" not in page  # no playing through the frames on load: the shown value stays
    assert len(page) <= 5_000_000 + MAX_FIGURE_BYTES  # plotly.js inlined (~4.7 MB) and the figure
    calls: list[go.Figure] = []
    monkeypatch.setattr(export, "figure_bytes", lambda f, fmt: calls.append(f) or b"x")
    assert export.download_builder(view, "heatmap", values, "zh", shown, "png")() == b"x" and calls == [shown]
