r"""One process of a class's deployment: the lab's warm-up first, then ``streamlit run`` with the arguments given.

    python -m posenc_ui.serve.backend app.py --server.port 8601 ...

A process imports torch, and times a few training steps, the first time it shows the lab page
(:func:`posenc_ui.lessons.lab.runner.warm_up`). During a class that happens while students are moving sliders, and it
holds the interpreter for seconds: in a round of 20 students (``bench/load.py``, one process, two runs of each
taking turns, 2026-11-26) the p95 was 1.03-1.47 s with the warm-up inside the round and 0.51-0.60 s with it done
before. Here it runs while the process waits for its first student. The cost is memory: every process holds torch
from the start.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from streamlit.web.cli import main as streamlit_main

from ..lessons.lab.runner import warm_up


def main(args: Sequence[str]) -> None:
    warm_up()  # a thread of its own: the server starts at once
    sys.argv = ["streamlit", "run", *args]  # what Streamlit shows as its command line
    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main(sys.argv[1:])
