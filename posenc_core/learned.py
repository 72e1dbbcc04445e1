r"""Learned absolute position embeddings: one trainable row per position (BERT, GPT-2, RoBERTa).

Devlin et al. 2018 (BERT, arXiv:1810.04805, §3.2) add a learned ``(max_length, d)`` table to the token embeddings;
BERT uses max_length = 512. The table has no row for position ≥ max_length, so such a model cannot even *represent*
a longer input — the hard wall that relative schemes remove. (RoBERTa/fairseq shift positions by padding_idx + 1,
so their 514-row tables still serve 512 tokens.)

Nothing is trained here: the table is what a model starts from, N(0, 0.02²) as BERT's ``initializer_range``.
"""

from __future__ import annotations

import numpy as np

from .errors import MAX_ELEMENTS, PosEncError, as_array, as_int, check_elements

__all__ = ["PositionOutOfRangeError", "learned_table", "lookup_positions"]

#: BERT's ``initializer_range``: the standard deviation every embedding table starts from.
INIT_STD = 0.02


class PositionOutOfRangeError(PosEncError):
    """A position has no row in a learned table: learned absolute embeddings cannot extrapolate."""


def learned_table(max_length: int, dim: int, *, seed: int = 0) -> np.ndarray:
    r"""A freshly initialised (max_length, d) table, entries i.i.d. N(0, 0.02²), reproducible for a ``seed``."""
    max_length = as_int("max_length", max_length, lo=1, hi=MAX_ELEMENTS)
    dim = as_int("dim", dim, lo=1, hi=MAX_ELEMENTS)
    seed = as_int("seed", seed, lo=0, hi=2**63 - 1)
    check_elements("learned_table(max_length, dim)", (max_length, dim))
    return np.random.default_rng(seed).normal(0.0, INIT_STD, size=(max_length, dim))


def lookup_positions(table: np.ndarray, positions: object) -> np.ndarray:
    r"""Rows ``table[positions]``, shape positions.shape + (d,).

    Raises :class:`PositionOutOfRangeError` for any position outside 0 … max_length − 1, naming the first one.
    """
    table = as_array("table", table, ndim=2)
    pos = as_array("positions", positions, integer=True, allow_empty=True)
    max_length = table.shape[0]
    bad = (pos < 0) | (pos >= max_length)
    if np.any(bad):
        first = int(pos[bad].flat[0])
        raise PositionOutOfRangeError(
            f"position {first} has no row: the table was learned for positions 0 … {max_length - 1} "
            f"(max_length = {max_length}), and a learned absolute table cannot extrapolate past it"
        )
    check_elements("lookup_positions result", (*pos.shape, table.shape[1]))
    return table[pos]
