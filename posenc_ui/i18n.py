r"""Every visible string, in Chinese and English, from JSON catalogues: the shared words and each lesson's.

One scheme for every page: ``assets/i18n/shared.<lang>.json`` holds the words every page shares (navigation, the
frame, export, share and explain panels, axis and encoding names); ``posenc_ui/lessons/<page_id>/words.<lang>.json``
holds one page's words, beside its view and figures, keyed ``<page_id>.…`` plus its ``page.<page_id>.title`` and
``.promise`` (the home page's are ``home.…``).

``t(key, lang, **fmt)`` is a pure lookup (plus ``str.format``), so figure builders and the export command use it
without a Streamlit session. Keys are dotted (``"sinusoidal.intro"``); both catalogues hold the same keys with the same
``{placeholders}`` — ``tests/app/test_i18n.py`` fails otherwise. A missing key raises ``KeyError`` rather than
showing a half-translated page.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path

LANGS: tuple[str, ...] = ("zh", "en")
#: The language when neither the URL nor the browser names one we have.
DEFAULT_LANG = "en"
CATALOGUE_DIR = Path(__file__).resolve().parent.parent / "assets" / "i18n"
#: One folder per lesson, each holding its words ``words.<lang>.json`` (:func:`page_words`).
LESSONS_DIR = Path(__file__).resolve().parent / "lessons"

#: Punctuation that never starts a line of Chinese text (a closing mark).
CLOSING_PUNCTUATION = "，。、；：！？）」』》"
#: Punctuation that never starts a line in either language.
CLOSING_MARKS = CLOSING_PUNCTUATION + ",.;:!?)"
#: Inline maths (``$…$``) and the closing punctuation right after it. KaTeX draws maths as inline blocks, and CSS
#: treats an inline block like an object character, with a break allowed on either side: on a phone Chromium started
#: lines with the "，" or "）" after a formula on five Chinese pages (a word joiner between the two notwithstanding)
#: and with "," or "." on two English ones. Display maths (``$$``) and an escaped ``\$`` are left alone.
_MATH_THEN_CLOSING = re.compile(rf"(?<![\\$])\$([^$\n]+?)\$([{re.escape(CLOSING_MARKS)}]+)")
#: Between two formulas that the punctuation no longer separates ("$q$、$k$"): without it, "$$" would open display
#: maths. Invisible and zero-width; a line may still break there, before the next formula.
WORD_JOINER = "\u2060"
#: Inside maths, text at the size of the words around it: KaTeX draws maths at 1.21 em and ``\footnotesize`` is
#: 0.8 of that. ``\text，`` takes the one character as its argument, so no braces reach ``str.format``.
_SIZE, _TEXT = r"\footnotesize", r"\text"


def _inside(match: re.Match[str]) -> str:
    glued = "$" + match[1] + _SIZE + "".join(_TEXT + mark for mark in match[2]) + "$"
    return glued + WORD_JOINER if match.string.startswith("$", match.end()) else glued


def glue_punctuation(text: str) -> str:
    r"""``text`` with the closing punctuation right after inline maths moved inside it, as text, so that no line can
    start with it: ``$m$，`` becomes ``$m\footnotesize\text，$``."""
    return _MATH_THEN_CLOSING.sub(_inside, text)


def shared_words(lang: str) -> Path:
    r"""The file of the words every page shares, in ``lang``."""
    return CATALOGUE_DIR / f"shared.{lang}.json"


def page_words(page_id: str, lang: str) -> Path:
    r"""The file of one page's words, in ``lang``: ``posenc_ui/lessons/<page_id>/words.<lang>.json``."""
    return LESSONS_DIR / page_id / f"words.{lang}.json"


def every_page_words(lang: str) -> list[Path]:
    r"""Every lesson's words file in ``lang``, in the order of the lessons' ids."""
    return sorted(LESSONS_DIR.glob(f"*/words.{lang}.json"))


@functools.cache
def catalogue(lang: str) -> Mapping[str, str]:
    r"""The string table of ``lang`` (one of :data:`LANGS`), read once per process: the shared words and every page's.

    A key defined twice is an error, not a silent override.
    """
    if lang not in LANGS:
        raise KeyError(f"unknown language {lang!r}; have {LANGS}")
    table: dict[str, str] = {}
    for path in [shared_words(lang), *every_page_words(lang)]:
        with path.open(encoding="utf-8") as fh:
            part = json.load(fh)
        clash = sorted(set(part) & set(table))
        if clash:
            raise KeyError(f"{path.parent.name}/{path.name} redefines {clash[:5]}")
        table.update({key: glue_punctuation(text) for key, text in part.items()})
    return table


def t(key: str, lang: str, /, **fmt: object) -> str:
    r"""The text of ``key`` in ``lang``, with ``{name}`` placeholders filled from ``fmt``."""
    text = catalogue(lang)[key]
    return text.format(**fmt) if fmt else text


def has(key: str, lang: str = DEFAULT_LANG) -> bool:
    r"""Whether ``key`` exists (for optional strings, e.g. a figure's caption)."""
    return key in catalogue(lang)


def lang_from_locale(locale: str | None) -> str | None:
    r"""``"zh"`` for any Chinese browser locale (zh-CN, zh-TW, zh-Hant…), ``"en"`` for English, else None."""
    if not locale:
        return None
    primary = locale.replace("_", "-").split("-")[0].lower()
    return primary if primary in LANGS else None
