r"""Heap settings for the server process: the long-lived objects leave the garbage collector's sight once."""

from __future__ import annotations

import gc

_heap_frozen = False


def freeze_heap() -> None:
    r"""Once per server process, after the first page's imports: hand everything alive to the GC's permanent generation.

    Modules, plotly's validators and Streamlit's runtime (some 150 000 objects that live as long as the server)
    would otherwise be traversed by every full collection: 130–220 ms each under classroom load, every session
    waiting on the GIL meanwhile (``bench/load.py``; the README's classroom section has the figures).
    """
    global _heap_frozen
    if not _heap_frozen:
        _heap_frozen = True
        gc.collect()
        gc.freeze()
