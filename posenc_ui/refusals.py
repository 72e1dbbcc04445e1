r"""What the core refused, in the reader's language: a :class:`~posenc_core.PosEncError`'s code and fields, translated.

The core raises one error type whose ``code`` names the kind of problem and whose ``fields`` carry its particulars
(:data:`posenc_core.ERROR_FIELDS`). Each code has a sentence in ``assets/i18n/shared.<lang>.json`` (``error.<code>``);
an error without one (code ``"invalid"``) shows the core's own English message under a translated heading. Anything
that came from the reader (a name, a value, a pasted key) is shown as inline code (:func:`code_span`), never as markup;
the frame's notices about a link's values use it too. No Streamlit here: the app's pages and a notebook's
:func:`posenc_ui.figure` (:mod:`posenc_ui.notebook`) say a refusal with the same words.
"""

from __future__ import annotations

import numbers
import re

from posenc_core import PosEncError

from .i18n import has, t
from .lesson import PageRefusal

#: Fields whose value names a kind of thing the reader's language has a word for (``<prefix>.<value>``): the JSON
#: type a pasted text turned out to be ("list" reads "an array […]" / "一个数组 […]"), not text the reader typed.
WORDED_FIELDS = {"kind": "json_kind"}


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


def _shown(value: object) -> str:
    r"""A field as the sentence shows it: numbers as numbers (thousands separated), everything else as inline code."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return code_span(str(value), limit=160)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    return f"{float(value):g}"


def refusal_text(err: PosEncError, lang: str) -> str:
    r"""The sentence that says what ``err`` refused, in ``lang`` (markdown with the reader's values as code)."""
    if isinstance(err, PageRefusal):
        return t(err.key, lang, **err.fmt)
    key = f"error.{err.code}"
    if err.code == "invalid" or not has(key, lang):
        return t("error.invalid", lang, message=code_span(str(err), limit=400))
    return t(key, lang, **{name: _field(name, value, lang) for name, value in err.fields.items()})


def _field(name: str, value: object, lang: str) -> str:
    r"""A field in the sentence: a word of ``lang`` where :data:`WORDED_FIELDS` has one for it, else :func:`_shown`."""
    prefix = WORDED_FIELDS.get(name)
    if prefix is not None and has(f"{prefix}.{value}", lang):
        return t(f"{prefix}.{value}", lang)
    return _shown(value)
