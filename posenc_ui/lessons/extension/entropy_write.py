r"""Rewrite page 7's stored entropies (:mod:`.entropy_table`) with the core, for every factor of the slider.

    python -m posenc_ui.lessons.extension.entropy_write     # about 20 s on the 2-core machine

Run it after changing what they depend on (the toy head's L, its lengths, the queries, σ): until then the page
ignores the file and computes live, and ``tests/app/test_extension_perf.py`` fails.
"""

from __future__ import annotations

import argparse

from posenc_core import entropy_by_length

from . import entropy_table
from .reasons import ENTROPY_LENGTH, ENTROPY_LENGTHS, FIGURE_QUERIES, TABLE_SETTINGS, entropy_changes
from .view import VIEW


def main() -> None:
    factor = VIEW.param("factor")
    curves = entropy_by_length(ENTROPY_LENGTHS, training_length=ENTROPY_LENGTH, queries=FIGURE_QUERIES)
    changes = {s: entropy_changes(s) for s in range(factor.lo, factor.hi + 1)}
    entropy_table.write(TABLE_SETTINGS, curves, changes)
    print(f"wrote {entropy_table.TABLE}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # no options: --help says what it does
    main()
