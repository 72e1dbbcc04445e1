r"""A bounded memory for everything the app remembers between reruns, shared by every session.

Each page caches what it computed (a table, a score matrix, a finished figure) so that moving another slider, or
another student asking for the same settings, costs nothing. Per-function ``lru_cache(maxsize=…)`` bounds only the
*number* of entries: sixteen ALiBi weight tensors at L = 1024 are 640 MB, sixteen sinusoid heatmaps a few MB. Here
every cached result is measured (:func:`approx_bytes`) and kept in one of two pools, each one least-recently-used
order across every page and bounded in bytes: :data:`RESULTS` for what pages show (figures, checks) and
:data:`SCRATCH` for what those are built from, so that a few big intermediates (one full table can weigh as much
as a hundred finished figures) cannot push out the figures students come back to. The pools are
:class:`cachetools.LRUCache` sized by :func:`approx_bytes`; this module adds only the sizing and the two pools.
A third store, :data:`KEPT`, holds the few results that no reader's choice can change, unbounded (they are a fixed
set). Everything the app keeps in memory between reruns goes through :func:`memo` (a live lab run's results also
persist on disk, across processes: :mod:`posenc_lab.queue`).

    @memo
    def _bias(n_heads: int, length: int) -> np.ndarray: ...

Arguments must be hashable. Results are shared between sessions and threads: never mutate one.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar

import cachetools
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
    sized = getattr(obj, "approx_bytes", None)  # e.g. BuiltFigure: the JSON it keeps
    if callable(sized):
        return sized()
    nbytes = getattr(obj, "nbytes", None)  # e.g. posenc_core.RopeDecayTable: the arrays it holds
    if isinstance(nbytes, int):
        return nbytes + 112
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return 64 + sum(approx_bytes(getattr(obj, f.name), _depth + 1) for f in dataclasses.fields(obj))
    return sys.getsizeof(obj)


def pool(max_bytes: int, *, largest: int | None = None) -> cachetools.LRUCache:
    r"""A least-recently-used store bounded in bytes (:func:`approx_bytes`) across every function that uses it.

    A result larger than ``largest`` (default: the whole pool) is returned to its caller but never kept, so that one
    huge result cannot flush everything else. The store is :class:`cachetools.LRUCache`, which evicts by the sum of
    ``getsizeof`` and refuses (``ValueError``, which :func:`cachetools.cached` swallows) an item larger than the pool.
    """
    limit = max_bytes if largest is None else min(largest, max_bytes)

    def size(value: Any) -> int:
        n = approx_bytes(value)
        return n if n <= limit else max_bytes + 1  # over the pool: refused, never kept

    return cachetools.LRUCache(max_bytes, getsizeof=size)


#: What a page shows: finished figures and checks (screen-sized, the expensive composite of everything below).
RESULTS = pool(RESULTS_BYTES, largest=RESULTS_BYTES // 16)
#: What they are built from: full tables, score matrices, weight tensors. Worth keeping while a page is being
#: drawn (its figures share them) and a little longer, not for every state every student has visited: one such
#: tensor can weigh as much as a hundred finished figures.
SCRATCH = pool(SCRATCH_BYTES)


#: What the real model computed for a text (:mod:`posenc_ui.lessons.real`): about 1 MB a text, each the work of
#: seconds to minutes of forwards (two minutes for the shipped passage on two cores). In :data:`RESULTS` (160 MB for
#: every page) the other pages' results would push them out, and the next visit would run every forward again; in a
#: pool of their own only other texts of the same page can.
MODEL_BYTES = 32 * 2**20
MODEL = pool(MODEL_BYTES, largest=MODEL_BYTES // 4)


#: Intermediates that cost a large part of a second each and weigh a few tens of KB: page 9's NoPE probe once took
#: 0.8 s at L = 1,024 and d = 256 (both readings of one draw of 64 × L × d normals; it now draws the norms' own walk,
#: 0.04 s) and keeps about 50 KB. In :data:`SCRATCH`
#: the class's tables (32 MB each) pushed them out within a round, so every student's second visit to the page drew
#: again at the settings they had left, each a second that the others of the process waited behind (issue 46: the
#: page's round-2 p95 was 3 s). 16 MB holds a class's worth (50 students × a few settings each).
DEAR_BYTES = 16 * 2**20
DEAR = pool(DEAR_BYTES, largest=DEAR_BYTES // 64)


#: What a page shows that reads no parameter (a fixed demonstration: a probe over twelve random blocks, every preset's
#: wavelengths): one result per recipe and language, the same for every reader, kept for the process's life. A few
#: dozen small results (34, 0.2 MB in all), several of them seconds to compute: in :data:`RESULTS`, a class's traffic
#: on other pages could push them out, and each would come back as a rerun of seconds that every student of the
#: process waits behind in the page queue (issue 46).
KEPT: dict = {}


#: Guards every pool: even a read reorders an LRU's entries. Held only around the pool, never while computing.
_LOCK = threading.Lock()


def memo(fn: Callable[P, R] | None = None, *, budget: cachetools.Cache = SCRATCH) -> Any:
    r"""Cache ``fn`` in the pool ``budget`` (two threads asking at once may both compute; both get a result).

    ``@memo`` keeps intermediates in :data:`SCRATCH`; :func:`posenc_ui.lesson.uses` keeps page results in
    :data:`RESULTS`, and those of recipes that read no parameter in :data:`KEPT`. Every function of a pool shares its
    byte bound, so each key starts with the function itself.
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        def key(*args: Any, **kwargs: Any) -> Hashable:
            return (fn, args, tuple(sorted(kwargs.items())))

        return cachetools.cached(budget, key=key, lock=_LOCK)(fn)  # keeps fn's name and docstring

    return decorate(fn) if fn is not None else decorate
