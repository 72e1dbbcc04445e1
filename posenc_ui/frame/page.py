r"""The page API: what a page script calls to lay itself out (text, widgets, figures, checks, panels)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from typing import Any, TypeVar

import plotly.graph_objects as go
import streamlit as st

from posenc_core import PosEncError

from .. import catalog
from ..catalog import PageEntry
from ..figures.style import resized
from ..i18n import t
from ..lesson import Check, View
from ..refusals import refusal_text
from ..state import ChoiceParam, FollowingChoiceParam, Param, encode_all
from ..turns import TURNS
from .chart import plotly_chart
from .navigation import next_link, share_box
from .panels import explain_panel, export_panel, plain_title, render_checks
from .widgets import (
    draw_text_box,
    draw_widget,
    following_label,
    option_label,
    remember,
    seed,
    widget_key,
    write_url,
)

SECTIONS = "_posenc_sections"  # the last full run's section map (Page.section_map): what each section may rerun alone
LAST_GOOD = "_posenc_last_good"  # {(page_id, figure): go.Figure} of the current page: shown when the core refuses
PLOTLY_CONFIG = {"displaylogo": False, "scrollZoom": False, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}

R = TypeVar("R")

_TOUCH = re.compile(r"Mobi|Android|iPhone|iPad|iPod")


def is_touch(user_agent: str) -> bool:
    r"""Whether a browser's User-Agent names a phone or tablet (where plotly's toolbar never hides)."""
    return bool(_TOUCH.search(user_agent))


class Page:
    r"""A running page: its :class:`View`, language, embed flag, and the calls that lay it out."""

    def __init__(self, view: View, lang: str, embedded: bool) -> None:
        self.view = view
        self.lang = lang
        self.embedded = embedded
        self.touch = is_touch(st.context.headers.get("User-Agent", ""))
        self.entry: PageEntry | None = catalog.BY_ID.get(view.page_id)  # None on the home page
        self._shown: list[tuple[Check, str | None]] = []  # each check shown (once a page) and the section it is in
        self._drawn: dict[str, go.Figure] = {}  # name → figure drawn this rerun (the export panel offers them)
        self.after_first_figure: Callable[[], None] | None = None  # drawn once, under the page's first figure
        self._fired: tuple[str | None, Callable[[], None]] | None = None  # where that happened, and what was drawn
        # Sections (see section): where each widget was drawn and which parameters each part of the page read.
        self._section: str | None = None  # the section being drawn; None: the page's own flow
        self._parent: dict[str, str | None] = {}  # section → the section it is drawn in (None: the page's own flow)
        self._placed: dict[str, str | None] = {}  # parameter → the section its widget was drawn in
        self._read: dict[str | None, set[str]] = {None: set()}  # section (None: outside all) → parameters it read
        self._finished = False  # the page was drawn to its end: a section drawn now is a section's rerun
        self._values: dict[str, Any] | None = None  # see values
        self._instead: dict[str, Any] = {}  # see reads_instead
        self.single: str | None = None  # the one figure the frame drew (presenter mode, single-figure embed)
        self.url_extra: dict[str, str] = {}  # what the URL keeps besides the values: present=true, figure=<name>
        # Only this page's fallbacks are ever shown: drop other pages' (~1 MB a page per session at scale).
        kept = {key: fig for key, fig in st.session_state.get(LAST_GOOD, {}).items() if key[0] == view.page_id}
        st.session_state[LAST_GOOD] = kept

    # --- text ---------------------------------------------------------------------------------------------------

    def t(self, key: str, **fmt: object) -> str:
        r"""The string ``key`` (absolute, e.g. ``"nav.home"``) in this page's language."""
        return t(key, self.lang, **fmt)

    def text(self, *keys: str, **fmt: object) -> None:
        r"""Markdown ``<page>.<key>``, or several paragraphs in one element; left out in embed mode, which shows only
        figures and controls.

        One element for consecutive paragraphs: every element costs the server and the browser work on each rerun
        (docs/streamlit.md). ``fmt`` fills the placeholders of a single key only, since the other strings' braces
        (LaTeX's among them) would be read as placeholders.
        """
        if len(keys) > 1 and fmt:
            raise TypeError(f"text{keys}: placeholders are filled for one key at a time")
        if not self.embedded:
            st.markdown("\n\n".join(self.t(f"{self.view.page_id}.{key}", **fmt) for key in keys))

    def heading(self, key: str) -> None:
        r"""A section heading ``<page>.<key>`` (kept when embedded, as the figures' caption)."""
        st.subheader(self.t(f"{self.view.page_id}.{key}"), anchor=False)

    # --- widgets ------------------------------------------------------------------------------------------------

    @property
    def values(self) -> dict[str, Any]:
        r"""The current value of every parameter of the page, in declaration order (a copy).

        What a page script does with them may depend on any of them: outside a section, every parameter counts as
        read by the page itself, so no section reruns alone (:meth:`section`). Inside one, they count as read there.
        """
        self._reads(p.name for p in self.view.params)
        return self._current()

    def ask(self, recipe: Callable[..., R], *rest: Any) -> R:
        r"""``recipe(values, *rest)``, counting as read here only the parameters it declares (``recipe.uses``,
        :func:`~posenc_ui.lesson.reads`); a recipe that declares none reads them all, as :attr:`values` does."""
        self._reads(getattr(recipe, "uses", [p.name for p in self.view.params]))
        return recipe(self._current(), *rest)

    def _current(self) -> dict[str, Any]:
        r"""The values, read from the session state once and then kept up to date by :meth:`set` and the widgets:
        the frame asks for them dozens of times a rerun, and every session-state read goes through several layers
        of Streamlit."""
        if self._values is None:
            self._values = {}
            for param in self.view.params:
                value = st.session_state[widget_key(self.view.page_id, param.name)]
                self._values[param.name] = tuple(value) if isinstance(value, list) else value
            self._values.update(self._instead)
        return dict(self._values)

    def reads_instead(self, name: str, value: Any) -> None:
        r"""From here on the figures and checks read ``value`` for parameter ``name``, while its widget, the link and
        the session memory keep what the reader wrote (a pasted text the view refuses: the figures go on with the
        last text it accepted)."""
        self._instead[name] = value
        self._values = None

    def set(self, name: str, value: Any) -> None:
        r"""Give parameter ``name`` a new value before its widget is drawn (not after: Streamlit forbids that)."""
        st.session_state[widget_key(self.view.page_id, name)] = list(value) if isinstance(value, tuple) else value
        self._values = None

    def controls(self, *names: str, columns: int | None = None) -> None:
        r"""The widgets of ``names``, side by side (columns stack on a phone)."""
        if len(names) == 1 and columns is None:  # full width either way; columns would cost two more elements
            self._widget(self.view.param(names[0]))
            return
        cols = st.columns(columns or len(names))
        for i, name in enumerate(names):
            with cols[i % len(cols)]:
                self._widget(self.view.param(name))

    def paste_box(self, name: str, *, height: int = 260) -> None:
        r"""A text box for pasted text (e.g. a model's ``config.json``), full width.

        It keeps its value like every widget (seeded from the URL or this session, written back to the link). What
        the view makes of the text, refusals included, shows in the figures drawn from it, in the reader's language.
        """
        key = widget_key(self.view.page_id, name)
        label = self.t(f"{self.view.page_id}.{name}")
        self._placed[name] = self._section
        value = draw_text_box(label, key, height=height)
        self._shows(name, value)

    def _widget(self, param: Param) -> None:
        key = widget_key(self.view.page_id, param.name)
        current = self._current()
        self._placed[param.name] = self._section
        if getattr(param, "hi_from", None) is not None:
            self._reads([param.hi_from])
        self._reads(list(getattr(param, "follows", ())))
        clamped = param.clamp(current[param.name], current)  # a bound may follow a widget drawn above
        label = self.t(f"{self.view.page_id}.{param.name}")
        if clamped != current[param.name]:
            self.set(param.name, clamped)
            old, new = param.encode(current[param.name]), param.encode(clamped)
            st.caption(self.t("frame.widget_clamped", label=label, old=old, new=new))
        elif getattr(param, "hi_from", None) is not None or isinstance(param, FollowingChoiceParam):
            # Streamlit treats a slider whose range changed (a select box whose options changed) as a new widget and
            # resets it to its first value; the value set again through the Session State API before the widget is
            # drawn is kept (docs/streamlit.md).
            self.set(param.name, clamped)
        if isinstance(param, ChoiceParam):
            fmt = option_label(param, self.view.page_id, self.lang)
        elif isinstance(param, FollowingChoiceParam):
            fmt = following_label(param, current, self.lang)
        else:
            fmt = str
        self._shows(param.name, draw_widget(param, label, key, current, fmt))

    def _shows(self, name: str, value: Any) -> None:
        r"""What a widget just drawn shows is the parameter's value from here on."""
        if self._values is not None:
            self._values[name] = tuple(value) if isinstance(value, list) else value

    # --- figures and checks ---------------------------------------------------------------------------------

    def figure(self, name: str, *, height: int | None = None, font: int | None = None, wide: bool = False) -> None:
        r"""Draw figure ``name`` (the download panel offers it); a :class:`PosEncError` shows its message instead.

        The refusal names the argument, the value and the allowed range, in the reader's language
        (:func:`~.refusals.refusal_text`), above the last figure that could be drawn. ``height`` (px) draws a copy
        that tall, ``font`` (px) its default font size, and ``wide`` the view's layout of it for a wide, short canvas
        where it has one (presenter mode, single-figure embed).
        """
        self._draw_figure(name, height, font, wide)
        self._after_figure()

    def _after_figure(self) -> None:
        hook, self.after_first_figure = self.after_first_figure, None
        if hook is not None:
            self._fired = (self._section, hook)  # a rerun of that section draws it again
            hook()

    def _draw_figure(self, name: str, height: int | None, font: int | None, wide: bool = False) -> None:
        last_good: dict[tuple[str, str], go.Figure] = st.session_state.setdefault(LAST_GOOD, {})
        recipe = self.view.wide.get(name, self.view.figures[name]) if wide else self.view.figures[name]
        try:
            fig = self.ask(recipe, self.lang)
        except PosEncError as err:
            st.error(self.t("frame.core_refused", message=refusal_text(err, self.lang)), icon=":material/error:")
            fig = last_good.get((self.view.page_id, name))
            if fig is None:
                return
        else:
            last_good[(self.view.page_id, name)] = fig
        self._drawn[name] = fig
        config = {**PLOTLY_CONFIG, "toImageButtonOptions": {"filename": self._file_stem(name), "scale": 2}}
        if self.touch:  # a touch screen shows plotly's toolbar always, over the title; the download panel remains
            config["displayModeBar"] = False
        shown = fig if height is None else resized(fig, height, font)
        plotly_chart(shown, config=config, key=f"fig.{self.view.page_id}.{name}")

    def figures(self, *names: str) -> None:
        r"""Several figures side by side on a wide screen, one under the other on a phone."""
        for col, name in zip(st.columns(len(names)), names, strict=True):
            with col:
                self._draw_figure(name, None, None)
        self._after_figure()  # under the row, not inside its first column

    def _file_stem(self, name: str) -> str:
        return f"posenc-{self.view.page_id}-{name}-{self.lang}"

    def check(self, name: str) -> Check | None:
        r"""Show the live check ``name`` (✓ when the claim holds on the numbers just drawn) and return it.

        When the core refuses the current settings there is nothing to check; the figure above says why.
        """
        return self.checks(name)[0]

    def checks(self, *names: str) -> list[Check | None]:
        r"""Show consecutive live checks, one box for each run of them that holds (or fails) alike; return them.

        A check the core refuses to compute shows why it was skipped in its place, as :meth:`check` does.
        """
        results: list[Check | None] = []
        run: list[Check] = []
        for name in names:
            try:
                check = self.ask(self.view.checks[name])
            except PosEncError:
                render_checks(run, self.lang)
                run = []
                st.caption(self.t("frame.check_skipped"))
                results.append(None)
                continue
            results.append(check)
            if any(check == shown for shown, _ in self._shown):  # two claims that coincide here are shown once
                continue
            self._shown.append((check, self._section))
            if run and run[-1].passed != check.passed:
                render_checks(run, self.lang)
                run = []
            run.append(check)
        render_checks(run, self.lang)
        return results

    def refusal(self, err: PosEncError | None) -> None:
        r"""A core refusal shown as the lesson it is, not as a crash; or ``<page>.served`` when the call worked."""
        if err is None:
            st.success(self.t(f"{self.view.page_id}.served", **self._current()), icon=":material/check_circle:")
        else:
            # The refusal is the lesson (a learned table has no row past its end): a callout, not an alarm.
            st.info(self.t("frame.refusal", message=refusal_text(err, self.lang)), icon=":material/lightbulb:")

    # --- sections -----------------------------------------------------------------------------------------------

    def section(self, heading: str | None = None) -> Callable[[Callable[[], None]], None]:
        r"""Draw the decorated function now, under the heading ``<page>.<heading>``, as a section that reruns alone::

            @page.section("h_clocks")
            def clocks() -> None:
                page.controls("pairs")
                page.figure("clocks")

        Moving a widget drawn in a section reruns only the section (a Streamlit fragment): the server draws, and the
        browser receives and redraws, its elements rather than the whole page's. That is right only while nothing
        outside the section reads the widget's parameter. Each such rerun checks this against what the page's last
        full run read, and reruns the whole page when it does not hold (an open export or share panel carries every
        value). ``tests/app/test_sections.py`` keeps every section's widgets its own at the defaults.

        Sections nest. A page's body can be a section around its own sections: a slider that the whole body reads
        then reruns the body, and the header, sidebar and panels around it stay as they are. A section drawn inside
        another reruns with it; moved alone, it reruns alone, as long as nothing outside it reads its widgets (its
        enclosing section included).
        """

        def draw(body: Callable[[], None]) -> None:
            if heading is not None:
                self.heading(heading)
            name = heading or body.__name__

            def section_run() -> None:  # a fragment is told apart by where it is drawn, not by this name
                self._run_section(name, body)

            st.fragment(section_run)()

        return draw

    def _run_section(self, name: str, body: Callable[[], None]) -> None:
        outer = self._section
        again = self._finished  # the page was drawn to its end before: a rerun of this section or of one around it
        alone = again and outer is None  # this section's own rerun, not its drawing inside an enclosing one
        with TURNS if alone else nullcontext():  # a full run, or the enclosing section's, holds the turn already
            if alone:
                if not self.runs_alone(name):
                    st.rerun(scope="app")
                # As a full run does (open_page): Streamlit drops the state of a widget that a section's rerun no
                # longer draws (the lab's lag once another task is chosen), and the next rerun would find no value.
                seed(self.view, self.lang)
                self._values = None  # a widget of the section has moved
            if again:  # forget what this section read and showed last time: it is about to do it again
                self._read[name] = set()
                self._shown = [(check, where) for check, where in self._shown if where != name]
                if self._fired is not None and self._fired[0] == name:
                    self.after_first_figure = self._fired[1]
            self._parent[name] = outer
            self._section = name
            try:
                body()
            finally:
                self._section = outer
            if alone:
                self._store_state()

    def _reads(self, names: Iterable[str]) -> None:
        self._read.setdefault(self._section, set()).update(names)

    def runs_alone(self, name: str) -> bool:
        r"""Whether nothing outside section ``name`` read a parameter whose widget the section draws."""
        return not self._read_elsewhere(name)

    def _read_elsewhere(self, name: str) -> set[str]:
        r"""The parameters whose widgets section ``name`` draws that something outside the section read (a section
        drawn inside it is inside it; the section around it is not)."""
        own = {param for param, where in self._placed.items() if where == name}
        return {param for where, read in self._read.items() if not self._within(where, name) for param in own & read}

    def _within(self, where: str | None, name: str) -> bool:
        r"""Whether section ``where`` (None: the page's own flow) is section ``name`` or is drawn inside it."""
        while where is not None:
            if where == name:
                return True
            where = self._parent.get(where)
        return False

    def section_map(self) -> dict[str, dict[str, list[str]]]:
        r"""Each section's widgets, and those of them that something outside the section read (the last full run's
        findings: a section with any of the latter reruns the whole page)."""
        return {
            name: {
                "widgets": sorted(p for p, where in self._placed.items() if where == name),
                "read_elsewhere": sorted(self._read_elsewhere(name)),
            }
            for name in self._parent  # every section drawn, in page order (one may read nothing itself)
        }

    # --- panels -------------------------------------------------------------------------------------------------

    def explain(self) -> None:
        r"""Formula beside the source of the core function that computes it, and the paper (folded)."""
        if not self.embedded:
            explain_panel(self.view, self.lang)

    def _store_state(self) -> dict[str, str]:
        r"""Write the values to the URL and to the session memory; return them encoded.

        Only values that differ from their defaults are written: a link to an untouched page is just its language,
        and a missing value is seeded with its default again (:func:`~.widgets.seed`).
        """
        values = self._current()
        for name in self._instead:  # what the reader wrote, not what the figures read instead
            values[name] = st.session_state[widget_key(self.view.page_id, name)]
        changed = [p for p in self.view.params if values[p.name] != p.clamp(p.default_in(self.lang), values)]
        encoded = encode_all(changed, values)
        remember(self.view.page_id, encoded)
        write_url({"lang": self.lang, **self.url_extra, **encoded})
        return encoded

    def finish(self) -> None:
        r"""Write the values to the URL and to the session memory; draw the export and share boxes, next-page link."""
        self._after_figure()  # a page that drew no figure still shows what waited for one
        encoded = self._store_state()
        if not self.embedded and self.single is None:
            drawn = self._drawn

            def titles() -> dict[str, str]:
                return {n: plain_title(drawn[n]) if n in drawn else n for n in self.view.figures}

            opened = export_panel(self.view, self._current(), self._drawn, self.lang, self._file_stem)
            opened |= share_box(self.entry, {"lang": self.lang, **encoded}, self.lang, titles)
            if opened:  # what they show follows every value
                self._reads(p.name for p in self.view.params)
            next_link(self.entry, self.lang)
        st.session_state[SECTIONS] = self.section_map()
        self._finished = True
