r"""Settings for the server process, made once, by the first page a process draws.

Both free the one or two cores that a class shares:

* :func:`freeze_heap` takes the long-lived objects out of the garbage collector's sight;
* :func:`one_blas_thread` keeps numpy's BLAS on the thread that called it.
"""

from __future__ import annotations

import gc
import os

from threadpoolctl import threadpool_limits

#: ``POSENC_BLAS_THREADS=auto`` leaves numpy's BLAS its own thread count (``bench/bench_moves.py`` compares the two).
BLAS_ENV = "POSENC_BLAS_THREADS"

_settled = False


def settle_process() -> None:
    r"""Once per server process, after the first page's imports: :func:`freeze_heap`, :func:`one_blas_thread`."""
    global _settled
    if not _settled:
        _settled = True
        freeze_heap()
        if os.environ.get(BLAS_ENV, "1") != "auto":
            one_blas_thread()


def freeze_heap() -> None:
    r"""Hand everything alive to the GC's permanent generation.

    Modules, plotly's validators and Streamlit's runtime (some 150 000 objects that live as long as the server)
    would otherwise be traversed by every full collection: 130–220 ms each under classroom load, every session
    waiting on the GIL meanwhile (``bench/load.py``; the README's classroom section has the figures).
    """
    gc.collect()
    gc.freeze()


def one_blas_thread() -> None:
    r"""numpy's BLAS (OpenBLAS) on one thread for the rest of the process.

    OpenBLAS hands a product to its worker threads, and an idle worker spins on its core for a while before it
    sleeps. The app's products are small (a few hundred rows), so a second thread bought nothing: a RoPE page's
    figures took the same time with one thread or two. Its spinning cost a whole core: 330 ms of the server's CPU
    for one move of RoPE's d with two threads, 128 ms with one; 130 ms against 20 ms for Relative's seed, whose
    figures compute in 3 ms (``python bench/bench_moves.py``; the README's classroom section). On a server that
    a class shares, that core serves the other students.

    Only libraries loaded now are limited: torch, which the lab imports later, keeps its own threads for training.
    """
    threadpool_limits(limits=1, user_api="blas")
