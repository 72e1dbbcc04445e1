r"""One process of a class's deployment: the warm-ups first, then ``streamlit run`` with the arguments given.

    python -m posenc_ui.serve.backend app.py --server.port 8601 ...

A process imports torch, and times a few training steps, the first time it shows the lab page
(:func:`posenc_ui.lessons.lab.runner.warm_up`). During a class that happens while students are moving sliders, and it
holds the interpreter for seconds: in a round of 20 students (``bench/load.py``, one process, two runs of each
taking turns, 2026-11-26) the p95 was 1.03-1.47 s with the warm-up inside the round and 0.51-0.60 s with it done
before. Here it runs while the process waits for its first student. The cost is memory: every process holds torch
from the start.

Every page's figures and checks at its defaults, in both languages, are computed here too (:func:`warm_pages`): what
every student sees first, and what reads no parameter (Sinusoidal's probe over twelve random blocks, Compare's rank
check, page 10's entropy curves: seconds each on the 2-core machine, once a process). Computed by the first student
of each page, they had held every other student of the process in the page queue behind that rerun (issue 46).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Iterable, Sequence

from streamlit.web.cli import main as streamlit_main

from posenc_core import PosEncError

from ..i18n import LANGS
from ..lesson import View
from ..lessons.lab.runner import warm_up
from ..state import defaults


def warmed_views() -> list[View]:
    r"""The views :func:`warm_pages` computes by default: every page's but the real model's. Its shipped passage is
    answered from shipped results in about a second on its first visit; but where those are not this installation's
    (another transformers release), warming it would load the model (~1.2 GB) and run minutes of its forwards in every
    backend before anyone asks, and fetch it from the package index where it is not cached yet."""
    from ..lessons import PAGES  # here, not above: the server starts before every page is imported

    return [page.view for page in PAGES if not page.runs_model]


def warm_pages(views: Iterable[View] | None = None, langs: Iterable[str] = LANGS) -> int:
    r"""Compute every cached figure and check of ``views`` at their defaults in each language (into the shared
    memory, :mod:`posenc_ui.memo`); return how many. A recipe the core refuses at its defaults is skipped here (the
    page says why when it is drawn); recipes that are not cached (:func:`~posenc_ui.lesson.reads`) are left alone."""
    if views is None:
        views = warmed_views()
    done = 0
    for view in views:
        for lang in langs:
            values = defaults(view.params, lang)
            recipes = [(r, (lang,)) for r in view.figures.values()] + [(r, ()) for r in view.checks.values()]
            for recipe, rest in recipes:
                if not getattr(recipe, "cached", False):
                    continue
                try:
                    recipe(values, *rest)
                except PosEncError:
                    continue
                done += 1
    return done


def _port(args: Sequence[str]) -> int:
    r"""The port ``streamlit run`` is given (``--server.port N`` or ``--server.port=N``; Streamlit's 8501 if none)."""
    for i, arg in enumerate(args):
        if arg == "--server.port" and i + 1 < len(args):
            return int(args[i + 1])
        if arg.startswith("--server.port="):
            return int(arg.split("=", 1)[1])
    return 8501


def warm_pages_once_serving(port: int, *, timeout: float = 300.0) -> None:
    r""":func:`warm_pages` once the server accepts connections on ``port``: begun at once, the warm-up held the
    interpreter while Streamlit started, and a busy 2-core machine's server then missed its 60 s start-up limit."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                break
        except OSError:
            time.sleep(0.2)
    warm_pages()


#: ``POSENC_WARM_PAGES=off`` starts a backend without :func:`warm_pages` (``bench/load.py --cold-pages``: a class
#: arriving at a process that has computed nothing, e.g. to measure a page's cold cost).
WARM_PAGES_ENV = "POSENC_WARM_PAGES"


def main(args: Sequence[str]) -> None:
    warm_up()  # a thread of its own: the server starts at once
    if os.environ.get(WARM_PAGES_ENV, "on").strip().lower() != "off":
        threading.Thread(
            target=warm_pages_once_serving, args=(_port(args),), name="posenc-page-warm-up", daemon=True
        ).start()
    sys.argv = ["streamlit", "run", *args]  # what Streamlit shows as its command line
    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main(sys.argv[1:])
