r"""One error type for every bad argument, and the validators that raise it.

Every public function of :mod:`posenc_core` checks its arguments here before touching NumPy, so a bad value
(a string for a length, ``nan`` for a base, a request for a 2^40-element table) ends in a
:class:`PosEncError` whose message names the argument, the value it got and what is allowed — never in a
NumPy traceback, a silent ``nan`` or an out-of-memory kill. Pages show the message as it is.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["ERROR_FIELDS", "MAX_ELEMENTS", "PosEncError"]

#: The largest array any public function will build: 2^27 elements (1 GiB of float64). Bigger requests are
#: refused up front; a page can always ask for what it shows (e.g. a downsampled heatmap) instead.
MAX_ELEMENTS = 2**27


#: Error code → the fields a :class:`PosEncError` of that code carries (what a translation may fill in). The code and
#: fields are stable; the English message may be reworded. ``"invalid"`` (the default) carries only the message.
ERROR_FIELDS: dict[str, frozenset[str]] = {
    code: frozenset(fields.split())
    for code, fields in {
        "invalid": "",
        "not_integer": "name value",
        "not_real": "name value",
        "not_finite": "name value",
        "too_small": "name value bound",  # value < bound (≥ bound allowed)
        "not_above": "name value bound",  # value ≤ bound (> bound required)
        "too_large": "name value bound",  # value > bound
        "not_even": "name value",
        "not_choice": "name value allowed",
        "not_bool": "name value",
        "not_array": "name",
        "queries_exceed_keys": "query_length key_length",
        "too_many_elements": "what count cap",
        "position_out_of_range": "position max_length",
        "too_few_bits": "length dim largest",
        "config_not_object": "kind",
        "config_too_long": "chars limit",
        "config_empty": "",
        "config_not_json": "detail",
        "config_too_deep": "limit",
        "unknown_keys": "rope_type keys allowed",
        "missing_key": "rope_type key",
        "no_head_dim": "",
        "rope_per_layer_type": "kinds",
        "not_modelled": "family reason",
        "no_training_length": "",
    }.items()
}


class PosEncError(ValueError):
    r"""A bad argument to a :mod:`posenc_core` function; the message says which, what it was and what is allowed.

    ``code`` (a key of :data:`ERROR_FIELDS`) and ``fields`` let an app say the same in another language: the message
    itself stays the core's, in English.
    """

    def __init__(self, message: str, *, code: str = "invalid", **fields: object) -> None:
        expected = ERROR_FIELDS.get(code)
        if expected is None or set(fields) != expected:  # a programming error in the raise, not a bad argument
            raise TypeError(f"PosEncError code {code!r} takes fields {sorted(expected or ())}, got {sorted(fields)}")
        super().__init__(message)
        self.code = code
        self.fields = fields

    def __reduce__(self) -> tuple:  # pickles (multiprocessing, caches) keep the code and fields
        return (_rebuild, (type(self), str(self), self.code, self.fields))


def _rebuild(cls: type[PosEncError], message: str, code: str, fields: dict[str, object]) -> PosEncError:
    return cls(message, code=code, **fields)


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_int(name: str, value: object, *, lo: int | None = None, hi: int | None = None, even: bool = False) -> int:
    """``value`` as a Python int in [lo, hi]; integral floats (``4096.0`` from a JSON config) are accepted."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PosEncError(
            f"{name} must be an integer, got {_show(value)}", code="not_integer", name=name, value=_show(value)
        )
    if isinstance(value, numbers.Integral):
        out = int(value)
    else:
        as_float_ = float(value)
        if not math.isfinite(as_float_) or not as_float_.is_integer():
            raise PosEncError(
                f"{name} must be an integer, got {_show(value)}", code="not_integer", name=name, value=_show(value)
            )
        out = int(as_float_)
    if lo is not None and out < lo:
        raise PosEncError(f"{name} must be ≥ {lo}, got {out}", code="too_small", name=name, value=out, bound=lo)
    if hi is not None and out > hi:
        raise PosEncError(f"{name} must be ≤ {hi}, got {out}", code="too_large", name=name, value=out, bound=hi)
    if even and out % 2:
        raise PosEncError(
            f"{name} must be even (dimensions come in (cos, sin) pairs), got {out}",
            code="not_even",
            name=name,
            value=out,
        )
    return out


def as_float(
    name: str,
    value: object,
    *,
    gt: float | None = None,
    ge: float | None = None,
    le: float | None = None,
) -> float:
    """``value`` as a finite Python float with optional bounds (``gt``: strictly greater than)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PosEncError(
            f"{name} must be a real number, got {_show(value)}", code="not_real", name=name, value=_show(value)
        )
    out = float(value)
    if not math.isfinite(out):
        raise PosEncError(f"{name} must be finite, got {out}", code="not_finite", name=name, value=out)
    if gt is not None and not out > gt:
        raise PosEncError(f"{name} must be > {gt:g}, got {out:g}", code="not_above", name=name, value=out, bound=gt)
    if ge is not None and not out >= ge:
        raise PosEncError(f"{name} must be ≥ {ge:g}, got {out:g}", code="too_small", name=name, value=out, bound=ge)
    if le is not None and not out <= le:
        raise PosEncError(f"{name} must be ≤ {le:g}, got {out:g}", code="too_large", name=name, value=out, bound=le)
    return out


def as_choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """``value`` if it is one of the ``allowed`` strings."""
    if not isinstance(value, str) or value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise PosEncError(
            f"{name} must be one of {options}; got {_show(value)}",
            code="not_choice",
            name=name,
            value=_show(value),
            allowed=options,
        )
    return value


def as_float_dtype(name: str, value: object) -> np.dtype:
    """``np.float32`` or ``np.float64`` (given as a type, a dtype or its name)."""
    if isinstance(value, str | type | np.dtype):
        try:
            dtype = np.dtype(value)
        except TypeError:
            dtype = None
        if dtype in (np.dtype(np.float32), np.dtype(np.float64)):
            return dtype
    raise PosEncError(
        f"{name} must be float32 or float64, got {_show(value)}",
        code="not_choice",
        name=name,
        value=_show(value),
        allowed="float32, float64",
    )


def as_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise PosEncError(
            f"{name} must be True or False, got {_show(value)}", code="not_bool", name=name, value=_show(value)
        )
    return bool(value)


def as_array(
    name: str,
    value: object,
    *,
    ndim: int | None = None,
    min_ndim: int = 0,
    finite: bool = True,
    integer: bool = False,
    allow_empty: bool = False,
) -> np.ndarray:
    """``value`` as a real NumPy array (float64, or int64 with ``integer=True``), checked for shape and finiteness.

    Floating inputs keep float32 if they are float32 (a page may want the cheaper dtype); everything else
    becomes float64.
    """
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:  # ragged lists, objects NumPy cannot hold
        raise PosEncError(
            f"{name} must be an array of real numbers, got {_show(value)}", code="not_array", name=name
        ) from exc
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise PosEncError(
            f"{name} must be an array of real numbers, got dtype {arr.dtype}", code="not_array", name=name
        )
    if ndim is not None and arr.ndim != ndim:
        raise PosEncError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if arr.ndim < min_ndim:
        raise PosEncError(f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}")
    check_elements(name, arr.shape)
    if arr.size == 0 and not allow_empty:
        raise PosEncError(f"{name} must not be empty, got shape {arr.shape}")
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size and arr.max() > 2**53:
        raise PosEncError(f"{name} holds integers too large to represent exactly as float64")
    if arr.dtype.kind == "f" and arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)  # float16 / longdouble: compare and compute in float64
    if integer:
        if arr.dtype.kind == "f":
            if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
                raise PosEncError(f"{name} must hold integers, got non-integral values")
            if arr.size and np.max(np.abs(arr)) > 2.0**53:
                raise PosEncError(f"{name} must hold integers of magnitude ≤ 2^53")
        return arr.astype(np.int64, copy=False)
    out = arr.astype(np.float32 if arr.dtype == np.float32 else np.float64, copy=False)
    if finite and not np.all(np.isfinite(out)):
        raise PosEncError(f"{name} must be finite; it holds nan or inf")
    return out


def as_query_key_lengths(query_length: object, key_length: object = None) -> tuple[int, int]:
    r"""``(Lq, Lk)`` for queries aligned to the last keys (``key_length`` defaults to ``query_length``).

    Query row r sits at position Lk − Lq + r, so more queries than keys would put the first rows at negative
    positions, before any key: refused, naming both lengths.
    """
    query_length = as_int("query_length", query_length, lo=1, hi=MAX_ELEMENTS)
    key_length = query_length if key_length is None else as_int("key_length", key_length, lo=1, hi=MAX_ELEMENTS)
    if query_length > key_length:
        raise PosEncError(
            f"query_length must be at most key_length (queries are the last query_length of the key positions), "
            f"got query_length = {query_length} > key_length = {key_length}",
            code="queries_exceed_keys",
            query_length=query_length,
            key_length=key_length,
        )
    check_elements("relative_positions(query_length, key_length)", (query_length, key_length))
    return query_length, key_length


def check_elements(what: str, shape: Iterable[int]) -> None:
    """Refuse a result bigger than :data:`MAX_ELEMENTS` before it is allocated."""
    count = 1
    for n in shape:
        count *= int(n)
    if count > MAX_ELEMENTS:
        raise PosEncError(
            f"{what} would have {count:,} elements, above the cap of {MAX_ELEMENTS:,} (2^27, 1 GiB of float64); "
            "ask for fewer positions, heads or dimensions",
            code="too_many_elements",
            what=what,
            count=count,
            cap=MAX_ELEMENTS,
        )


def check_finite_scores(scores: np.ndarray) -> None:
    """Refuse scores that overflowed their dtype (huge q, k or scale) instead of returning inf or nan."""
    if not np.all(np.isfinite(scores)):
        raise PosEncError(f"the scores overflow {scores.dtype}: q, k or scale are too large")
