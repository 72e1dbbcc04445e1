r"""The chart component: the plotly.js it loads is Streamlit's own, and a chart keeps its element across reruns."""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from posenc_ui.frame.chart import NAME, plotly_module
from posenc_ui.i18n import t


def test_the_module_the_charts_import_is_streamlits_plotly_bundle() -> None:
    bundle = Path(st.__file__).parent / "static" / "static" / "js" / plotly_module()
    assert b"plotly.js v4" in bundle.read_bytes()  # plotly.js's own version string, inside Streamlit's bundle


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
