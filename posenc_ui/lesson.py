r"""What a page is made of, without Streamlit: its parameters, figures, live checks and explain panel.

A :class:`View` maps names to pure functions of the page's current values: ``figures[name](values, lang)``
returns a ``go.Figure`` (one cached :mod:`posenc_core` call, then a builder from the lesson's ``figures.py``), and
``checks[name](values)`` returns a :class:`Check` — the page's claim measured on the numbers it just drew. The
page script only lays these out; the export command and the tests call them directly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import plotly.graph_objects as go

from posenc_core import PosEncError

from .i18n import page_words, t
from .memo import KEPT, RESULTS, memo
from .paths import PREVIEWS
from .state import Param

Values = Mapping[str, Any]
FigureFn = Callable[[Values, str], go.Figure]
R = TypeVar("R")


def uses(*names: str) -> Callable[[Callable[..., R]], Callable[..., R]]:
    r"""Cache a recipe ``fn(values, *rest)`` on the parameters it reads, so moving any other slider reuses it.

    The recipe sees only ``names`` (reading anything else is a ``KeyError``, which the tests would catch), and
    its result — a figure or a check — is shared by every session asking for the same values, within the app's
    one memory budget (:mod:`posenc_ui.memo`). A recipe that reads no parameter is kept for the process's life
    (:data:`~posenc_ui.memo.KEPT`). Results are never mutated after they are built.
    """

    def decorate(fn: Callable[..., R]) -> Callable[..., R]:
        @memo(budget=RESULTS if names else KEPT)  # reading nothing, it is the same for every reader: kept
        def cached(key: tuple[Any, ...], *rest: Any) -> R:
            return fn(dict(zip(names, key, strict=True)), *rest)

        @functools.wraps(fn)
        def recipe(values: Values, *rest: Any) -> R:
            return cached(tuple(values[name] for name in names), *rest)

        recipe.uses = names  # type: ignore[attr-defined]
        recipe.cached = True  # type: ignore[attr-defined]  # what the warm-up computes ahead (posenc_ui.serve.backend)
        return recipe

    return decorate


def reads(*names: str) -> Callable[[Callable[..., R]], Callable[..., R]]:
    r"""Record the parameters a recipe reads (``recipe.uses``, as :func:`uses` does) without caching it: for recipes
    whose result can change for the same values (the lab's, once a live run finishes). Presenter mode and the
    single-figure embed show a figure with exactly these controls."""

    def decorate(fn: Callable[..., R]) -> Callable[..., R]:
        fn.uses = names  # type: ignore[attr-defined]
        return fn

    return decorate


class PageRefusal(PosEncError):
    r"""A page's own refusal (a preset without the numbers a method needs), said in the page's words: ``key`` + fmt.

    It is a :class:`PosEncError`, so the page treats it as any refusal: the message, and the last good figure.
    """

    def __init__(self, key: str, **fmt: object) -> None:
        super().__init__(t(key, "en", **fmt))
        self.key = key
        self.fmt = fmt

    def __reduce__(self) -> tuple:
        return (_page_refusal, (self.key, self.fmt))


def _page_refusal(key: str, fmt: dict[str, object]) -> PageRefusal:
    return PageRefusal(key, **fmt)


@dataclass(frozen=True)
class Check:
    r"""A claim and its measured residual; ``expect_zero=False`` claims the residual is *large* (order matters).

    ``key`` names the i18n sentence, filled with ``residual``, ``fmt`` and the translations of ``fmt_keys``
    (placeholder → i18n key, e.g. ``{"encoding": "enc.rope"}``).
    """

    key: str
    residual: float
    expect_zero: bool = True
    tolerance: float = 1e-9
    fmt: Mapping[str, Any] = field(default_factory=dict)
    fmt_keys: Mapping[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return (self.residual <= self.tolerance) == self.expect_zero


CheckFn = Callable[[Values], Check]


@dataclass(frozen=True)
class Explain:
    r"""The explain panel: formulas (LaTeX), the core functions that compute them, the paper (the live checks sit in
    the page beside their figures, where they stay visible while the panel is folded)."""

    latex: tuple[str, ...]
    sources: tuple[Callable[..., Any], ...]
    paper: str


@dataclass(frozen=True)
class View:
    r"""One teaching page: ``page_id`` (the i18n prefix and :mod:`posenc_ui.catalog` id) and its parts.

    ``sweeps`` names, per figure, the parameter its exported file keeps as a slider (one the recipe ``uses``), and
    ``static`` says why each other figure is exported still (:mod:`posenc_ui.sweep`); together they cover
    ``figures``. ``wide`` gives a figure another recipe for a wide, short canvas (presenter mode, a single-figure
    embed): the same parameters, laid out for that shape.
    """

    page_id: str
    params: tuple[Param, ...]
    figures: Mapping[str, FigureFn]
    checks: Mapping[str, CheckFn]
    explain: Explain
    sweeps: Mapping[str, str] = field(default_factory=dict)
    static: Mapping[str, str] = field(default_factory=dict)
    wide: Mapping[str, FigureFn] = field(default_factory=dict)

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)


@dataclass(frozen=True)
class PageEntry:
    r"""One page of the reading path: its script (relative to the repo root), its view and its home-card figure."""

    script: str
    view: View
    preview: str
    #: Its figures may run a real model (torch and transformers, imported when a reader's own text first needs it; a
    #: first load takes seconds to a minute): the real-model page, whose shipped passage is answered from shipped
    #: results without the model. Tests give such a page's runs the time a load takes; a class's backend does not warm
    #: it (where the shipped results are not this installation's, warming would load the model).
    runs_model: bool = False

    @property
    def id(self) -> str:
        r"""The view's ``page_id``: i18n prefix, widget-key prefix, words and preview file names."""
        return self.view.page_id

    @functools.cached_property  # asked a dozen times a rerun
    def number(self) -> int:
        r"""The place in the reading path: the script name's prefix (``pages/3_Sinusoidal.py`` → 3)."""
        return int(Path(self.script).stem.split("_", 1)[0])

    @functools.cached_property
    def url_path(self) -> str:
        r"""The path Streamlit serves the page under: the file name without its number (``/Sinusoidal``)."""
        return Path(self.script).stem.split("_", 1)[1]

    @property
    def title_key(self) -> str:
        return f"page.{self.id}.title"

    @property
    def promise_key(self) -> str:
        r"""The one-line promise on the page's home card."""
        return f"page.{self.id}.promise"

    def words(self, lang: str) -> Path:
        r"""The file holding this page's strings in ``lang`` (its title and promise included)."""
        return page_words(self.id, lang)

    @property
    def preview_file(self) -> Path:
        r"""The home card's small, language-neutral image (``python -m posenc_ui.export --previews`` writes it)."""
        return PREVIEWS / f"{self.id}.png"
