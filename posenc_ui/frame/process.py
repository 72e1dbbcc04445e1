r"""Settings for the server process, made once, by the first page a process draws.

They free the one or two cores that a class shares:

* :func:`freeze_heap` takes the long-lived objects out of the garbage collector's sight (the lab calls it again
  once it has imported torch);
* :func:`young_collections` lets the short-lived garbage of reruns die young;
* :func:`one_blas_thread` keeps numpy's BLAS on the thread that called it;
* :func:`no_delay` sends the server's small websocket messages at once (Nagle's algorithm off).
"""

from __future__ import annotations

import contextlib
import gc
import os
import socket
import stat

from threadpoolctl import threadpool_limits

#: ``POSENC_BLAS_THREADS=auto`` leaves numpy's BLAS its own thread count (``bench/bench_moves.py`` compares the two).
BLAS_ENV = "POSENC_BLAS_THREADS"
#: ``POSENC_NO_DELAY=off`` leaves Nagle's algorithm on, as Streamlit does (``bench/bench_moves.py --compare nagle``).
NO_DELAY_ENV = "POSENC_NO_DELAY"

_settled = False


def settle_process() -> None:
    r"""Once per server process, after the first page's imports: :func:`no_delay`, :func:`freeze_heap`,
    :func:`young_collections`, :func:`one_blas_thread`."""
    global _settled
    if not _settled:
        _settled = True
        if os.environ.get(NO_DELAY_ENV, "on") != "off":
            no_delay()
        freeze_heap()
        young_collections()
        if os.environ.get(BLAS_ENV, "1") != "auto":
            one_blas_thread()


def freeze_heap() -> None:
    r"""Hand everything alive to the GC's permanent generation.

    Modules, plotly's validators and Streamlit's runtime (some 150 000 objects that live as long as the server)
    would otherwise be traversed by every full collection: 130–220 ms each under classroom load, every session
    waiting on the GIL meanwhile (``bench/load.py``; docs/benchmarks.md, "A class at once", has the figures).
    """
    gc.collect()
    gc.freeze()


#: Allocations between two collections of the youngest generation (Python's default: 700).
YOUNG_THRESHOLD = 10_000


def young_collections() -> None:
    r"""Collect the youngest generation every :data:`YOUNG_THRESHOLD` allocations instead of every 700.

    Reruns leave reference cycles behind: under class load, most full collections freed 16 000–38 000 objects. With
    Python's default, many of them outlive two young collections, and once they are a quarter of the long-lived
    objects a full collection runs, holding the interpreter for 15–190 ms while every session waits. With the young
    generation larger, they die young. One round of 50 students (``bench/load.py --rounds 1``, the collector timed
    by ``gc.callbacks``, 2026-11-26): 21 full collections and 4.1 s in the collector with the default, 1 full
    collection and 2.7 s with this threshold; the server's memory ended the same (719 and 723 MB).
    """
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def one_blas_thread() -> None:
    r"""numpy's BLAS (OpenBLAS) on one thread for the rest of the process.

    OpenBLAS hands a product to its worker threads, and an idle worker spins on its core for a while before it
    sleeps. The app's products are small, so the second thread of a 2-core server bought little: 10–20 ms on a move
    of RoPE's d or seed; over all 40 sliders the mean rerun took the same time either way. Its spinning cost a core:
    a move of RoPE's d took 122–145 ms of the server's CPU with one thread and 260–293 ms with two; Relative's seed,
    whose figures compute in 3 ms, 23 ms against 138–143 ms (``python bench/bench_moves.py``, two servers side by
    side; docs/benchmarks.md has the figures). On a server that a class shares, that core serves the other students.

    torch, which the lab imports later, keeps its threads for training: they are OpenMP's, not a BLAS library's.
    """
    threadpool_limits(limits=1, user_api="blas")


def no_delay() -> int:
    r"""Turn Nagle's algorithm off (``TCP_NODELAY``) on every TCP socket of this process; return how many.

    Streamlit 1.67 binds its listening socket itself, with ``socket.socket(family=...)``, so the socket reports
    protocol 0, and asyncio, which turns Nagle off on a connection only when its socket reports ``IPPROTO_TCP``,
    leaves it on (uvicorn has the same bug: issue 3149 on GitHub). A rerun answers in a burst of small websocket
    messages. With Nagle on, the first goes out and the rest wait until the browser acknowledges it; a browser with
    nothing to send delays that by 40 ms (Linux's minimum). A bare Streamlit page of one slider, traced on loopback,
    had sent its last message 4 ms after a move arrived; the client received it after 44-52 ms. Linux acknowledges at
    once on a connection quiet for ~0.2 s, so the stall hits moves in quick succession: with 0.05 s between moves
    (``bench/bench_moves.py --compare nagle --gap 0.05``), the light sliders' median went from 48 to 22 ms.

    Accepted connections inherit ``TCP_NODELAY`` from the listening socket (Linux and the BSDs), so setting it on
    the listener covers every later tab; the connections already open, the first tab's among them, are set here.
    Where the process's descriptors cannot be listed (Windows), nothing changes.
    """
    fd_dir = next((d for d in ("/proc/self/fd", "/dev/fd") if os.path.isdir(d)), None)
    if fd_dir is None:
        return 0
    done = 0
    for name in os.listdir(fd_dir):
        with contextlib.suppress(OSError, ValueError):
            fd = int(name)
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            sock = socket.socket(fileno=fd)
            try:
                if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    done += 1
            finally:
                sock.detach()  # the descriptor stays the server's: only the option changed
    return done
