r"""One figure at a time: presenter mode (``?present=true``) and the single-figure embed (``?embed=true&figure=…``).

Design. Both modes show one of the view's figures with exactly the controls its recipe reads (``recipe.uses``, in
the order of the view's parameters, so a bound that follows another widget is drawn after it). Everything a page
script lays out around its figures — text, headings, checks, the explain panel, anything a page draws itself (the
lab's tables) — is the lesson *around* the figures, not the figure. So the frame draws the chosen figure itself, from
the :class:`~posenc_ui.lesson.View`, and then stops the run before the page's block begins
(:func:`~.turn.start` calls :func:`draw_single` and ``st.stop()`` before it yields). No page carries code for either
mode, a page cannot forget to support them, and every figure of a view is reachable whether or not the page draws it
unconditionally.

- **Presenter mode** is for a projector at 1280×720: larger type (CSS injected only in this mode, and every text of
  the figure itself enlarged by :func:`~posenc_ui.figures.style.enlarged`), the page's key
  takeaway on top, the sidebar collapsed, ◀ / ▶ buttons with "3 / 7" that step through ``view.figures`` in order
  and stop at the ends (the last figure offers the next page, still in presenter mode). The ← and → keys press the
  same buttons (Streamlit's own button shortcuts: no script of ours in the browser). The step is kept in the URL as
  ``figure=<name>``, so a reload shows the same figure.
- **Single-figure embed** shows the figure and its controls and nothing else, sized for a 720 px ``<iframe>``. An
  unknown name falls back to the whole embedded page with a notice in the reader's language (:func:`asked_figure`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from ..i18n import t
from ..lesson import View
from ..refusals import code_span

if TYPE_CHECKING:
    from .page import Page

FIGURE = "figure"  # the query key naming the figure (the presenter's step, or the one figure embedded)
PRESENT = "present"  # ?present=true
STEP = "_posenc_present_step"  # (page_id, figure) set by ◀ / ▶ before the rerun that shows it
PRESENT_HEIGHT = 470  # px: a 720 px projector keeps room for the title row, the takeaway and the margins
EMBED_HEIGHT = 600  # px with no controls; a row of controls above takes ~95 px of a 720 px <iframe>
CONTROL_ROW = 95  # px
PRESENT_FONT = 18  # px: the figure's default (13 px) is too small on a projector; every size it sets grows alike
TRUE = ("true", "1", "yes", "on")

#: Presenter-only styles: larger type for a projector, less empty space above the title row, and no focus frame
#: around the whole slide once the keys have stepped (Streamlit draws it as an inset shadow on ``stMain::before``).
PRESENT_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3rem; padding-bottom: 0.5rem; max-width: 100%; }
[data-testid="stHeader"] { background: transparent; pointer-events: none; }
[data-testid="stHeader"] * { pointer-events: auto; }
[data-testid="stMain"] p, [data-testid="stMain"] li { font-size: 1.3rem; line-height: 1.45; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] p { font-size: 1.1rem; }
[data-testid="stMain"] h1 { font-size: 2.2rem; padding: 0; }
.st-key-present_count p { font-size: 1.4rem; font-weight: 600; text-align: center; }
[data-testid="stMain"]:focus-visible, [data-testid="stMainBlockContainer"]:focus-visible { outline: none; }
[data-testid="stMain"]::before { box-shadow: none !important; }
</style>"""


def presenting() -> bool:
    r"""Whether the URL asks for presenter mode (``?present=true``)."""
    return str(st.query_params.get(PRESENT, "")).strip().lower() in TRUE


def asked_figure(view: View, embedded: bool) -> tuple[str | None, str | None]:
    r"""``(figure, unknown)``: the figure a single-figure embed shows, or the name the URL gave that the page lacks.

    Only when embedded and the URL says ``figure=``: a known name → ``(name, None)``; an unknown one → ``(None,
    raw)``, and the whole embedded page is shown under a notice (:func:`unknown_figure_notice`).
    """
    raw = st.query_params.get(FIGURE)
    if not embedded or raw is None or not view.figures:
        return None, None
    return (raw, None) if raw in view.figures else (None, raw)


def unknown_figure_notice(raw: str, names: list[str], lang: str) -> str:
    r"""The sentence for ``figure=<raw>`` naming no figure of the page (the raw value shown as code only)."""
    return t("present.unknown_figure", lang, figure=code_span(f"figure={raw}"))


def figure_controls(view: View, name: str) -> list[str]:
    r"""The parameters figure ``name`` reads (its recipe's ``uses``; every parameter if it declares none), in the
    order of the view's parameters."""
    uses = getattr(view.figures[name], "uses", None)
    return [p.name for p in view.params if uses is None or p.name in uses]


def current_step(page: Page) -> str:
    r"""The presenter's figure: the one ◀ / ▶ just chose, else ``figure=`` from the URL, else the first."""
    names = list(page.view.figures)
    chosen = st.session_state.pop(STEP, None)
    if chosen is not None and chosen[0] == page.view.page_id and chosen[1] in names:
        return chosen[1]
    raw = st.query_params.get(FIGURE)
    return raw if raw in names else names[0]


def _go_to(page_id: str, name: str) -> None:
    st.session_state[STEP] = (page_id, name)


def step_buttons(page: Page, name: str) -> None:
    r"""◀, "3 / 7", ▶: the previous and next figure of the view (disabled at the ends)."""
    names = list(page.view.figures)
    index = names.index(name)
    prev_col, count_col, next_col = st.columns([1, 1.2, 1], vertical_alignment="center")
    with prev_col:
        target = names[max(index - 1, 0)]
        st.button(
            "◀",
            key="present_prev",
            help=page.t("present.prev"),
            disabled=index == 0,
            shortcut="Left",
            on_click=_go_to,
            args=(page.view.page_id, target),
            width="stretch",
        )
    with count_col.container(key="present_count"):
        st.markdown(f"{index + 1} / {len(names)}")
    with next_col:
        target = names[min(index + 1, len(names) - 1)]
        st.button(
            "▶",
            key="present_next",
            help=page.t("present.next"),
            disabled=index == len(names) - 1,
            shortcut="Right",
            on_click=_go_to,
            args=(page.view.page_id, target),
            width="stretch",
        )


def draw_controls(page: Page, names: list[str]) -> None:
    r"""The widgets of ``names``, one under the other (a pasted config gets a shorter box)."""
    for name in names:
        if getattr(page.view.param(name), "widget", None) == "text_area":
            page.paste_box(name, height=160)
        else:
            page.controls(name)


def present(page: Page, title: str, takeaway: Callable[[], None]) -> str:
    r"""Presenter mode: title row with the step buttons, the key takeaway, then the figure beside its controls."""
    st.html(PRESENT_CSS)
    name = current_step(page)
    left, right = st.columns([5, 2], vertical_alignment="center")
    left.title(title, anchor=False)
    with right:
        step_buttons(page, name)
    takeaway()
    controls = figure_controls(page.view, name)
    if controls:
        side, main = st.columns([1, 3], gap="medium")
        # many controls scroll beside the figure, which never moves; a few take only their own height, so that a
        # phone, where the columns stack, shows no blank band of the fixed height under one slider
        rows = sum(2 if getattr(page.view.param(n), "widget", None) == "text_area" else 1 for n in controls)
        height = PRESENT_HEIGHT if CONTROL_ROW * rows > PRESENT_HEIGHT else "content"
        with side.container(height=height, border=False):
            draw_controls(page, controls)
    else:
        main = st.container()
    with main:
        page.figure(name, height=PRESENT_HEIGHT, font=PRESENT_FONT, wide=True)
    return name


def embed_figure(page: Page, name: str) -> None:
    r"""Single-figure embed: the figure's controls (three a row) above the figure, nothing else."""
    controls = figure_controls(page.view, name)
    texts = [n for n in controls if getattr(page.view.param(n), "widget", None) == "text_area"]
    draw_controls(page, texts)
    others = [n for n in controls if n not in texts]
    for start in range(0, len(others), 3):
        page.controls(*others[start : start + 3], columns=3)
    rows = 2 * len(texts) + -(-len(others) // 3)  # a pasted-config box is about two rows high
    page.figure(name, height=max(EMBED_HEIGHT - CONTROL_ROW * rows, 320), wide=True)
