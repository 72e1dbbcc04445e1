r"""A figure that costs nothing until someone looks inside it: the wire form is all a page needs.

Streamlit sends a plotly figure by asking it for ``to_dict()`` on every rerun. For a ``go.Figure`` that means
constructing the object tree (every property of every trace and axis set and checked: 9 ms for the compare page's
six heatmaps) on every slider move that misses the figure cache, and a deep copy with every array base64-encoded
(2.5 ms for the same figure) on every rerun that shows it, cached or not. The builders in this package already
produce complete, plain dicts, so :class:`BuiltFigure` keeps that dict in wire form (arrays as plotly.js typed
arrays, encoded once: 0.6 ms for the same figure) and answers ``to_dict()`` with it.

It is still a real ``go.Figure``: the first time anything else is asked of it (``fig.layout``, ``fig.data``,
``update_layout``…), it builds the full, validated plotly object from the same wire dict. Tests do that, and
``tests/app/test_figures.py`` checks that the validated figure of every page writes back exactly the dict that the
page sends, so an invalid property cannot reach a browser unnoticed. Figures are never changed after they are
built (see :func:`posenc_ui.views.base.uses`); ``to_dict()`` hands out copies, so no caller can change one.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.basedatatypes import BasePlotlyType

#: numpy dtypes plotly.js reads as typed arrays, and their short names (plotly.js ``dtype`` field).
TYPED = {
    "int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4",
    "float32": "f4", "float64": "f8",
}  # fmt: skip
NUMPY = {short: np.dtype(name) for name, short in TYPED.items()}
#: Keys whose arrays plotly.js wants as plain lists (as plotly.py's own encoder leaves them).
PLAIN_KEYS = frozenset({"geojson", "layer", "layers", "range"})


def typed_array(array: np.ndarray) -> dict[str, str] | list:
    r"""``array`` as a plotly.js typed array ``{"dtype", "bdata"[, "shape"]}``, or a list when it has no such type.

    64-bit integers are narrowed to the smallest type that holds their values (plotly.js has no int64).
    """
    if array.dtype == np.int64 and array.size:
        lo, hi = int(array.min()), int(array.max())
        narrow = next((t for t in (np.int8, np.int16, np.int32) if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max),
                      None)  # fmt: skip
        if narrow is not None:
            array = array.astype(narrow)
    short = TYPED.get(array.dtype.name)
    if short is None or array.size == 0:
        return array.tolist()
    spec = {"dtype": short, "bdata": base64.b64encode(np.ascontiguousarray(array)).decode("ascii")}
    if array.ndim > 1:
        spec["shape"] = ", ".join(str(n) for n in array.shape)
    return spec


_SCALARS = frozenset({str, int, float, bool, type(None)})


def wire(node: Any, key: str = "", tally: list[int] | None = None) -> Any:
    r"""A copy of a figure dict ready for plotly.js: arrays encoded, plotly objects (the template) as dicts.

    ``tally``, when given, collects what the copy weighs in memory (:meth:`BuiltFigure.approx_bytes`): the encoded
    arrays by their text, every other node by CPython's usual object sizes.
    """
    if isinstance(node, dict):  # None means "not set", as plotly.py drops it
        if tally is not None:
            tally.append(_DICT_BYTES + _ITEM_BYTES * len(node))
        return {k: wire(v, k, tally) for k, v in node.items() if v is not None}
    if isinstance(node, list | tuple):
        if tally is not None:
            tally.append(_LIST_BYTES + _ITEM_BYTES * len(node))
        if _SCALARS.issuperset(map(type, node)):  # labels, colours, hover texts: nothing inside to convert
            return list(node)
        return [wire(v, "", tally) for v in node]
    if isinstance(node, np.ndarray):
        encoded = node.tolist() if key in PLAIN_KEYS else typed_array(node)
        if tally is not None:
            tally.append(_ITEM_BYTES * node.size if isinstance(encoded, list) else _typed_bytes(encoded))
        return encoded
    if isinstance(node, np.generic):
        return node.item()
    if isinstance(node, BasePlotlyType):  # the house template: 48 µs a figure built, against ms for the figure
        return wire(node.to_plotly_json(), key, tally)
    return node


#: Rough CPython sizes (64-bit): an empty dict or list, and one more item with its value (a float, a short string).
_DICT_BYTES, _LIST_BYTES, _ITEM_BYTES = 232, 56, 48


def _typed_bytes(spec: dict[str, str]) -> int:
    return _DICT_BYTES + sum(len(v) + 49 for v in spec.values())  # an ASCII str: 49 bytes, plus one a character


def unwire(node: Any) -> Any:
    r"""The inverse of :func:`wire` for arrays: typed arrays back to (read-only) numpy arrays."""
    if isinstance(node, dict):
        if node.keys() in ({"dtype", "bdata"}, {"dtype", "bdata", "shape"}):
            array = np.frombuffer(base64.b64decode(node["bdata"]), dtype=NUMPY[node["dtype"]])
            return array.reshape([int(n) for n in node["shape"].split(",")]) if "shape" in node else array
        return {k: unwire(v) for k, v in node.items()}
    if isinstance(node, list):
        return [unwire(v) for v in node]
    return node


def _containers_copied(node: Any) -> Any:
    r"""``node`` with every dict and list copied and every leaf (str, number, bool, None) shared."""
    if type(node) is dict:
        return {k: _containers_copied(v) for k, v in node.items()}
    if type(node) is list:
        return [_containers_copied(v) for v in node]
    return node


class BuiltFigure(go.Figure):
    r"""A ``go.Figure`` whose plotly object tree is only built when something other than ``to_dict()`` asks."""

    def __init__(self, spec: dict) -> None:  # the base initialiser runs later, on first look inside (below)
        tally: list[int] = []
        object.__setattr__(self, "_wire", wire(spec, tally=tally))
        object.__setattr__(self, "_bytes", sum(tally))
        object.__setattr__(self, "_built", False)

    def to_dict(self) -> dict:
        r"""The figure as plotly.js reads it: a fresh copy of the containers, so a caller may change what it gets.

        Before anything looked inside, that is the wire dict (a copy of 88 nodes for the compare page costs 16 µs; the
        encoded arrays are immutable strings and stay shared). After, the validated plotly tree is the figure, and
        ``update_layout`` and friends show in what this returns, as for any ``go.Figure``.
        """
        if self.__dict__["_built"]:
            return go.Figure.to_dict(self)
        return _containers_copied(self._wire)

    def approx_bytes(self) -> int:
        r"""What keeping this figure costs (its wire dict, tallied as it was built): caches are bounded in bytes."""
        return self._bytes

    def __getattr__(self, name: str) -> Any:
        # Reached only for a name the instance does not have yet: everything of go.Figure but to_dict.
        if name.startswith("__") or self.__dict__.get("_built", True):
            raise AttributeError(name)
        object.__setattr__(self, "_built", True)
        go.Figure.__init__(self, unwire(self._wire))  # validated: a bad property raises here, in the tests
        return getattr(self, name)
