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
    sleeps. The app's products are small, so the second thread of a 2-core server bought little: 10–20 ms on a move
    of RoPE's d or seed; over all 40 sliders the mean rerun took the same time either way. Its spinning cost a core:
    a move of RoPE's d took 122–145 ms of the server's CPU with one thread and 260–293 ms with two; Relative's seed,
    whose figures compute in 3 ms, 23 ms against 138–143 ms (``python bench/bench_moves.py``, two servers side by
    side; the README has the table). On a server that a class shares, that core serves the other students.

    torch, which the lab imports later, keeps its threads for training: they are OpenMP's, not a BLAS library's.
    """
    threadpool_limits(limits=1, user_api="blas")
