r"""Shareable state: each widget is described once, as a :class:`Param`, and parsed from / written to the URL.

A ``Param`` knows its default, its bounds and how to read and write itself as a query-string value. Reading is
forgiving but never silent: a value that cannot be parsed falls back to the default, one out of range is clamped,
and either way :meth:`Param.parse` returns a :class:`Problem` that the page shows as a notice. Nothing here
imports Streamlit, so the rules are unit-tested directly (``tests/app/test_state.py``).

Bounds may follow another widget (``hi_from="dim"``: a dimension index must stay below the current ``dim``); the
frame re-clamps such values on every run, after the widget they follow.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Widget = Literal["slider", "select_slider", "segmented", "radio", "toggle", "multiselect", "selectbox"]


@dataclass(frozen=True)
class Problem:
    r"""Why a URL value was not used as given: ``kind`` is ``"invalid"`` (default used) or ``"clamped"``."""

    name: str
    raw: str
    kind: Literal["invalid", "clamped"]
    used: str


@dataclass(frozen=True)
class Param:
    r"""One widget's value: its URL key ``name``, ``default`` and the widget that shows it.

    Subclasses implement :meth:`_parse` (text → value or ``ValueError``), :meth:`clamp` and :meth:`encode`.
    """

    name: str
    default: Any

    widget: Widget = "slider"
    #: (language, default) pairs where the default depends on the reader's language (an English sentence for English
    #: readers); every other language gets ``default``.
    lang_defaults: tuple[tuple[str, Any], ...] = ()

    def default_in(self, lang: str | None) -> Any:
        r"""The default for a reader of ``lang``."""
        return dict(self.lang_defaults).get(lang, self.default)

    def parse(self, raw: str | Sequence[str], state: Mapping[str, Any]) -> tuple[Any, Problem | None]:
        r"""The value of the URL text ``raw`` (a list for repeated keys), and a :class:`Problem` if it was changed."""
        text = raw if isinstance(raw, str) else ",".join(raw)
        try:
            value = self._parse(text)
        except (ValueError, OverflowError):
            return self.clamp(self.default, state), Problem(self.name, text, "invalid", self.encode(self.default))
        clamped = self.clamp(value, state)
        if clamped != value:
            return clamped, Problem(self.name, text, "clamped", self.encode(clamped))
        return clamped, None

    def _parse(self, text: str) -> Any:
        raise NotImplementedError

    def clamp(self, value: Any, state: Mapping[str, Any]) -> Any:
        r"""``value`` moved to the nearest allowed one, given the current values of the other widgets."""
        return value

    def encode(self, value: Any) -> str:
        r"""The query-string text of ``value``."""
        return str(value)


@dataclass(frozen=True)
class IntParam(Param):
    r"""An integer on the grid lo, lo + step, … ≤ hi; ``hi_from`` caps hi at ``state[hi_from] + hi_offset``."""

    lo: int = 0
    hi: int = 1
    step: int = 1
    hi_from: str | None = None
    hi_offset: int = 0

    def _parse(self, text: str) -> int:
        number = float(text.strip())
        if not math.isfinite(number):
            raise ValueError(text)
        return round(number)

    def upper(self, state: Mapping[str, Any]) -> int:
        r"""The largest value allowed right now (it may follow another widget)."""
        if self.hi_from is None or self.hi_from not in state:
            return self.hi
        return max(self.lo, min(self.hi, int(state[self.hi_from]) + self.hi_offset))

    def clamp(self, value: Any, state: Mapping[str, Any]) -> int:
        on_grid = self.lo + round((int(value) - self.lo) / self.step) * self.step
        return max(self.lo, min(self.upper(state), on_grid))


@dataclass(frozen=True)
class ChoiceParam(Param):
    r"""One of ``options`` (strings, or numbers shown on a select slider); ``labels`` names an i18n key prefix.

    With ``labels="enc"`` option ``"rope"`` is shown as ``t("enc.rope")``; without it, numbers are formatted and
    strings looked up under ``"<page>.<name>.<option>"``.
    """

    options: tuple[Any, ...] = ()
    labels: str | None = None

    widget: Widget = "segmented"

    def _parse(self, text: str) -> Any:
        for option in self.options:
            if text.strip() == self.encode(option):
                return option
        if self._numeric():
            number = float(text)
            if not math.isfinite(number) or number <= 0:
                raise ValueError(text)
            return number
        raise ValueError(text)

    def _numeric(self) -> bool:
        return all(isinstance(o, int | float) and o > 0 for o in self.options)

    def clamp(self, value: Any, state: Mapping[str, Any]) -> Any:
        if value in self.options:
            return value
        if self._numeric() and isinstance(value, int | float) and value > 0:
            # the nearest option on a log scale (bases span 10² … 10⁶)
            return min(self.options, key=lambda o: abs(math.log(o / value)))
        return self.default

    def encode(self, value: Any) -> str:
        return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class FollowingChoiceParam(Param):
    r"""One of the options that the other widgets' current values allow, ``options_of(state)`` (a model's kinds of
    layer follow the model chosen): a value still among them is kept, one no longer among them moves to the first.

    The options are words of the data (a config's own names, shown as they are) unless ``labels`` names an i18n key
    prefix (option ``v`` then reads ``t("<labels>.<v>")``, as a :class:`ChoiceParam`'s). With no options at all (a
    config that does not parse) the value is kept until there are some again.
    """

    options_of: Callable[[Mapping[str, Any]], tuple[str, ...]] = lambda state: ()
    #: The parameters ``options_of`` reads (the frame records that the widget reads them).
    follows: tuple[str, ...] = ()
    labels: str | None = None

    widget: Widget = "selectbox"

    def _parse(self, text: str) -> str:
        return text.strip()

    def clamp(self, value: Any, state: Mapping[str, Any]) -> Any:
        options = self.options_of(state)
        return value if not options or value in options else options[0]


@dataclass(frozen=True)
class BoolParam(Param):
    r"""On / off, written ``1`` / ``0`` (``true``, ``yes``, ``on`` and their opposites are read too)."""

    widget: Widget = "toggle"

    def _parse(self, text: str) -> bool:
        word = text.strip().lower()
        if word in ("1", "true", "yes", "on"):
            return True
        if word in ("0", "false", "no", "off"):
            return False
        raise ValueError(text)

    def encode(self, value: Any) -> str:
        return "1" if value else "0"


@dataclass(frozen=True)
class IntListParam(Param):
    r"""Several distinct integers in [lo, hi] (written ``0,1,62``), at most ``max_items``, kept sorted."""

    lo: int = 0
    hi: int = 1
    hi_from: str | None = None
    hi_offset: int = 0
    max_items: int = 8

    widget: Widget = "multiselect"

    def _parse(self, text: str) -> tuple[int, ...]:
        items = [part for part in text.replace(" ", "").split(",") if part]
        return tuple(int(part) for part in items)

    def upper(self, state: Mapping[str, Any]) -> int:
        r"""The largest item allowed right now."""
        if self.hi_from is None or self.hi_from not in state:
            return self.hi
        return max(self.lo, min(self.hi, int(state[self.hi_from]) + self.hi_offset))

    def clamp(self, value: Any, state: Mapping[str, Any]) -> tuple[int, ...]:
        hi = self.upper(state)
        kept = sorted({int(v) for v in value if self.lo <= int(v) <= hi})
        return tuple(kept[: self.max_items])

    def encode(self, value: Any) -> str:
        return ",".join(str(v) for v in value)


def defaults(params: Sequence[Param], lang: str | None = None) -> dict[str, Any]:
    r"""Every parameter at its default (for ``lang``), clamped in order (a later bound may follow an earlier value)."""
    state: dict[str, Any] = {}
    for param in params:
        state[param.name] = param.clamp(param.default_in(lang), state)
    return state


def encode_all(params: Sequence[Param], values: Mapping[str, Any]) -> dict[str, str]:
    r"""The query-string dict of ``values`` (every parameter, so a link reproduces the view exactly)."""
    return {p.name: p.encode(values[p.name]) for p in params if p.name in values}
