r"""The chart component: the plotly.js bundles it loads, and a chart that keeps its element across reruns."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import plotly
import pytest
import streamlit as st
from hypothesis import given, settings
from hypothesis import strategies as hst

from posenc_ui.figures.built import _PROBES, contains, figure_json
from posenc_ui.frame.chart import LEAN_BUNDLE, LEAN_TRACES, NAME, plotly_module
from posenc_ui.i18n import t
from posenc_ui.lessons import VIEWS
from posenc_ui.state import defaults

ROOT = Path(__file__).resolve().parents[2]
#: Where plotly.js writes its version, first thing in each of its bundles ("plotly.js v4.1.1", "plotly.js
#: (cartesian - minified) v4.1.1").
VERSION = re.compile(rb"plotly\.js (?:\([^)]*\) )?v(\d+\.\d+\.\d+)")


def test_the_module_the_charts_import_for_other_traces_is_streamlits_plotly_bundle() -> None:
    bundle = Path(st.__file__).parent / "static" / "static" / "js" / plotly_module()
    assert b"plotly.js v4" in bundle.read_bytes()  # plotly.js's own version string, inside Streamlit's bundle


def test_the_lean_bundle_is_the_plotly_js_release_that_the_plotly_package_writes_figures_for() -> None:
    r"""plotly.py writes figures for the plotly.js it ships (``package_data/plotly.min.js``, also what an exported
    HTML embeds); the cartesian bundle in ``static/`` must be that release, so a plotly upgrade in ``requirements.txt``
    without a new bundle fails here."""
    shipped = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()[:200]
    lean = LEAN_BUNDLE.read_bytes()
    assert b"cartesian" in lean[:200]
    assert VERSION.search(lean[:200])[1] == VERSION.search(shipped)[1]
    assert VERSION.search(lean[:200])[1].decode() in LEAN_BUNDLE.name  # a new release is a new URL: no stale cache


def test_the_lean_traces_are_the_ones_the_bundle_registers() -> None:
    registered = set(re.findall(rb'moduleType:"trace",name:"(\w+)"', LEAN_BUNDLE.read_bytes()))
    assert {name.decode() for name in registered} == set(LEAN_TRACES)
    assert "barpolar" not in LEAN_TRACES  # which is why the extension page's arcs need the full bundle


def test_streamlit_serves_the_lean_bundle() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["enableStaticServing"] is True
    assert LEAN_BUNDLE.parent == ROOT / "static"  # Streamlit serves static/ beside app.py at app/static/


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_only_the_polar_arcs_need_the_full_bundle(view) -> None:
    r"""Every figure at its defaults draws with the cartesian bundle but the extension page's out-of-distribution
    arcs (``barpolar``): a new trace type elsewhere would quietly make its page load the full 4.7 MB again."""
    for name, build in view.figures.items():
        data = json.loads(figure_json(build(defaults(view.params), "en")))["data"]
        types = {trace.get("type", "scatter") for trace in data}
        needs_full = not types <= set(LEAN_TRACES)
        assert needs_full == ((view.page_id, name) == ("extension", "ood")), (view.page_id, name, types)


def test_a_chart_keeps_its_element_when_its_figure_changes(open_page) -> None:
    r"""The point of the component: RoPE's d changes every figure, and every chart stays the same element.

    ``st.plotly_chart`` would give each changed figure a new element id, and the browser would rebuild the plot.
    """
    at = open_page("pages/6_RoPE.py", lang="en")
    before = [el.proto for el in at.main.get("bidi_component")]
    next(s for s in at.slider if s.label == t("rope.dim", "en")).set_value(130).run()
    after = [el.proto for el in at.main.get("bidi_component")]
    assert [p.id for p in after] == [p.id for p in before]
    changed = [a.id for a, b in zip(after, before, strict=True) if a.bytes != b.bytes]
    assert len(before) == 12 and len(changed) >= 10, changed  # all but the toy periods and the 2-D patch grid follow d
    assert all(json.loads(p.bytes)["figure"]["data"] for p in after)


def test_every_page_but_an_embed_starts_loading_plotly_first_thing(open_page) -> None:
    home = open_page(None, lang="en")
    (preload,) = [el.proto for el in home.sidebar.get("bidi_component")]
    assert preload.component_name == NAME and not preload.bytes  # no figure: load plotly.js, draw nothing
    embedded = open_page("pages/6_RoPE.py", lang="en", context={"is_embedded": True})
    assert all(el.proto.bytes for el in embedded.get("bidi_component"))


#: What a title may hold that JSON or HTML treats specially, and text that looks like an escape.
TRICKY = ["a", "/", "\\", "<", ">", "&", '"', "u002f", "\u2028", "\u2029", "位", "\n"]


@settings(max_examples=300, deadline=None)
@given(hst.lists(hst.sampled_from(TRICKY), max_size=30).map("".join))
def test_a_chart_sends_plotlys_json_value_without_escaped_slashes(text: str) -> None:
    r"""Issue 46: the chart's bytes are orjson's, not ``plotly.io.to_json``'s: the same JSON value for any title, but
    "/" written plainly (base64 is full of them) while "<", ">" and the line separators stay escaped, as plotly
    escapes them, so that no ``</script>`` can form."""
    import numpy as np
    import plotly.io as pio

    from posenc_ui.figures.built import BuiltFigure

    z = np.sin(np.outer(np.arange(128), np.arange(128)) / 7).astype(np.float32)
    spec = {"data": [{"type": "heatmap", "z": z, "x": np.arange(128)}], "layout": {"title": {"text": text}}}
    sent = figure_json(BuiltFigure(spec))
    plotly_json = pio.to_json(BuiltFigure(spec).to_dict(), validate=False).encode()
    assert json.loads(sent) == json.loads(plotly_json)
    assert sent.count(b"\\u002f") == text.count("\\u002f")  # none but a backslash of the title's own, then "u002f"
    assert b"<" not in sent and b">" not in sent and "\u2028".encode() not in sent and "\u2029".encode() not in sent
    assert len(sent) < 0.8 * len(plotly_json)  # the heatmap's base64 had a quarter of its bytes in escapes


#: Bytes that make near misses of a line separator (E2 80 A8 / A9 in UTF-8): its first byte alone, its first two, and
#: "…" (E2 80 A6), as a figure's text has them.
NEAR_SEPARATOR = [b"\xe2", b"\x80", b"\xa8", b"\xa9", b"\xe2\x80", b"a", *(c.encode() for c in "…\u2028\u2029")]


@settings(max_examples=500, deadline=None)
@given(
    hst.lists(hst.sampled_from(NEAR_SEPARATOR), max_size=3 * _PROBES).map(b"".join),
    hst.sampled_from(["\u2028".encode(), "\u2029".encode(), b"<", b"\xe2\x80", b"a\xe2"]),
)
def test_the_quick_search_finds_what_in_finds(data: bytes, needle: bytes) -> None:
    r"""``contains`` answers as ``needle in data`` does (the oracle), also past its first probes of decoys."""
    assert contains(data, needle) == (needle in data)


def test_the_quick_search_finds_a_separator_behind_many_decoys() -> None:
    decoys = "…".encode() * (2 * _PROBES)
    assert contains(decoys + "\u2028".encode(), "\u2028".encode())  # past the probes: the rest goes to ``in``
    assert not contains(decoys, "\u2028".encode())
    assert contains(b"x" * 1000 + "\u2029".encode(), "\u2029".encode())


def test_no_figure_of_any_page_is_written_by_plotlys_json_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    r"""Issue 46: ``plotly.io.to_json`` escapes every "/" of the base64 and the app had to undo it: 5.3 ms of a large
    heatmap's 5.4. Every figure every page draws at its defaults (both languages) is written without it; this counts
    its calls, not seconds."""
    import plotly.io as pio

    from posenc_ui import memo

    calls: list[int] = []
    real = pio.to_json
    monkeypatch.setattr(pio, "to_json", lambda *a, **k: calls.append(1) or real(*a, **k))
    pio.to_json({"data": []}, validate=False)
    assert calls == [1]  # the count sees the writer
    calls.clear()
    memo.RESULTS.clear()  # every figure built now, not read back from an earlier test's memory
    memo.DEAR.clear()  # where a figure that cost 0.1 s of CPU is kept
    memo.KEPT.clear()
    drawn = 0
    for view in VIEWS:
        values = defaults(view.params)
        for build in view.figures.values():
            for lang in ("en", "zh"):
                try:
                    figure_json(build(values, lang))
                except ValueError:  # a figure the page refuses at its defaults (none should; not this test's rule)
                    continue
                drawn += 1
    assert drawn > 100 and not calls
