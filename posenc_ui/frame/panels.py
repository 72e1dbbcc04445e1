r"""The panels under a page's figures: explain (formula and paper beside the core's source) and export."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from .. import export
from ..i18n import t
from ..lesson import Check, View


def folded(label: str, key: str, icon: str) -> DeltaGenerator | None:
    r"""A folded panel whose content is drawn only while it is open (opening or closing it reruns the page).

    Folded, it costs one element a rerun instead of all of its own; and what an open panel shows counts as read by
    the page, so a section whose widgets it shows reruns the whole page (:meth:`~.page.Page.section`).
    """
    box = st.expander(label, key=key, icon=icon, on_change="rerun")
    return box if box.open else None


def explain_panel(view: View, lang: str) -> None:
    r"""Formula beside the source of the core function that computes it, and the paper; folded until opened."""
    box = folded(t("explain.title", lang), f"explain.{view.page_id}", ":material/function:")
    if box is None:
        return
    explain = view.explain
    with box:
        left, right = st.columns(2, gap="large")
        with left:
            for formula in explain.latex:
                st.latex(formula)
            st.markdown(f"**{t('explain.paper', lang)}** {explain.paper}")
        with right:
            render_sources(explain.sources, lang)


def check_line(check: Check, lang: str) -> str:
    r"""One live check as a line: ✓ or ✗, the claim, the residual just measured."""
    words = {name: t(key, lang) for name, key in check.fmt_keys.items()}
    text = t(check.key, lang, residual=f"{check.residual:.1e}", **check.fmt, **words)
    return f"{'✓' if check.passed else '✗'} {text}"


def render_checks(checks: Sequence[Check], lang: str) -> None:
    r"""Live checks that all hold, or all fail, as one coloured box of one line each (nothing for none)."""
    if checks:
        # ✓ and ✗ are text, not an icon. Passing no icon at all would have Streamlit search each box's text for a
        # leading emoji: 0.09 ms a box on this non-ASCII text, twelve boxes on a move of RoPE's d.
        box = st.success if checks[0].passed else st.error
        box("\n\n".join(check_line(check, lang) for check in checks), icon="")


def source_name(fn: Callable[..., Any]) -> str:
    r"""``posenc_core.sinusoidal`` — the public name, whichever submodule defines the function."""
    package = fn.__module__.split(".")[0]
    return f"{package}.{fn.__name__}" if package == "posenc_core" else f"{fn.__module__}.{fn.__name__}"


@functools.cache
def source_text(fn: Callable[..., Any]) -> str:
    r"""The source of ``fn`` (read once: ``inspect.getsource`` re-tokenises the whole file on every call)."""
    return inspect.getsource(fn)


def render_sources(sources: Sequence[Callable[..., Any]], lang: str) -> None:
    r"""The exact source of each core function, one tab per function."""
    tabs = st.tabs([source_name(fn) for fn in sources])
    for tab, fn in zip(tabs, sources, strict=True):
        with tab:
            st.code(source_text(fn), language="python", height=360)
    st.caption(t("explain.source_note", lang))


def export_panel(
    view: View, values: Mapping[str, Any], drawn: Mapping[str, go.Figure], lang: str, file_stem: Callable[[str], str]
) -> bool:
    r"""Download one figure of the page as offline HTML, PNG or SVG: pick it, pick the format, one button.

    The HTML keeps the figure's main slider, its frames computed on click (:func:`~posenc_ui.export.download_builder`),
    so the file stays interactive with no server; PNG and SVG are the figure as drawn.

    One panel a page rather than three buttons under every figure: each element costs the server work on every
    rerun (three buttons and their row under each of eleven figures were a third of the RoPE page's elements).
    The camera in each figure's own toolbar still saves a PNG of it as shown, in the browser.
    """
    names = list(drawn)
    if not names:
        return False
    key = f"export.{view.page_id}"
    box = folded(t("export.title", lang), f"{key}.box", ":material/download:")
    if box is None:
        return False
    with box:
        left, right = st.columns([3, 2])
        # Labels are plain dicts' lookups: Streamlit keeps each widget's format_func for the whole session, and a
        # closure over the page would keep every figure of every page the student has opened.
        titles = {n: plain_title(drawn[n]) for n in names}
        name = left.selectbox(t("export.figure", lang), names, format_func=titles.__getitem__, key=f"{key}.figure")
        fmt = right.segmented_control(
            t("export.format", lang),
            export.FORMATS,
            format_func={f: t(f"export.{f}", lang) for f in export.FORMATS}.__getitem__,
            default=export.FORMATS[0],
            required=True,
            key=f"{key}.format",
        )
        st.download_button(
            t("export.download", lang, format=t(f"export.{fmt}", lang)),
            data=export.download_builder(view, name, values, lang, drawn[name], fmt),
            file_name=f"{file_stem(name)}.{fmt}",
            mime=export.MIME[fmt],
            on_click="ignore",
            key=f"{key}.download",
            icon=":material/download:",
        )
    return True


def plain_title(fig: go.Figure) -> str:
    r"""A figure's title as plain text (plotly titles may carry ``<br>``, ``<sup>`` and the like).

    Read from the figure's dict, which is what the page sends anyway: ``fig.layout`` would build the whole plotly
    object tree of a :class:`~posenc_ui.figures.built.BuiltFigure` just for its title.
    """
    title = fig.to_dict().get("layout", {}).get("title", "")
    text = (title.get("text") if isinstance(title, dict) else title) or ""
    return " ".join(re.sub(r"<[^>]*>", " ", text).split())
