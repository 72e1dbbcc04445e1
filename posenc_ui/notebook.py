r"""Any figure of any page in a notebook: :func:`figure`, also ``posenc_ui.figure`` (docs/notebooks.md).

Course materials are often Jupyter or Quarto notebooks. A page's view (:mod:`posenc_ui.lessons`) already declares all a
figure needs: its recipe (``figures[name](values, lang)``), its controls (``params``) and its main slider (``sweeps``).
:func:`figure` reads a call's keyword arguments as the app reads a shared link (:meth:`posenc_ui.state.Param.parse`),
draws the recipe, and says what went wrong in the app's own words (:mod:`posenc_ui.refusals`). No Streamlit here, and
no torch: the lab's figures read its committed runs. ``posenc_ui`` loads this module on first use, so importing any
other part of the package loads no page.
"""

from __future__ import annotations

import json
import numbers
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from posenc_core import PosEncError

from .catalog import BY_ID
from .i18n import DEFAULT_LANG, LANGS, t
from .lesson import PageRefusal, View
from .refusals import code_span, refusal_text
from .state import ChoiceParam, Param
from .sweep import swept_figure

__all__ = ["ValueChanged", "figure"]


class ValueChanged(UserWarning):
    r"""A control's value was moved to the nearest one the control allows, as a shared link's value would be."""


def figure(
    page: str, name: str, /, *, lang: str = DEFAULT_LANG, keep_slider: bool = False, **controls: Any
) -> go.Figure:
    r"""The figure ``name`` of the page ``page``, drawn with ``controls`` (every other control at its default), in
    ``lang`` — the figure the app draws at those values.

    ``page`` is a page's id (``"rope"``: ``[p.id for p in posenc_ui.lessons.PAGES]``), ``name`` one of its figures
    (``View.figures``) and each control a keyword named as in the page's link (``dim=64``). A value is read as the
    link's text would be (:mod:`posenc_ui.state`): one outside what the control allows is moved to the nearest allowed
    value, with a :class:`ValueChanged` warning that names both; one the control cannot read at all is refused.

    ``keep_slider=True`` returns the figure with its main slider (``View.sweeps``) as plotly.js frames, computed now
    at up to 24 values, as the exported HTML keeps it; a figure that exports still comes back as it is.

    Raises :class:`~posenc_core.PosEncError` saying in ``lang`` what was wrong: an unknown language, page, figure or
    control (the message lists the allowed ones), a value the control cannot read, or what the core refused at these
    values (the sentence the page shows). Its ``code`` and ``fields`` are the refusal's; the original error is its
    ``__context__``.
    """
    said_in = lang if lang in LANGS else DEFAULT_LANG
    try:
        _one_of("lang", lang, LANGS)
        _one_of("page", page, tuple(BY_ID))
        view = BY_ID[page].view
        _one_of("figure", name, tuple(view.figures))
        values = _values(view, controls, said_in)
        drawn = swept_figure(view, name, values, lang) if keep_slider else view.figures[name](values, lang)
    except PosEncError as err:
        raise PosEncError(_plain(refusal_text(err, said_in)), code=err.code, **err.fields) from None
    return go.Figure(drawn)  # a copy: the recipes' results are shared by every later call (posenc_ui.memo)


def _values(view: View, controls: Mapping[str, Any], lang: str) -> dict[str, Any]:
    r"""Every parameter of ``view``: ``controls[name]`` read as the link's text would be, the rest at their defaults
    for ``lang``, in the view's order (a bound may follow an earlier value). A value moved to fit warns
    (:class:`ValueChanged`); a value that cannot be read, or a name the view has no control for, raises."""
    names = tuple(param.name for param in view.params)
    unknown = [name for name in controls if name not in names]
    if unknown:
        _one_of("control", ", ".join(unknown), names)
    values: dict[str, Any] = {}
    for param in view.params:
        if param.name not in controls:
            values[param.name] = param.clamp(param.default_in(lang), values)
            continue
        given = controls[param.name]
        text = _link_text(param, given)
        value, problem = param.parse(text, values)
        if problem is not None and problem.kind == "invalid":
            raise _unreadable(param, text, lang)
        rounded = isinstance(given, numbers.Real) and not isinstance(given, bool) and value != given
        if problem is not None or rounded:
            setting, used = code_span(f"{param.name}={text}"), code_span(param.encode(value))
            warnings.warn(ValueChanged(_plain(t("notebook.clamped", lang, setting=setting, used=used))), stacklevel=3)
        values[param.name] = value
    return values


def _link_text(param: Param, given: Any) -> str:
    r"""``given`` as a link would carry it: text as it is, a mapping (a model's config) as JSON, anything else as the
    control writes its value (``Param.encode``), or ``str`` where that fails (a single number for a list)."""
    if isinstance(given, str):
        return given
    if isinstance(given, Mapping):
        return json.dumps(given, ensure_ascii=False)
    try:
        return param.encode(given)
    except (TypeError, ValueError):
        return str(given)


def _one_of(what: str, value: object, allowed: Sequence[str]) -> None:
    r"""Refuse ``value`` unless it is one of ``allowed``, with the core's ``not_choice`` code (worded in both
    languages)."""
    if value not in allowed:
        options = ", ".join(allowed)
        raise PosEncError(
            f"{what} must be one of {options}; got {value!r}",
            code="not_choice",
            name=what,
            value=repr(value),
            allowed=options,
        )


def _unreadable(param: Param, text: str, lang: str) -> PosEncError:
    r"""The refusal of a value ``param`` cannot read: a choice lists its options, any other control its default."""
    if isinstance(param, ChoiceParam):
        options = ", ".join(param.encode(option) for option in param.options)
        message = f"{param.name} must be one of {options}; got {text!r}"
        return PosEncError(message, code="not_choice", name=param.name, value=repr(text), allowed=options)
    setting, default = code_span(f"{param.name}={text}"), code_span(repr(param.default_in(lang)))
    return PageRefusal("notebook.unreadable", setting=setting, default=default)


def _plain(markdown: str) -> str:
    r"""A refusal's sentence as plain text: the reader's values without their code-span fences
    (:func:`~posenc_ui.refusals.code_span`)."""
    return re.sub(r"(`+) (.*?) \1(?!`)", r"\2", markdown)
