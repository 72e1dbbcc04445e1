r"""One page script at a time per server process, in the order they asked: a queue in front of the interpreter.

Streamlit runs each session's script in a thread of its own, and Python runs one thread at a time. Left alone, fifty
students' reruns share the interpreter lock by switching every few milliseconds and at every socket write, so each
rerun ends only when most of the others do, and the switching itself costs CPU. Queued, a rerun runs to its end
while the others sleep: the same work, each answer sooner, less spent on switching. ``bench/load.py`` measures it
(docs/benchmarks.md, "A class at once", has the figures).

    with TURNS:
        ...                     # draw the page

    with TURNS.aside():
        ...                     # wait for something slow (a live training run) without holding up other students

:class:`Turns` is a first-come-first-served lock: a thread that leaves hands the turn straight to the one that has
waited longest, so no student's rerun is overtaken indefinitely (``threading.Lock`` wakes waiters in no set order).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager


class Turns:
    r"""A first-come-first-served mutual-exclusion lock; ``with turns:`` holds it, ``with turns.aside():`` lends it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._waiting: deque[threading.Lock] = deque()
        self._held = False
        self._owner: int | None = None  # the thread holding the turn

    def acquire(self) -> None:
        with self._guard:
            if not self._held:
                self._held, self._owner = True, threading.get_ident()
                return
            baton = threading.Lock()
            baton.acquire()
            self._waiting.append(baton)
        baton.acquire()  # released by release(), which hands the turn to us (it never becomes free in between)
        with self._guard:
            self._owner = threading.get_ident()

    def release(self) -> None:
        with self._guard:
            if not self._held or self._owner != threading.get_ident():
                raise RuntimeError("Turns.release() without a turn held by this thread")
            self._owner = None
            if self._waiting:
                self._waiting.popleft().release()
            else:
                self._held = False

    @property
    def waiting(self) -> int:
        r"""How many threads are queued for the turn now."""
        return len(self._waiting)

    def __enter__(self) -> Turns:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @contextmanager
    def aside(self) -> Iterator[None]:
        r"""Give the turn up for the body (which must be held on entry), then queue for it again."""
        self.release()
        try:
            yield
        finally:
            self.acquire()


class NoTurns:
    r"""The same interface with no queue: every page script runs at once, as Streamlit runs them by default."""

    waiting = 0

    def __enter__(self) -> NoTurns:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    @contextmanager
    def aside(self) -> Iterator[None]:
        yield


#: The server setting: ``POSENC_PAGE_QUEUE=off`` runs page scripts concurrently (``bench/load.py --queue off``).
QUEUE_ENV = "POSENC_PAGE_QUEUE"
_SETTINGS = {"on": True, "off": False}


def queue_from_env(environ: Mapping[str, str] = os.environ) -> Turns | NoTurns:
    r"""The page queue ``$POSENC_PAGE_QUEUE`` asks for: ``on`` (the default) or ``off``; anything else is an error."""
    setting = environ.get(QUEUE_ENV, "on").strip().lower()
    if setting not in _SETTINGS:
        raise ValueError(f"{QUEUE_ENV}={setting!r}: use 'on' or 'off'")
    return Turns() if _SETTINGS[setting] else NoTurns()


#: The server's queue: every page script holds it from :func:`posenc_ui.frame.start` to the end of the page.
TURNS = queue_from_env()
