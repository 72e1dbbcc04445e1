r"""Serverless sliders: a figure per value stacked into plotly.js frames that the browser swaps with no server."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_ui.figures import style
from posenc_ui.figures.built import unwire
from posenc_ui.figures.frames import SLIDER_ROOM, with_slider


def _heatmaps(n: int) -> list[dict]:
    return [
        style.figure([{"type": "heatmap", "z": np.full((2, 3), float(i))}], title=f"t = {i}").to_dict()
        for i in range(n)
    ]


def _first_cell(z) -> float:
    return float(np.asarray(unwire(z)).flat[0])  # z travels as a plotly.js typed array


def test_the_slider_shows_the_active_figure_and_a_frame_for_every_value() -> None:
    figures = _heatmaps(4)
    fig = with_slider(figures, ["a", "b", "c", "d"], active=2, prefix="t = ")
    assert [frame.name for frame in fig.frames] == ["0", "1", "2", "3"]
    assert [_first_cell(frame.data[0].z) for frame in fig.frames] == [0.0, 1.0, 2.0, 3.0]
    assert _first_cell(fig.data[0].z) == 2.0 and fig.layout.title.text == "t = 2"
    assert [frame.layout.title.text for frame in fig.frames] == [f"t = {i}" for i in range(4)]
    (slider,) = fig.layout.sliders
    assert slider.active == 2 and [step.label for step in slider.steps] == ["a", "b", "c", "d"]
    assert [list(step.args[0]) for step in slider.steps] == [["0"], ["1"], ["2"], ["3"]]
    assert fig.layout.height == figures[2]["layout"]["height"] + SLIDER_ROOM


def test_frames_whose_traces_do_not_line_up_are_refused() -> None:
    figures = _heatmaps(2)
    figures[1] = style.figure([{"type": "scatter", "y": np.ones(3)}], title="other").to_dict()
    with pytest.raises(ValueError, match="frame 'b' has traces"):
        with_slider(figures, ["a", "b"], active=0, prefix="")


@pytest.mark.parametrize(("labels", "active"), [(["a"], 0), (["a", "b"], 2)])
def test_labels_and_the_active_index_must_fit(labels: list[str], active: int) -> None:
    with pytest.raises(ValueError):
        with_slider(_heatmaps(2), labels, active=active, prefix="")
