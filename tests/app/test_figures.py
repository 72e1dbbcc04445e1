r"""Figure builders are pure functions: arrays in, a go.Figure out — checked without a server."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from drawn import sent_charts
from streamlit.testing.v1 import AppTest

from posenc_ui.figures import heatmap, style
from posenc_ui.figures.built import BuiltFigure, figure_json, typed_array, unwire
from posenc_ui.figures.style import ENCODING_COLOURS, TEMPLATE
from posenc_ui.lessons import VIEWS
from posenc_ui.lessons.first import figures as positions
from posenc_ui.lessons.learned import figures as learned
from posenc_ui.lessons.sinusoidal import figures as sinusoidal
from posenc_ui.lessons.why import figures as attention
from posenc_ui.state import defaults

PAYLOAD_LIMIT = 1_000_000  # bytes of figure JSON per figure (issue goal)
RNG = np.random.default_rng(0)


def maximal(view) -> dict:
    r"""Every integer parameter at its upper bound (bounds that follow another widget included)."""
    values = defaults(view.params)
    for param in view.params:
        if hasattr(param, "upper") and isinstance(values[param.name], int):
            values[param.name] = param.upper(values)
    return values


@pytest.mark.parametrize(("n_rows", "n_cols"), [(16, 16), (4096, 1024), (4096, 8), (512, 512), (1, 1)])
def test_strides_keep_heatmaps_at_screen_resolution(n_rows: int, n_cols: int) -> None:
    sr, sc = heatmap.strides(n_rows, n_cols)
    rows, cols = -(-n_rows // sr), -(-n_cols // sc)
    assert rows <= heatmap.MAX_SIDE and cols <= heatmap.MAX_SIDE and rows * cols <= heatmap.MAX_CELLS
    if n_rows * n_cols <= heatmap.MAX_CELLS and max(n_rows, n_cols) <= heatmap.MAX_SIDE:
        assert (sr, sc) == (1, 1)  # small tables are sent whole


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
def test_pair_columns_keep_both_members_of_each_pair(layout: str) -> None:
    cols = heatmap.pair_columns(64, 4, layout)
    sines = cols[cols % 2 == 0] if layout == "interleaved" else cols[cols < 32]
    cosines = cols[cols % 2 == 1] if layout == "interleaved" else cols[cols >= 32]
    assert len(sines) == len(cosines) == 8
    assert np.array_equal(heatmap.pair_columns(10, 1), np.arange(10))


def test_heatmap_trace_sends_float32_and_categories_for_uneven_columns() -> None:
    trace = heatmap.heatmap_trace(RNG.standard_normal((4, 4)), x=np.array([0, 1, 8, 9]), colorscale="Viridis")
    assert trace["z"].dtype == np.float32
    assert list(trace["x"]) == ["0", "1", "8", "9"]
    spec = pio.to_json(go.Figure({"data": [trace]}), validate=False)
    assert '"dtype":"f4"' in spec  # a base64 typed array, not a list of floats


def test_attention_map_labels_equal_tokens_apart() -> None:
    fig = attention.attention_map(
        np.full((4, 4), 0.25), ["天", "天", "向", "上"], encoding="none", showscale=True, lang="zh"
    )
    assert list(fig.data[0].y) == ["0 天", "1 天", "2 向", "3 上"]
    assert "天天向上" in fig.layout.title.text


def test_residual_bars_show_exact_zero_on_the_log_axis() -> None:
    fig = attention.residual_bars({"none": 0.0, "rope": 0.3}, selected="rope", lang="en")
    bar = fig.data[0]
    assert list(bar.text) == ["0", "3.0e-01"] and bar.y[0] == attention.ZERO_FLOOR
    assert list(bar.marker.color) == [ENCODING_COLOURS["none"], ENCODING_COLOURS["rope"]]


def test_builders_use_the_house_template() -> None:
    figs = [
        positions.integer_positions(np.arange(5.0), lang="en"),
        positions.normalized_positions({3: np.array([0, 0.5, 1.0])}, lang="zh"),
        positions.binary_bits(np.eye(4), lang="en"),
        positions.neighbour_jumps(np.ones(3), np.ones(3), lang="en"),
        sinusoidal.waves(RNG.standard_normal((20, 8)), [0, 3], lang="en"),
        sinusoidal.shift_matrix(np.eye(4), 3, 64, lang="en"),
        learned.embedding_outputs(np.ones(4), np.ones(4), lang="zh"),
    ]
    for fig in figs:
        assert fig.layout.template == TEMPLATE and fig.layout.title.text


def test_waves_draw_sines_solid_and_cosines_dashed() -> None:
    fig = sinusoidal.waves(RNG.standard_normal((10, 8)), [2, 5], lang="en")
    assert [trace.line.dash for trace in fig.data] == ["solid", "dash"]


def test_extrapolation_stops_learned_curves_at_the_wall() -> None:
    fig = learned.extrapolation(np.zeros((8, 2)), np.zeros((20, 2)), 8, 15, [0, 1], lang="en")
    learned_traces = [tr for tr in fig.data if tr.yaxis in (None, "y")]
    assert max(len(tr.x) for tr in learned_traces) == 8
    assert max(len(tr.x) for tr in fig.data) == 20


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_every_figure_at_defaults_is_titled_and_translated(view, lang: str) -> None:
    for name, build in view.figures.items():
        fig = build(defaults(view.params), lang)
        assert isinstance(fig, go.Figure) and fig.layout.title.text, name


@pytest.mark.parametrize(("lang", "at"), [("zh", defaults), ("en", maximal)], ids=["zh-defaults", "en-maximum"])
@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_every_figure_survives_plotly_validation_unchanged(view, lang: str, at) -> None:
    r"""Figures are built unvalidated (BuiltFigure): plotly's validator must accept each and change nothing.

    ``go.Figure(spec)`` raises on a misspelled property, a bad enum value or a colour scale name plotly.js does
    not know; the JSON it writes back must equal what the page sent.
    """
    values = at(view.params) if at is defaults else at(view)
    for name, build in view.figures.items():
        try:
            fig = build(values, lang)
        except ValueError:
            continue
        assert isinstance(fig, BuiltFigure), name
        sent = json.loads(figure_json(fig))  # what the chart sends
        validated = json.loads(pio.to_json(go.Figure(unwire(fig.to_dict())), validate=False))
        assert validated == sent, f"{view.page_id}.{name}"


def test_built_figures_serialise_once_and_validate_when_looked_into() -> None:
    fig = style.figure([{"type": "scatter", "x": np.arange(3.0), "y": np.ones(3)}], title="t", x="x", y="y")
    sent = fig.to_dict()
    assert sent["data"][0]["x"]["dtype"] == "f8"  # arrays travel as base64, not as lists
    assert figure_json(fig) is figure_json(fig)  # encoded once: a cached figure is sent as the bytes it keeps
    assert json.loads(figure_json(fig)) == sent and fig.to_dict() is not sent  # to_dict hands out fresh copies
    assert list(fig.data[0].x) == [0.0, 1.0, 2.0] and fig.layout.xaxis.title.text == "x"  # a real go.Figure inside
    assert json.loads(pio.to_json(fig)) == json.loads(pio.to_json(go.Figure(unwire(sent))))
    broken = BuiltFigure({"data": [{"type": "heatmap", "z": [[1]], "colorscale": "RdBu_typo"}]})
    assert broken.to_dict()["data"][0]["colorscale"] == "RdBu_typo"  # sending does not validate
    with pytest.raises(ValueError, match="colorscale"):
        broken.layout  # noqa: B018  (the first look inside validates, as the test above does for every page)


def _looks(fig: go.Figure) -> dict:
    return json.loads(pio.to_json(fig, validate=False))  # key order aside: plotly's own tree orders keys its way


@pytest.mark.parametrize(
    "action",
    [
        repr,
        str,
        copy.copy,
        copy.deepcopy,
        lambda f: f.to_dict(),
        lambda f: f.to_json(),
        lambda f: f.to_plotly_json(),
        lambda f: pickle.loads(pickle.dumps(f)),
        lambda f: f.to_dict()["layout"].update(template="...", title="changed"),
        lambda f: f.to_dict()["data"].clear(),
    ],
    ids=[
        "repr",
        "str",
        "copy",
        "deepcopy",
        "to_dict",
        "to_json",
        "to_plotly_json",
        "pickle",
        "mutate_dict",
        "clear_data",
    ],
)
def test_looking_at_a_built_figure_never_changes_it(action) -> None:
    r"""Printing, copying, pickling or editing what ``to_dict()`` returned leaves the figure as it was, and usable."""
    fig = style.figure([{"type": "heatmap", "z": np.eye(3)}], title="位置 · title", x="x", y="y")
    before = _looks(fig)
    result = action(fig)
    assert _looks(fig) == before
    assert fig.layout.title.text == "位置 · title" and fig.layout.template.layout is not None  # still a go.Figure
    assert _looks(fig) == before
    if isinstance(result, go.Figure):  # a copy is an equal, independent, usable figure
        assert _looks(result) == before and result.data[0].z[1][1] == 1.0


def test_a_built_figure_shows_edits_made_through_plotly() -> None:
    fig = style.figure([{"type": "scatter", "y": np.ones(2)}], title="before")
    fig.update_layout(title_text="after")
    assert fig.to_dict()["layout"]["title"]["text"] == "after"
    assert json.loads(fig.to_json())["layout"]["title"]["text"] == "after"


def test_sending_a_figure_never_builds_its_plotly_tree() -> None:
    r"""What the chart component (:mod:`posenc_ui.frame.chart`) and the page frame do with a figure stay cheap."""
    from posenc_ui.frame import plain_title
    from posenc_ui.frame.chart import payload

    fig = style.figure([{"type": "heatmap", "z": np.eye(3)}], title="<b>Bold</b><br>title")
    payload(fig, {})
    assert plain_title(fig) == "Bold title"
    assert fig.__dict__["_built"] is False


def _one_built_figure() -> None:  # an AppTest script: it runs in this process, so the figure can be inspected
    import numpy as np
    import streamlit as st

    from posenc_ui.figures import style
    from posenc_ui.frame.chart import plotly_chart

    fig = style.figure([{"type": "heatmap", "z": np.eye(3)}], title="<b>位置</b> · title", x="x", y="y")
    st.session_state["figure"] = fig
    plotly_chart(fig, config={"displaylogo": False}, key="one")


def test_a_chart_sends_a_built_figure_as_plotly_writes_the_validated_one() -> None:
    r"""The contract :class:`BuiltFigure` relies on, pinned to the Streamlit and plotly versions in requirements.txt.

    A chart must send exactly the JSON of the equivalent validated ``go.Figure``, and must get it through
    ``to_dict()`` alone, never building the plotly tree. A new Streamlit or plotly must pass this before it is pinned.
    """
    import plotly
    import streamlit

    assert (streamlit.__version__, plotly.__version__) == ("1.67.0", "7.1.0"), "re-check BuiltFigure's contract"
    at = AppTest.from_function(_one_built_figure).run(timeout=30)
    assert not at.exception
    fig = at.session_state["figure"]
    (sent,) = sent_charts(at)
    assert fig.__dict__["_built"] is False  # sent through to_dict() alone
    assert sent["figure"] == json.loads(pio.to_json(go.Figure(unwire(fig.to_dict())), validate=False))
    assert sent["config"] == {"displaylogo": False, "responsive": True}


@pytest.mark.parametrize(
    ("array", "dtype", "shape"),
    [
        (np.arange(5), "i1", None),  # int64 narrowed: plotly.js has no 64-bit integers
        (np.array([0, 40_000]), "i4", None),
        (np.array([2**40]), None, None),  # too wide for any typed array: a list
        (np.ones((3, 4), np.float32), "f4", "3, 4"),
        (np.array(["a", "b"]), None, None),
        (np.zeros(0), None, None),
    ],
)
def test_typed_arrays_match_plotly_and_come_back(array: np.ndarray, dtype: str | None, shape: str | None) -> None:
    from _plotly_utils.utils import to_typed_array_spec  # plotly.py's own encoder, the reference

    spec = typed_array(array)
    if dtype is None:
        assert spec == array.tolist()
    else:
        assert spec["dtype"] == dtype and spec.get("shape") == shape
        assert spec == to_typed_array_spec(array)
        assert np.array_equal(unwire(spec), array)


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_payload_stays_under_1_mb_at_maximum_settings(view) -> None:
    values = maximal(view)
    for name, build in view.figures.items():
        try:
            fig = build(values, "en")
        except ValueError:  # e.g. 256 positions in 10 bits: the core refuses, the page shows why
            continue
        size = len(pio.to_json(fig, validate=False))
        assert size < PAYLOAD_LIMIT, f"{view.page_id}.{name}: {size} bytes"


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_checks_pass_at_defaults(view) -> None:
    for name, check in view.checks.items():
        assert check(defaults(view.params)).passed, name
