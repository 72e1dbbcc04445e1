r"""The toy head's entropies that page 7 shows, computed once by the core and stored beside the lesson.

The entropy check (:func:`.reasons.check_entropy`) compares the toy head's mean entropy over
:data:`~.reasons.CHECK_QUERIES` queries at n = L and n = s·L (:func:`posenc_core.entropy_by_length`): up to
3 × 256 × 32 768 exponentials and 8 M normal draws a factor, 0.3–1.8 s of a server process on the 2-core machine.
The page queue (:mod:`posenc_ui.turns`) runs one page script at a time, so every student of that process waited
while one moved s, and page 7's reruns cost ten times the others' (issue 46). The entropy figure's curves (36 lengths,
16 queries: 0.3 s) are the same for every reader. Neither depends on the model, the method, another slider or the
reader: s alone picks the check's means. So both are computed once, by the core, for every s of the slider, and
kept in ``entropy.json`` beside this module with the settings that made them; a move of s reads them.
``tests/app/test_extension_perf.py`` recomputes them with the core and compares; a stored file whose settings no
longer match the lesson's is ignored, and the page computes live as before.

    python -c "from posenc_ui.lessons.extension import entropy_table; entropy_table.main()"   # rewrite it (20 s)
"""

from __future__ import annotations

import functools
import inspect
import json
from pathlib import Path
from typing import Any

import numpy as np

from posenc_core import EntropyCurves, entropy_by_length

TABLE = Path(__file__).with_name("entropy.json")


def settings() -> dict[str, Any]:
    r"""What the stored numbers depend on besides s: the toy head's L, its lengths, σ, the queries and the draw."""
    from .reasons import CHECK_QUERIES, ENTROPY_LENGTH, ENTROPY_LENGTHS, FIGURE_QUERIES

    std = inspect.signature(entropy_by_length).parameters["std"].default  # the lesson leaves σ at the core's default
    return {
        "training_length": ENTROPY_LENGTH,
        "lengths": [int(n) for n in ENTROPY_LENGTHS],
        "figure_queries": FIGURE_QUERIES,
        "check_queries": CHECK_QUERIES,
        "std": std,
        "seed": 0,
    }


@functools.cache
def _stored() -> dict[str, Any]:
    r"""The file's contents; empty when it is missing or was made with other settings than the lesson's (read once a
    process: the file changes only with the code)."""
    try:
        data = json.loads(TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if data.get("settings") == settings() else {}


def figure_curves() -> EntropyCurves:
    r"""The entropy figure's curves: :func:`posenc_core.entropy_by_length` at the lesson's lengths over
    :data:`~.reasons.FIGURE_QUERIES` queries, as stored (else computed now)."""
    stored = _stored().get("curves")
    if stored is not None:
        return EntropyCurves(**{name: np.array(curve) for name, curve in stored.items()})
    return compute_curves()


def entropy_changes_at(factor: int) -> dict[str, float]:
    r"""Curve → the check's mean entropy change from n = L to n = s·L, as stored (else computed now by
    :func:`.reasons.entropy_changes`, which caches it)."""
    stored = _stored().get("changes", {}).get(str(factor))
    if stored is not None:
        return dict(stored)
    from .reasons import entropy_changes

    return entropy_changes(factor)


def compute_curves() -> EntropyCurves:
    r"""The entropy figure's curves, computed by the core (0.3 s)."""
    from .reasons import ENTROPY_LENGTH, ENTROPY_LENGTHS, FIGURE_QUERIES

    return entropy_by_length(ENTROPY_LENGTHS, training_length=ENTROPY_LENGTH, queries=FIGURE_QUERIES)


def compute(factors: range) -> dict[str, Any]:
    r"""The file's contents: the settings, the figure's curves and every factor's means, computed by the core."""
    from .reasons import entropy_changes

    curves = {name: [float(x) for x in curve] for name, curve in compute_curves()._asdict().items()}
    return {"settings": settings(), "curves": curves, "changes": {str(s): entropy_changes(s) for s in factors}}


def main() -> None:
    r"""Rewrite :data:`TABLE` for every factor the lesson's slider reaches."""
    from .view import VIEW

    factor = VIEW.param("factor")
    TABLE.write_text(json.dumps(compute(range(factor.lo, factor.hi + 1)), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {TABLE}")
