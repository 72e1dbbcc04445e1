r"""Pasted text → the dict of a ``config.json``: capped in size before anything is parsed, capped in nesting, parsed
with :mod:`json` only (never evaluated), and every problem a :class:`~posenc_core.PosEncError` with a code the app
translates (``config_too_long``, ``config_empty``, ``config_not_json``, ``config_too_deep``, ``config_not_object``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import PosEncError

__all__ = ["MAX_CONFIG_CHARS", "MAX_CONFIG_DEPTH", "json_kind", "parse_config_text"]

#: A real config.json is a few kB (Phi-3's, with 96 factors, about 3 kB); 64 kB leaves room and stops abuse.
MAX_CONFIG_CHARS = 65_536
#: config.json nests two or three levels (rope_parameters per layer type); 8 is generous.
MAX_CONFIG_DEPTH = 8

#: Python's type for each JSON value → the JSON name a reader knows it by.
_JSON_KINDS = (
    (bool, "boolean"),
    (int, "number"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (tuple, "array"),
    (Mapping, "object"),
)


def json_kind(value: object) -> str:
    r"""The JSON name of a parsed value's type: "null", "boolean", "number", "string", "array", "object" (Python's
    type name for anything JSON cannot hold)."""
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_KINDS if isinstance(value, kind)), type(value).__name__)


def parse_config_text(text: object) -> dict[str, Any]:
    r"""The JSON object in ``text`` (a pasted ``config.json``), never evaluated.

    At most :data:`MAX_CONFIG_CHARS` characters (counted before anything is parsed, so a huge paste costs nothing) and
    :data:`MAX_CONFIG_DEPTH` levels of nesting; ``NaN`` and ``Infinity`` (which Python's json accepts) are refused.
    Every problem is a :class:`PosEncError` with a code.
    """
    if not isinstance(text, str):
        raise PosEncError("the pasted config must be text", code="config_not_object", kind=json_kind(text))
    if len(text) > MAX_CONFIG_CHARS:
        raise PosEncError(
            f"the pasted text has {len(text):,} characters; a config.json fits in {MAX_CONFIG_CHARS:,}",
            code="config_too_long",
            chars=len(text),
            limit=MAX_CONFIG_CHARS,
        )
    if not text.strip():
        raise PosEncError("the box is empty: paste a model's config.json", code="config_empty")
    try:
        config = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as err:
        detail = f"{err.msg} (line {err.lineno}, column {err.colno})"
        raise PosEncError(f"not valid JSON: {detail}", code="config_not_json", detail=detail) from None
    except RecursionError:  # deeper than the parser's own stack
        raise _too_deep() from None
    if _depth(config) > MAX_CONFIG_DEPTH:
        raise _too_deep()
    if not isinstance(config, dict):
        kind = json_kind(config)
        raise PosEncError(
            f"config.json must be a JSON object {{…}}, got JSON of type {kind}", code="config_not_object", kind=kind
        )
    return config


def _too_deep() -> PosEncError:
    return PosEncError(
        f"the JSON nests deeper than {MAX_CONFIG_DEPTH} levels", code="config_too_deep", limit=MAX_CONFIG_DEPTH
    )


def _refuse_constant(name: str) -> float:
    detail = f"{name} is not a JSON number"
    raise PosEncError(f"not valid JSON: {detail}", code="config_not_json", detail=detail)


def _depth(value: object) -> int:
    r"""Nesting depth of parsed JSON, iteratively (a crafted input cannot exhaust the stack here)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest
