r"""A figure that costs nothing until someone looks inside it: the JSON it sends is all a page needs.

Streamlit sends a plotly figure by asking it for ``to_dict()`` on every rerun. For a ``go.Figure`` that means
constructing the object tree (every property of every trace and axis set and checked: 9 ms for the compare page's
six heatmaps) on every slider move that misses the figure cache, and a deep copy with every array base64-encoded
(2.5 ms for the same figure) on every rerun that shows it, cached or not. The builders in this package already
produce complete, plain dicts, so :class:`BuiltFigure` encodes that dict once, as the JSON the app's chart sends
(arrays as plotly.js typed arrays, :func:`encode`), and keeps only those bytes: a figure
shown again from the cache is sent as it is, with nothing to copy or encode.

It is still a real ``go.Figure``: the first time anything else is asked of it (``fig.layout``, ``fig.data``,
``update_layout``…), it builds the full, validated plotly object from the same JSON. Tests do that, and
``tests/app/test_figures.py`` checks that the validated figure of every page writes back exactly the dict that the
page sends, so an invalid property cannot reach a browser unnoticed. Figures are never changed after they are
built (see :func:`posenc_ui.lesson.uses`); ``to_dict()`` hands out a fresh copy, so no caller can change one.
"""

from __future__ import annotations

import base64
import sys
from typing import Any

import numpy as np
import orjson
import plotly.graph_objects as go
from plotly.basedatatypes import BasePlotlyType

#: numpy dtypes plotly.js reads as typed arrays, and their short names (plotly.js ``dtype`` field).
TYPED = {
    "int8": "i1",
    "uint8": "u1",
    "int16": "i2",
    "uint16": "u2",
    "int32": "i4",
    "uint32": "u4",
    "float32": "f4",
    "float64": "f8",
}
NUMPY = {short: np.dtype(name) for name, short in TYPED.items()}
#: Keys whose arrays plotly.js wants as plain lists (as plotly.py's own encoder leaves them).
PLAIN_KEYS = frozenset({"geojson", "layer", "layers", "range"})


def typed_array(array: np.ndarray) -> dict[str, str] | list:
    r"""``array`` as a plotly.js typed array ``{"dtype", "bdata"[, "shape"]}``, or a list when it has no such type.

    64-bit integers are narrowed to the smallest type that holds their values (plotly.js has no int64).
    """
    if array.dtype == np.int64 and array.size:
        lo, hi = int(array.min()), int(array.max())
        narrow = next(
            (t for t in (np.int8, np.int16, np.int32) if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max), None
        )
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


def wire(node: Any, key: str = "") -> Any:
    r"""A copy of a figure dict ready for plotly.js: arrays encoded, plotly objects (the template) as dicts."""
    # Scalars, most of a figure's leaves, are taken as they are without a call: a figure has hundreds of them.
    if isinstance(node, dict):  # None means "not set", as plotly.py drops it
        return {k: v if type(v) in _SCALARS else wire(v, k) for k, v in node.items() if v is not None}
    if isinstance(node, list | tuple):
        if _SCALARS.issuperset(map(type, node)):  # labels, colours, hover texts: nothing inside to convert
            return list(node)
        return [v if type(v) in _SCALARS else wire(v) for v in node]
    if isinstance(node, np.ndarray):
        return node.tolist() if key in PLAIN_KEYS else typed_array(node)
    if isinstance(node, np.generic):
        return node.item()
    if isinstance(node, BasePlotlyType):  # the house template: 48 µs a figure built, against ms for the figure
        return wire(node.to_plotly_json(), key)
    return node


#: What the sent JSON escapes, as plotly's own writer does (``plotly.io.json``), but for "/": "<" and ">", so that no
#: ``</script>`` can form wherever the bytes end up, and the two line separators that JavaScript source (not JSON)
#: refuses. Each can stand only inside a JSON string, where its escape is the same value.
_ESCAPES = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)
_ORJSON = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
#: How many candidates :func:`contains` checks one by one before it hands the rest to ``in``.
_PROBES = 64


def contains(data: bytes, needle: bytes) -> bool:
    r"""``needle in data``, fast where ``needle``'s first byte is rare in ``data``.

    CPython finds a byte with ``memchr``, but a longer needle with a loop over every byte: 0.56 ms for a line
    separator (3 bytes in UTF-8) in a heatmap's 633 KB, twice a figure, where finding "<" took 0.01 ms. A separator
    starts with 0xE2, which a figure's JSON holds only in some punctuation of its text ("…", "−", "“"): each is found
    with ``memchr`` and checked in place, and past :data:`_PROBES` of them the rest of ``data`` goes to ``in`` as
    before.
    """
    first, start = needle[:1], 0
    for _ in range(_PROBES):
        start = data.find(first, start)
        if start < 0:
            return False
        if data.startswith(needle, start):
            return True
        start += 1
    return needle in data[start:]


def encode(spec: dict) -> bytes:
    r"""``spec`` (a wired figure dict) as the JSON the app's chart sends: orjson, with :data:`_ESCAPES` escaped.

    ``plotly.io.to_json`` (orjson engine) writes the same JSON value, but through a ``str``, with every "/" escaped
    (base64 is full of slashes: a quarter of a heatmap's bytes), which the app then had to undo. For a heatmap of
    120,000 cells that took 5.3 ms a figure; orjson's bytes, escaped here, take 0.07 ms (issue 46). The chart gives
    the bytes to ``JSON.parse`` only."""
    # orjson's bytes keep the buffer they grew in (4 MB for a 0.3 MB figure, as tracemalloc sees it); a cache that
    # counts a figure by its length would hold ten times its budget, so the bytes are copied to their own size.
    out = bytes(memoryview(orjson.dumps(spec, option=_ORJSON)))
    for raw, escaped in _ESCAPES:
        if contains(out, raw):
            out = out.replace(raw, escaped)
    return out


def figure_json(fig: go.Figure | dict) -> bytes:
    r"""The JSON the app's chart sends for ``fig`` (UTF-8): the figure dict that plotly.js reads, arrays as typed
    arrays (:func:`encode`). A :class:`BuiltFigure` that nobody looked inside answers with the bytes it keeps."""
    if isinstance(fig, BuiltFigure) and not fig.__dict__["_built"]:
        return fig.__dict__["_json"]
    return encode(wire(fig.to_dict() if isinstance(fig, go.Figure) else fig))


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


class BuiltFigure(go.Figure):
    r"""A ``go.Figure`` whose plotly object tree is only built when something other than ``to_dict()`` asks."""

    def __init__(self, spec: dict) -> None:  # the base initialiser runs later, on first look inside (below)
        object.__setattr__(self, "_json", encode(wire(spec)))
        object.__setattr__(self, "_built", False)

    def to_dict(self) -> dict:
        r"""The figure as plotly.js reads it, a fresh copy that a caller may change.

        Before anything looked inside, that is the sent JSON read back (orjson: 0.13 ms for the largest figure at the
        defaults, relative's T5 matrix of 200 KB). After, the validated plotly tree is the figure, and
        ``update_layout`` and friends show in what this returns, as for any ``go.Figure``.
        """
        if self.__dict__["_built"]:
            return go.Figure.to_dict(self)
        return orjson.loads(self._json)

    def approx_bytes(self) -> int:
        r"""What keeping this figure costs (the bytes it sends): caches are bounded in bytes."""
        return sys.getsizeof(self.__dict__["_json"])

    def __getattr__(self, name: str) -> Any:
        # Reached only for a name the instance does not have yet: everything of go.Figure but to_dict.
        if name.startswith("__") or self.__dict__.get("_built", True):
            raise AttributeError(name)
        object.__setattr__(self, "_built", True)
        go.Figure.__init__(self, unwire(orjson.loads(self._json)))  # validated: a bad property raises here, in tests
        return getattr(self, name)
