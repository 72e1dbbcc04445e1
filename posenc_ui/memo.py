r"""A bounded memory for everything the app remembers between reruns, shared by every session.

Each page caches what it computed (a table, a score matrix, a finished figure) so that moving another slider, or
another student asking for the same settings, costs nothing. Per-function ``lru_cache(maxsize=…)`` bounds only the
*number* of entries: sixteen ALiBi weight tensors at L = 1024 are 640 MB, sixteen sinusoid heatmaps a few MB. Here
every cached result is measured (:func:`approx_bytes`) and kept in one of two pools, each one least-recently-used
order across every page and bounded in bytes: :data:`RESULTS` for what pages show (figures, checks) and
:data:`SCRATCH` for what those are built from, so that a few big intermediates (one full table can weigh as much
as a hundred finished figures) cannot push out the figures students come back to.

    @memo
    def _bias(n_heads: int, length: int) -> np.ndarray: ...

Arguments must be hashable. Results are shared between sessions and threads: never mutate one.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar

import numpy as np

P = ParamSpec("P")
R = TypeVar("R")

#: What the process may keep of computed results, in two pools (the server's own baseline is ~250 MB).
RESULTS_BYTES = 160 * 2**20
SCRATCH_BYTES = 64 * 2**20


_SCALARS = frozenset({str, int, float, bool, type(None)})


def approx_bytes(obj: Any, _depth: int = 0) -> int:
    r"""Roughly how much memory ``obj`` keeps alive: arrays by ``nbytes``, containers and dataclasses recursively."""
    if _depth > 12:
        return 0
    if isinstance(obj, np.ndarray):
        return obj.nbytes + 112
    if isinstance(obj, str | bytes):
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        return 64 + sum(approx_bytes(k, _depth + 1) + approx_bytes(v, _depth + 1) for k, v in obj.items())
    if isinstance(obj, list | tuple | set | frozenset):
        if _SCALARS.issuperset(map(type, obj)):  # long runs of labels or numbers: no need to visit each
            return sys.getsizeof(obj) + 48 * len(obj)
        return 56 + sum(approx_bytes(v, _depth + 1) for v in obj)
    sized = getattr(obj, "approx_bytes", None)  # e.g. BuiltFigure: its wire dict
    if callable(sized):
        return sized()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return 64 + sum(approx_bytes(getattr(obj, f.name), _depth + 1) for f in dataclasses.fields(obj))
    return sys.getsizeof(obj)


class Budget:
    r"""A least-recently-used store of results, bounded in bytes across every function that uses it."""

    def __init__(self, max_bytes: int, *, largest: int | None = None) -> None:
        self.max_bytes = max_bytes
        self.largest = max_bytes if largest is None else largest
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0
        self.hits = self.misses = self.evictions = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return False, None
            self._entries.move_to_end(key)
            self.hits += 1
            return True, entry[0]

    def put(self, key: Hashable, value: Any) -> None:
        size = approx_bytes(value)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            if size > self.largest:
                return
            self._entries[key] = (value, size)
            self.bytes += size
            while self.bytes > self.max_bytes and self._entries:
                _, (_, freed) = self._entries.popitem(last=False)
                self.bytes -= freed
                self.evictions += 1

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


#: What a page shows: finished figures and checks (screen-sized, the expensive composite of everything below).
RESULTS = Budget(RESULTS_BYTES, largest=RESULTS_BYTES // 16)
#: What they are built from: full tables, score matrices, weight tensors. Worth keeping while a page is being
#: drawn (its figures share them) and a little longer, not for every state every student has visited: one such
#: tensor can weigh as much as a hundred finished figures.
SCRATCH = Budget(SCRATCH_BYTES)


def memo(fn: Callable[P, R] | None = None, *, budget: Budget = SCRATCH) -> Any:
    r"""Cache ``fn`` in ``budget`` (two threads asking at once may both compute; both get a result).

    ``@memo`` keeps intermediates in :data:`SCRATCH`; :func:`posenc_ui.views.base.uses` keeps page results in
    :data:`RESULTS`.
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def cached(*args: P.args, **kwargs: P.kwargs) -> R:
            key = (cached, args, tuple(sorted(kwargs.items())))
            found, value = budget.get(key)
            if not found:
                value = fn(*args, **kwargs)
                budget.put(key, value)
            return value

        return cached

    return decorate(fn) if fn is not None else decorate
