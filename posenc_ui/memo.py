r"""A bounded memory for everything the app remembers between reruns, shared by every session.

Each page caches what it computed (a table, a score matrix, a finished figure) so that moving another slider, or
another student asking for the same settings, costs nothing. Per-function ``lru_cache(maxsize=…)`` bounds only the
*number* of entries: sixteen ALiBi weight tensors at L = 1024 are 640 MB, sixteen sinusoid heatmaps a few MB. Here
every cached result is measured (:func:`approx_bytes`) and kept in a pool, least-recently-used order across every
page and bounded in bytes: :data:`RESULTS` for what pages show (figures, checks) and :data:`SCRATCH` for what those
are built from, so that a few big intermediates (one full table can weigh as much as a hundred finished figures)
cannot push out the figures students come back to; :data:`DEAR` for small results that cost a large part of a
second, which neither may push out; :data:`MODEL` for the real model's. The pools are :class:`cachetools.LRUCache`
sized by :func:`approx_bytes`. :data:`KEPT` holds the few results that no reader's choice can change, unbounded
(they are a fixed set). :func:`memo` chooses the store by what a result costs, which
:func:`cachetools.cached` cannot. Everything the app keeps in memory between reruns goes through :func:`memo` (a
live lab run's results also persist on disk, across processes: :mod:`posenc_lab.queue`).

    @memo
    def _bias(n_heads: int, length: int) -> np.ndarray: ...

Arguments must be hashable. Results are shared between sessions and threads: never mutate one.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import cachetools
import numpy as np

P = ParamSpec("P")
R = TypeVar("R")

#: What the process may keep of computed results, in two pools (the server's own baseline is ~250 MB).
RESULTS_BYTES = 160 * 2**20
SCRATCH_BYTES = 64 * 2**20


_MISSING = object()
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


#: Results that cost a large part of a second of CPU and weigh little: any miss of :func:`memo` that took
#: :data:`DEAR_SECONDS` or more of its thread's CPU time goes here instead of :data:`SCRATCH` or :data:`RESULTS`, if
#: it is no larger than :data:`DEAR_LARGEST`. Every page script of a process waits behind the one running (the page
#: queue, :mod:`posenc_ui.turns`), so a second recomputed is a second for every student of the process: in a class
#: (issue 46) page 10's entropy curves (1.5 s, 2 KB) and base bounds (0.65 s, 184 B) were pushed out of SCRATCH by
#: other pages' tables, and the visit that drew them again stalled the process for seconds (4.5 s in a traced run),
#: students on page 9 waiting behind it; page 9's NoPE probe (once 0.8 s, 50 KB) did the same before. 32 MB keeps at
#: least 128 of them, and most weigh a few KB.
DEAR_BYTES = 32 * 2**20
DEAR_LARGEST = 256 * 2**10
DEAR_SECONDS = 0.1
DEAR = pool(DEAR_BYTES, largest=DEAR_LARGEST)


#: What no reader's choice can change: the result of a memoized function that takes no arguments (a fixed
#: demonstration: a probe over twelve random blocks, the entropy of a toy head at 26 lengths), and of a recipe that
#: reads no parameter (one per language: every preset's wavelengths). Kept for the process's life: a fixed set of
#: small results (about 40, a few KB each), several of them seconds to compute, which in a bounded pool a class's
#: traffic on other pages could push out (issue 46).
KEPT: dict = {}


#: Guards every pool: even a read reorders an LRU's entries. Held only around the pool, never while computing.
_LOCK = threading.Lock()


def memo(fn: Callable[P, R] | None = None, *, budget: cachetools.Cache | dict = SCRATCH) -> Any:
    r"""Cache ``fn`` in the pool ``budget`` (two threads asking at once may both compute; both get a result).

    ``@memo`` keeps intermediates in :data:`SCRATCH`; :func:`posenc_ui.lesson.uses` keeps page results in
    :data:`RESULTS`. Two results go elsewhere, whatever the pool asked for: a function that takes no arguments
    keeps its one result in :data:`KEPT`, and a miss in SCRATCH or RESULTS that cost :data:`DEAR_SECONDS` of CPU
    or more is kept in :data:`DEAR` when it fits there. Every function of a pool shares its byte bound, so each
    key starts with the function itself; the rest of the key is the arguments as the function sees them, defaults
    included. The wrapper's ``cache`` is the pool asked for (:data:`KEPT` for no arguments).
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(fn)
        home = KEPT if not signature.parameters else budget
        kinds = [parameter.kind for parameter in signature.parameters.values()]
        positional = kinds.count(inspect.Parameter.POSITIONAL_ONLY) + kinds.count(
            inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        plain = len(kinds) == positional  # only positional parameters: a full positional call is its own key
        spills = any(home is bounded for bounded in (SCRATCH, RESULTS))  # DEAR takes only what these would lose
        stores = (home, DEAR) if spills else (home,)

        @functools.wraps(fn)
        def cached(*args: Any, **kwargs: Any) -> R:
            # Defaults filled in and arguments in their places: f(x), f(x, "a") and f(x, layout="a") are one entry
            # when "a" is the default (page 3 had kept its largest table twice, 30 MB each, under two keys).
            if plain and not kwargs and len(args) == positional:
                key = (fn, args, ())
            else:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                key = (fn, bound.args, tuple(sorted(bound.kwargs.items())))
            with _LOCK:
                for store in stores:
                    value = store.get(key, _MISSING)
                    if value is not _MISSING:
                        return value
            start = time.thread_time()  # this thread's CPU: not the time it waited for the interpreter
            value = fn(*args, **kwargs)
            dear = spills and time.thread_time() - start >= DEAR_SECONDS
            with _LOCK:
                for store in (DEAR, home) if dear else (home,):
                    try:
                        store[key] = value
                        break
                    except ValueError:  # larger than the pool keeps: returned to the caller, not kept there
                        continue
            return value

        cached.cache = home  # type: ignore[attr-defined]
        return cached

    return decorate(fn) if fn is not None else decorate
