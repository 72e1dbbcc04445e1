r"""Learned absolute position embeddings: one trainable row per position (BERT, GPT-2, RoBERTa).

Devlin et al. 2018 (BERT, arXiv:1810.04805, §3.2) add a learned ``(max_length, d)`` table to the token embeddings;
BERT uses max_length = 512. The table has no row for position ≥ max_length, so such a model cannot even *represent*
a longer input — the hard wall that relative schemes remove. (RoBERTa/fairseq shift positions by padding_idx + 1,
so their 514-row tables still serve 512 tokens.)

Nothing is trained here: the table is what a model starts from, N(0, 0.02²) as BERT's ``initializer_range``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .errors import MAX_ELEMENTS, PosEncError, as_array, as_int, check_elements

__all__ = ["EmbeddingSum", "PositionOutOfRangeError", "embedding_sum_as_linear", "learned_table", "lookup_positions"]

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


class EmbeddingSum(NamedTuple):
    r"""Both sides of "adding embeddings = one linear layer over concatenated one-hots"."""

    summed: np.ndarray  # (L, d)      Σ_t E_t[ids_t]
    one_hot: np.ndarray  # (L, ΣV_t)  [onehot(ids_0) ‖ onehot(ids_1) ‖ …]
    weight: np.ndarray  # (ΣV_t, d)   [E_0; E_1; …] stacked
    linear: np.ndarray  # (L, d)      one_hot @ weight


def embedding_sum_as_linear(ids: Sequence[object], tables: Sequence[object]) -> EmbeddingSum:
    r"""BERT's input :math:`E_{tok}[t] + E_{pos}[p] + E_{seg}[s]`, and the same vectors as one linear layer.

    An embedding lookup is a linear layer applied to a one-hot vector, :math:`E[t] = \mathbf{1}_t^\top E`, so a sum
    of lookups is one linear layer over the concatenated one-hots,
    :math:`[\mathbf{1}_t \Vert \mathbf{1}_p \Vert \mathbf{1}_s]\,[E_{tok}; E_{pos}; E_{seg}]` (syllabus 001, QA).
    ``ids[t]`` (L,) indexes ``tables[t]`` (V_t, d); all tables share d and all id lists share L.
    """
    if isinstance(ids, str | bytes) or isinstance(tables, str | bytes):
        raise PosEncError("ids and tables must be lists (one id list per table)")
    try:
        ids, tables = list(ids), list(tables)
    except TypeError as exc:
        raise PosEncError("ids and tables must be lists (one id list per table)") from exc
    if not tables or len(ids) != len(tables):
        raise PosEncError(f"need one id list per table, got {len(ids)} id lists and {len(tables)} tables")
    tables = [as_array(f"tables[{n}]", table, ndim=2) for n, table in enumerate(tables)]
    columns = [as_array(f"ids[{n}]", idx, ndim=1, integer=True) for n, idx in enumerate(ids)]
    if len({table.shape[1] for table in tables}) != 1:
        raise PosEncError(f"all tables must have the same width, got shapes {[t.shape for t in tables]}")
    if len({idx.shape[0] for idx in columns}) != 1:
        raise PosEncError(f"all id lists must have the same length, got {[idx.shape[0] for idx in columns]}")
    for n, (table, idx) in enumerate(zip(tables, columns, strict=True)):
        if idx.min() < 0 or idx.max() >= table.shape[0]:
            raise PosEncError(f"ids[{n}] must lie in 0 … {table.shape[0] - 1} (rows of tables[{n}])")
    length, vocab = columns[0].shape[0], sum(table.shape[0] for table in tables)
    check_elements("embedding_sum_as_linear one-hot matrix", (length, vocab))
    summed = sum(table[idx] for table, idx in zip(tables, columns, strict=True))  # (L, d)
    one_hot = np.zeros((length, vocab))
    offsets = np.cumsum([0] + [table.shape[0] for table in tables[:-1]])
    for offset, idx in zip(offsets, columns, strict=True):
        one_hot[np.arange(length), offset + idx] = 1.0  # (L, ΣV)
    weight = np.concatenate(tables, axis=0)  # (ΣV, d)
    return EmbeddingSum(summed, one_hot, weight, one_hot @ weight)
