r"""The toy head's entropies that page 7 shows, computed once by the core and stored (``assets/computed/``).

The entropy check (:func:`.reasons.check_entropy`) compares the toy head's mean entropy over 256 queries at n = L
and n = s·L (:func:`posenc_core.entropy_by_length`): up to 3 × 256 × 32 768 exponentials and 8 M normal draws a
factor, 0.3–1.8 s of a server process on the 2-core machine. The page queue (:mod:`posenc_ui.turns`) runs one page
script at a time, so every student of that process waited while one moved s, and page 7's reruns cost ten times the
others' (issue 46). The entropy figure's curves (36 lengths, 16 queries: 0.3 s) are the same for every reader.
Neither depends on the model, the method, another slider or the reader: s alone picks the check's means. So both are
computed once, by the core, for every s of the slider, and kept in :data:`TABLE` with the settings that made them; a
move of s reads them. ``tests/app/test_extension_perf.py`` recomputes them with the core and compares; a file whose
settings are not the lesson's is ignored (the page computes live, as before). To rewrite it (20 s):

    python -m posenc_ui.lessons.extension.entropy_write
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from posenc_core import EntropyCurves, entropy_by_length

from ...paths import COMPUTED

TABLE = COMPUTED / "extension_entropy.json"


def settings(training_length: int, lengths: Sequence[int], figure_queries: int, check_queries: int) -> dict[str, Any]:
    r"""What the stored numbers depend on besides s: the toy head's L, the figure's lengths, the queries of the figure
    and of the check, σ (the core's default, which the lesson keeps) and the draw (seed 0)."""
    std = inspect.signature(entropy_by_length).parameters["std"].default
    return {
        "training_length": int(training_length),
        "lengths": [int(n) for n in lengths],
        "figure_queries": int(figure_queries),
        "check_queries": int(check_queries),
        "std": std,
        "seed": 0,
    }


@functools.cache
def _read() -> dict[str, Any]:
    r"""The file's contents (read once a process: it changes only with the code); empty when it is missing."""
    try:
        return json.loads(TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _stored(made_with: Mapping[str, Any]) -> dict[str, Any]:
    data = _read()
    return data if data.get("settings") == dict(made_with) else {}


def stored_curves(made_with: Mapping[str, Any]) -> EntropyCurves | None:
    r"""The entropy figure's curves as stored, if the file was made with ``made_with`` (:func:`settings`)."""
    curves = _stored(made_with).get("curves")
    return None if curves is None else EntropyCurves(**{name: np.array(c) for name, c in curves.items()})


def stored_changes(factor: int, made_with: Mapping[str, Any]) -> dict[str, float] | None:
    r"""Curve → the check's mean entropy change from n = L to n = s·L as stored, if the file was made with
    ``made_with`` and holds s."""
    changes = _stored(made_with).get("changes", {}).get(str(factor))
    return None if changes is None else dict(changes)


def write(made_with: Mapping[str, Any], curves: EntropyCurves, changes: Mapping[int, Mapping[str, float]]) -> None:
    r"""Rewrite :data:`TABLE`: the settings, the figure's curves and each factor's means."""
    data = {
        "settings": dict(made_with),
        "curves": {name: [float(x) for x in curve] for name, curve in curves._asdict().items()},
        "changes": {str(s): {name: float(x) for name, x in c.items()} for s, c in changes.items()},
    }
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    _read.cache_clear()
