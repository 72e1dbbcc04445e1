r"""The frame every page calls first: page config, language, URL state, navigation and the shared panels.

A page script reads like a description of its UI::

    with start(VIEW) as page:                   # config, language, URL → widgets, navigation, notices
        page.text("intro")                      # markdown from the i18n catalogue (skipped when embedded)
        page.controls("length", "dim", "base")  # widgets built from the view's Params
        page.figure("heatmap")                  # the view's figure; errors keep the last good one
        page.explain()                          # formula beside the core source, paper, live checks
                                                # leaving: values → URL, export, share / embed box, next page

The block is the page's turn (:mod:`posenc_ui.turns`): one page script runs at a time per server process.

State rules (docs/streamlit.md): a widget is seeded once, from the URL if the URL names it (parsed,
clamped, a notice when changed), else from what this session last had on that page, else its default; after the
widgets, the values are written back to the URL. Page switches drop the query string and widget state, so each
page's encoded values are also kept in ``st.session_state[MEMORY]`` and carried by the navigation links.
"""

from __future__ import annotations

import base64
import functools
import gc
import inspect
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode

import plotly.graph_objects as go
import streamlit as st

from posenc_core import PosEncError

from . import catalog, export
from .catalog import ROOT, PageInfo
from .i18n import DEFAULT_LANG, LANGS, lang_from_locale, t
from .state import BoolParam, ChoiceParam, IntListParam, IntParam, Param, Problem, encode_all
from .turns import TURNS
from .views.base import Check, View

MEMORY = "_posenc_memory"  # {page_id: {name: encoded value}}: survives page switches
LAST_GOOD = "_posenc_last_good"  # {(page_id, figure): go.Figure} of the current page: shown when the core refuses
LANG_MEMORY = "_posenc_lang"
LANG_WIDGET = "_posenc_lang_widget"
LANG_NAMES = {"zh": "中文", "en": "English"}
# A data: URL is passed through as is; a file path is read, re-encoded and registered again on every rerun.
FAVICON = "data:image/png;base64," + base64.b64encode((ROOT / "assets" / "favicon.png").read_bytes()).decode()
PLOTLY_CONFIG = {"displaylogo": False, "scrollZoom": False, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}
EMBED_HEIGHT = 720  # px of the <iframe> snippet


_TOUCH = re.compile(r"Mobi|Android|iPhone|iPad|iPod")


def is_touch(user_agent: str) -> bool:
    r"""Whether a browser's User-Agent names a phone or tablet (where plotly's toolbar never hides)."""
    return bool(_TOUCH.search(user_agent))


def widget_key(page_id: str, name: str) -> str:
    r"""The session-state key of a page's widget (page-qualified: two pages may both have a ``length``)."""
    return f"{page_id}.{name}"


class Page:
    r"""A running page: its :class:`View`, language, embed flag, and the calls that lay it out."""

    def __init__(self, view: View, lang: str, embedded: bool) -> None:
        self.view = view
        self.lang = lang
        self.embedded = embedded
        self.touch = is_touch(st.context.headers.get("User-Agent", ""))
        self.info: PageInfo | None = catalog.BY_ID.get(view.page_id)
        self._shown: list[Check] = []
        self._drawn: dict[str, go.Figure] = {}  # name → figure drawn this rerun (the export panel offers them)
        self._values: dict[str, Any] | None = None  # see values
        # Only this page's fallbacks are ever shown: drop other pages' (~1 MB a page per session at scale).
        kept = {key: fig for key, fig in st.session_state.get(LAST_GOOD, {}).items() if key[0] == view.page_id}
        st.session_state[LAST_GOOD] = kept

    # --- text ---------------------------------------------------------------------------------------------------

    def t(self, key: str, **fmt: object) -> str:
        r"""The string ``key`` (absolute, e.g. ``"nav.home"``) in this page's language."""
        return t(key, self.lang, **fmt)

    def text(self, key: str, **fmt: object) -> None:
        r"""Markdown ``<page>.<key>``; left out in embed mode, which shows only figures and controls."""
        if not self.embedded:
            st.markdown(self.t(f"{self.view.page_id}.{key}", **fmt))

    def heading(self, key: str) -> None:
        r"""A section heading ``<page>.<key>`` (kept when embedded, as the figures' caption)."""
        st.subheader(self.t(f"{self.view.page_id}.{key}"), anchor=False)

    # --- widgets ------------------------------------------------------------------------------------------------

    @property
    def values(self) -> dict[str, Any]:
        r"""The current value of every parameter of the page, in declaration order (a copy).

        Read from the session state once and then kept up to date by :meth:`set` and the widgets: pages ask for it
        dozens of times a rerun, and every session-state read goes through several layers of Streamlit.
        """
        if self._values is None:
            self._values = {}
            for param in self.view.params:
                value = st.session_state[widget_key(self.view.page_id, param.name)]
                self._values[param.name] = tuple(value) if isinstance(value, list) else value
        return dict(self._values)

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

    def _widget(self, param: Param) -> None:
        key = widget_key(self.view.page_id, param.name)
        current = self.values
        clamped = param.clamp(current[param.name], current)  # a bound may follow a widget drawn above
        label = self.t(f"{self.view.page_id}.{param.name}")
        if clamped != current[param.name]:
            self.set(param.name, clamped)
            old, new = param.encode(current[param.name]), param.encode(clamped)
            st.caption(self.t("frame.widget_clamped", label=label, old=old, new=new))
        elif getattr(param, "hi_from", None) is not None:
            # Streamlit treats a slider whose range changed as a new widget and resets it to its minimum; the value
            # set again through the Session State API before the widget is drawn is kept (docs/streamlit.md).
            self.set(param.name, clamped)
        if isinstance(param, IntParam):
            value = st.slider(label, min_value=param.lo, max_value=param.upper(current), step=param.step, key=key)
        elif isinstance(param, BoolParam):
            value = st.toggle(label, key=key)
        elif isinstance(param, IntListParam):
            options = range(param.lo, param.upper(current) + 1)
            value = st.multiselect(label, options, key=key, max_selections=param.max_items)
        elif isinstance(param, ChoiceParam):
            fmt = self._option_label(param)
            if param.widget == "select_slider":
                value = st.select_slider(label, options=param.options, format_func=fmt, key=key)
            elif param.widget == "radio":  # long labels: a radio wraps on a phone, a segmented control does not
                value = st.radio(label, param.options, format_func=fmt, key=key, horizontal=True)
            else:
                value = st.segmented_control(label, param.options, format_func=fmt, key=key, required=True)
        else:
            raise TypeError(f"no widget for {type(param).__name__}")
        if self._values is not None:  # what the widget shows is the value from here on
            self._values[param.name] = tuple(value) if isinstance(value, list) else value

    def _option_label(self, param: ChoiceParam) -> Callable[[Any], str]:
        if isinstance(param.options[0], int | float):
            return lambda v: f"{v:,.0f}"
        prefix = param.labels or f"{self.view.page_id}.{param.name}"
        return {v: self.t(f"{prefix}.{v}") for v in param.options}.__getitem__  # no closure over the page

    # --- figures and checks ---------------------------------------------------------------------------------

    def figure(self, name: str) -> None:
        r"""Draw figure ``name`` (the download panel offers it); a :class:`PosEncError` shows its message instead.

        The core's message is already written for people (it names the argument, the value and the allowed
        range), so it is shown as is, above the last figure that could be drawn.
        """
        last_good: dict[tuple[str, str], go.Figure] = st.session_state.setdefault(LAST_GOOD, {})
        try:
            fig = self.view.figures[name](self.values, self.lang)
        except PosEncError as err:
            st.error(self.t("frame.core_refused", message=code_span(str(err), limit=400)), icon=":material/error:")
            fig = last_good.get((self.view.page_id, name))
            if fig is None:
                return
        else:
            last_good[(self.view.page_id, name)] = fig
        self._drawn[name] = fig
        config = {**PLOTLY_CONFIG, "toImageButtonOptions": {"filename": self._file_stem(name), "scale": 2}}
        if self.touch:  # a touch screen shows plotly's toolbar always, over the title; the download panel remains
            config["displayModeBar"] = False
        st.plotly_chart(fig, theme=None, config=config, key=f"fig.{self.view.page_id}.{name}")

    def figures(self, *names: str) -> None:
        r"""Several figures side by side on a wide screen, one under the other on a phone."""
        for col, name in zip(st.columns(len(names)), names, strict=True):
            with col:
                self.figure(name)

    def _file_stem(self, name: str) -> str:
        return f"posenc-{self.view.page_id}-{name}-{self.lang}"

    def _export_panel(self) -> None:
        r"""Download one figure of the page as offline HTML, PNG or SVG: pick it, pick the format, one button.

        One panel a page rather than three buttons under every figure: each element costs the server work on every
        rerun (three buttons and their row under each of eleven figures were a third of the RoPE page's elements).
        The camera in each figure's own toolbar still saves a PNG of it as shown, in the browser.
        """
        names = list(self._drawn)
        if not names:
            return
        key = f"export.{self.view.page_id}"
        with st.expander(self.t("export.title"), icon=":material/download:"):
            left, right = st.columns([3, 2])
            # Labels are plain dicts' lookups: Streamlit keeps each widget's format_func for the whole session, and a
            # closure over the page would keep every figure of every page the student has opened.
            titles = {n: plain_title(self._drawn[n]) for n in names}
            name = left.selectbox(self.t("export.figure"), names, format_func=titles.__getitem__, key=f"{key}.figure")
            fmt = right.segmented_control(
                self.t("export.format"),
                export.FORMATS,
                format_func={f: self.t(f"export.{f}") for f in export.FORMATS}.__getitem__,
                default=export.FORMATS[0],
                required=True,
                key=f"{key}.format",
            )
            st.download_button(
                self.t("export.download", format=self.t(f"export.{fmt}")),
                data=export.bytes_builder(self._drawn[name], fmt),
                file_name=f"{self._file_stem(name)}.{fmt}",
                mime=export.MIME[fmt],
                on_click="ignore",
                key=f"{key}.download",
                icon=":material/download:",
            )

    def check(self, name: str) -> Check | None:
        r"""Show the live check ``name`` (✓ when the claim holds on the numbers just drawn) and return it.

        When the core refuses the current settings there is nothing to check; the figure above says why.
        """
        try:
            check = self.view.checks[name](self.values)
        except PosEncError:
            st.caption(self.t("frame.check_skipped"))
            return None
        if check in self._shown:  # two claims that coincide for these settings are shown once
            return check
        self._shown.append(check)
        render_check(check, self.lang)
        return check

    def refusal(self, message: str | None) -> None:
        r"""A core refusal shown as the lesson it is, not as a crash; or ``<page>.served`` when the call worked."""
        if message is None:
            st.success(self.t(f"{self.view.page_id}.served", **self.values), icon=":material/check_circle:")
        else:
            # The refusal is the lesson (a learned table has no row past its end): a callout, not an alarm.
            st.info(self.t("frame.refusal", message=code_span(message, limit=400)), icon=":material/lightbulb:")

    # --- panels -------------------------------------------------------------------------------------------------

    def explain(self) -> None:
        r"""Formula beside the source of the core function that computes it, the paper, the live checks."""
        if self.embedded:
            return
        ex = self.view.explain
        st.subheader(self.t("explain.title"), anchor=False)
        left, right = st.columns(2, gap="large")
        with left:
            for formula in ex.latex:
                st.latex(formula)
            st.markdown(f"**{self.t('explain.paper')}** {ex.paper}")
            for name in ex.checks:
                self.check(name)
        with right:
            render_sources(ex.sources, self.lang)

    def finish(self) -> None:
        r"""Write the values to the URL and to the session memory; draw the export and share boxes, next-page link.

        Only values that differ from their defaults are written: a link to an untouched page is just its language,
        and a missing value is seeded with its default again (:func:`seed`).
        """
        values = self.values
        changed = [p for p in self.view.params if values[p.name] != p.clamp(p.default_in(self.lang), values)]
        encoded = encode_all(changed, values)
        st.session_state.setdefault(MEMORY, {})[self.view.page_id] = encoded
        write_url({"lang": self.lang, **encoded})
        if self.embedded:
            return
        self._export_panel()
        share_box(self.info, {"lang": self.lang, **encoded}, self.lang)
        upcoming = catalog.next_page(self.view.page_id) if self.info else None
        if upcoming is not None:
            st.page_link(
                streamlit_page(upcoming.script),
                label=self.t("nav.next", title=self.t(f"page.{upcoming.id}.title")),
                icon=":material/arrow_forward:",
                query_params=link_params(upcoming, self.lang),
            )


# --- start: language, seeding, navigation ----------------------------------------------------------------------


_heap_frozen = False


def freeze_heap() -> None:
    r"""Once per server process, after the first page's imports: hand everything alive to the GC's permanent generation.

    Modules, plotly's validators and Streamlit's runtime (some 150 000 objects that live as long as the server)
    would otherwise be traversed by every full collection: 130–220 ms each under classroom load, every session
    waiting on the GIL meanwhile (``bench/load.py``; the README's classroom section has the figures).
    """
    global _heap_frozen
    if not _heap_frozen:
        _heap_frozen = True
        gc.collect()
        gc.freeze()


@contextmanager
def start(view: View) -> Iterator[Page]:
    r"""The page's turn: open it (:func:`open_page`), let the block draw it, then :meth:`Page.finish` it.

    An exception in the block (Streamlit stopping a run for a newer one included) skips the finish, never the
    release of the turn.
    """
    with TURNS:
        page = open_page(view)
        yield page
        page.finish()


def open_page(view: View) -> Page:
    r"""Configure the page, resolve the language, seed the widgets from the URL, draw header and navigation."""
    freeze_heap()
    embedded = bool(st.context.is_embedded)
    lang = resolve_lang()
    title = t(f"page.{view.page_id}.title", lang) if view.page_id in catalog.BY_ID else t("home.title", lang)
    st.set_page_config(page_title=f"{title} · posenc", page_icon=FAVICON, layout="wide")
    problems = seed(view, lang)
    asked = st.query_params.get("lang")
    if asked is not None and asked not in LANGS:  # shown once: the URL is rewritten with the language used
        problems.insert(0, Problem("lang", asked, "invalid", lang))
    page = Page(view, lang, embedded)
    if not embedded:
        header(title, lang)
        navigation(lang)
    else:
        st.subheader(title, anchor=False)
    for problem in problems:
        st.warning(notice(problem, lang), icon=":material/link_off:")
    return page


def resolve_lang() -> str:
    r"""The language: the switch if drawn this session, else ``?lang=``, else the session's, browser's, English."""
    lang = st.session_state.get(LANG_WIDGET)
    if lang not in LANGS:  # first run of the session, or the switch's state was dropped by a page change
        lang = pick_lang(st.query_params.get("lang"), st.session_state.get(LANG_MEMORY), st.context.locale)
        st.session_state[LANG_WIDGET] = lang
    st.session_state[LANG_MEMORY] = lang
    return lang


def pick_lang(url: str | None, remembered: str | None, locale: str | None) -> str:
    r"""The first of: the URL's ``lang`` (if one we have), the session's, the browser locale's, English."""
    for candidate in (url, remembered, lang_from_locale(locale)):
        if candidate in LANGS:
            return candidate
    return DEFAULT_LANG


def seed(view: View, lang: str | None = None) -> list[Problem]:
    r"""Put a value under every widget key that has none yet; return what the URL got wrong."""
    memory: Mapping[str, str] = st.session_state.get(MEMORY, {}).get(view.page_id, {})
    url = {name: st.query_params.get_all(name) for name in st.query_params}
    state: dict[str, Any] = {}
    problems: list[Problem] = []
    for param in view.params:
        key = widget_key(view.page_id, param.name)
        if key in st.session_state:
            value = st.session_state[key]
            state[param.name] = tuple(value) if isinstance(value, list) else value
            continue
        raw = url.get(param.name) or memory.get(param.name)
        if raw is None:
            value, problem = param.clamp(param.default_in(lang), state), None
        else:
            value, problem = param.parse(raw, state)
        if problem is not None and param.name in url:
            problems.append(problem)
        state[param.name] = value
        st.session_state[key] = list(value) if isinstance(value, tuple) else value
    return problems


def code_span(text: str, *, limit: int = 80) -> str:
    r"""``text`` as one inline code span, so nothing a link or a config carries can render as markup.

    The fence is one backtick longer than the longest run inside, and one space pads each side (CommonMark strips
    exactly one), so a value holding backticks cannot close the span early. Newlines would end the paragraph and
    start a new block, so they become spaces; text past ``limit`` characters is cut.
    """
    text = " ".join(text.splitlines())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def notice(problem: Problem, lang: str) -> str:
    r"""The visible sentence for a URL value that was replaced or clamped (the raw value shown as code only)."""
    setting = code_span(f"{problem.name}={problem.raw}")
    return t(f"frame.url_{problem.kind}", lang, setting=setting, used=code_span(problem.used))


def header(title: str, lang: str) -> None:
    r"""Title on the left, the language switch on the right (on a phone they stack, switch first visible)."""
    left, right = st.columns([5, 1], vertical_alignment="bottom")
    left.title(title, anchor=False)
    right.segmented_control(
        t("frame.language", lang),
        LANGS,
        format_func=LANG_NAMES.__getitem__,
        key=LANG_WIDGET,
        required=True,
        label_visibility="collapsed",
    )


def link_params(page: PageInfo, lang: str) -> dict[str, str]:
    r"""The query string a link to ``page`` carries: the language and what the session last had there."""
    return {"lang": lang, **st.session_state.get(MEMORY, {}).get(page.id, {})}


@functools.cache
def streamlit_page(script: str) -> st.Page:
    r"""The ``st.Page`` of a script, made once per process (the first time a page draws its links).

    ``st.page_link("pages/x.py")`` resolves the path on the disk again for every link on every rerun, a dozen
    ``realpath`` calls whose system calls each hand the GIL over under load; a ``Page`` object carries its hash.
    The home script is the default page (URL ``/``), as Streamlit registers it.
    """
    return st.Page(script, default=script == catalog.HOME_SCRIPT)


def navigation(lang: str) -> None:
    r"""The translated reading path in the sidebar; pages not built yet are listed as "coming soon"."""
    with st.sidebar:
        st.page_link(
            streamlit_page(catalog.HOME_SCRIPT),
            label=t("nav.home", lang),
            icon=":material/home:",
            query_params={"lang": lang},
        )
        for page in catalog.PAGES:
            label = f"{page.number}. {t(f'page.{page.id}.title', lang)}"
            if page.built:
                st.page_link(streamlit_page(page.script), label=label, query_params=link_params(page, lang))
            else:
                st.caption(f"{label} · {t('nav.soon', lang)}")


def reading_path(lang: str, *, columns: int = 3) -> None:
    r"""One card per page of the reading path: number, title, one-line promise, preview, link or "coming soon".

    Laid out row by row, so cards of a row line up and a phone (where columns stack) reads them in order.
    """
    for start in range(0, len(catalog.PAGES), columns):
        for col, info in zip(st.columns(columns), catalog.PAGES[start : start + columns], strict=False):
            with col.container(border=True, height="stretch"):
                page_card(info, lang)


def page_card(info: PageInfo, lang: str) -> None:
    r"""The contents of one reading-path card."""
    st.markdown(f"**{info.number} · {t(f'page.{info.id}.title', lang)}**")
    st.caption(t(f"page.{info.id}.promise", lang))
    preview = catalog.preview(info)
    if preview is not None:
        st.image(str(preview), width="stretch")
    if info.built:
        st.page_link(streamlit_page(info.script), label=t("home.open", lang), icon=":material/arrow_forward:",
                     query_params=link_params(info, lang))  # fmt: skip
    else:
        st.badge(t("nav.soon", lang), icon=":material/schedule:", color="gray")


def write_url(params: Mapping[str, str]) -> None:
    r"""Make the address bar reproduce the view (only when it changed, to spare the browser a message)."""
    if st.query_params.to_dict() != dict(params):
        st.query_params.from_dict(params)


def share_link(info: PageInfo | None, params: Mapping[str, str], *, embed: bool = False) -> str:
    r"""An absolute link to this page in this state (``embed=True`` adds Streamlit's embed flag)."""
    base = st.context.url or f"http://localhost:8501/{info.url_path if info else ''}"
    query = dict(params, embed="true") if embed else dict(params)
    return f"{base}?{urlencode(query)}"


def share_box(info: PageInfo | None, params: Mapping[str, str], lang: str) -> None:
    r"""The link and an ``<iframe>`` snippet for the current state, each with Streamlit's copy button."""
    with st.expander(t("share.title", lang), icon=":material/share:"):
        st.caption(t("share.link", lang))
        st.code(share_link(info, params), language=None, wrap_lines=True)
        st.caption(t("share.embed", lang))
        src = share_link(info, params, embed=True)
        snippet = f'<iframe src="{src}" width="100%" height="{EMBED_HEIGHT}" style="border:0" loading="lazy"></iframe>'
        st.code(snippet, language="html", wrap_lines=True)


def render_check(check: Check, lang: str) -> None:
    r"""One live check as a coloured line: the claim, the residual just measured, ✓ or ✗."""
    words = {name: t(key, lang) for name, key in check.fmt_keys.items()}
    text = t(check.key, lang, residual=f"{check.residual:.1e}", **check.fmt, **words)
    (st.success if check.passed else st.error)(f"{'✓' if check.passed else '✗'} {text}")


def plain_title(fig: go.Figure) -> str:
    r"""A figure's title as plain text (plotly titles may carry ``<br>``, ``<sup>`` and the like).

    Read from the figure's dict, which is what the page sends anyway: ``fig.layout`` would build the whole plotly
    object tree of a :class:`~posenc_ui.figures.built.BuiltFigure` just for its title.
    """
    title = fig.to_dict().get("layout", {}).get("title", "")
    text = (title.get("text") if isinstance(title, dict) else title) or ""
    return " ".join(re.sub(r"<[^>]*>", " ", text).split())


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
