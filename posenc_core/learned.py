r"""Learned absolute position embeddings: one trainable row per position (BERT, GPT-2, RoBERTa).

Devlin et al. 2018 (BERT, arXiv:1810.04805, §3.2) add a learned ``(max_length, d)`` table to the token embeddings;
BERT uses max_length = 512. The table has no row for position ≥ max_length, so such a model cannot even *represent*
a longer input — the hard wall that relative schemes remove. (RoBERTa/fairseq shift positions by padding_idx + 1,
so their 514-row tables still serve 512 tokens.)

Nothing is trained here: the table is what a model starts from, N(0, 0.02²) as BERT's ``initializer_range``.
:func:`neighbour_cosine` and :func:`row_distances` read a table someone else trained (page 4 reads the lab's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .errors import MAX_ELEMENTS, PosEncError, as_array, as_float, as_int, check_elements

__all__ = [
    "EmbeddingSum",
    "PositionOutOfRangeError",
    "TrainedRowChange",
    "embedding_sum_as_linear",
    "learned_table",
    "lookup_positions",
    "neighbour_cosine",
    "neighbour_cosine_means",
    "random_cosine_band",
    "row_distances",
    "trained_row_change",
]

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
            f"(max_length = {max_length}), and a learned absolute table cannot extrapolate past it",
            code="position_out_of_range",
            position=first,
            max_length=max_length,
        )
    check_elements("lookup_positions result", (*pos.shape, table.shape[1]))
    return table[pos]


def neighbour_cosine(table: object) -> np.ndarray:
    r"""How alike each row is to the next: :math:`\cos(E_p, E_{p+1})` for p = 0 … n − 2, shape (n − 1,).

    A table that varies smoothly with position (sinusoids of long wavelength, or rows that training has made to
    change slowly) gives values near 1: neighbours point almost the same way. Rows that are independent random
    vectors give values near 0, within :func:`random_cosine_band`: for x and y independent with i.i.d. N(0, σ²)
    entries, x/‖x‖ is uniform on the unit sphere whatever y is, so :math:`c = \cos(x, y)` is distributed as one
    coordinate of a uniform unit vector. Its d squared coordinates sum to 1 and are exchangeable, hence
    :math:`E[c] = 0`, :math:`E[c^2] = 1/d`: c ≈ 0 ± 1/√d, and √d·c → N(0, 1) as d grows.

    A zero row has no direction: :class:`PosEncError`.
    """
    table = as_array("table", table, ndim=2).astype(np.float64, copy=False)
    if table.shape[0] < 2:
        raise PosEncError(f"table must have at least 2 rows (positions), got shape {table.shape}")
    scale = np.max(np.abs(table), axis=1, keepdims=True)  # norms of rescaled rows cannot overflow
    if np.any(scale == 0):
        raise PosEncError(f"row {int(np.argmax(scale[:, 0] == 0))} of the table is all zeros: it has no direction")
    unit = table / scale
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    return np.clip(np.sum(unit[:-1] * unit[1:], axis=1), -1.0, 1.0)


def random_cosine_band(dim: int, *, z: float = 2.0) -> float:
    r"""The half-width z/√d inside which the cosine of two independent random d-vectors falls.

    Its standard deviation is exactly 1/√d (:func:`neighbour_cosine` derives it), so ±2/√d holds about 95 % of
    random pairs once d is a few dozen (√d·cos is then nearly N(0, 1)); d = 64 gives ±0.25.
    """
    dim = as_int("dim", dim, lo=1, hi=MAX_ELEMENTS)
    z = as_float("z", z, gt=0.0)
    return z / math.sqrt(dim)


def row_distances(a: object, b: object) -> np.ndarray:
    r""":math:`\lVert a_p - b_p \rVert_2` for every row p of two tables of one shape, shape (n,).

    Two models built from one seed start from the same table; trained on different tasks, they move the rows
    training uses, each its own way, and leave every other row as it was. A row at distance exactly 0 in two such
    tables is one that training never touched.
    """
    a = as_array("a", a, ndim=2).astype(np.float64, copy=False)
    b = as_array("b", b, ndim=2).astype(np.float64, copy=False)
    if a.shape != b.shape:
        raise PosEncError(f"the tables must have one shape, got {a.shape} and {b.shape}")
    with np.errstate(over="ignore"):
        diff = a - b
    if not np.all(np.isfinite(diff)):
        raise PosEncError("table values are too large: their differences overflow float64")
    scale = np.max(np.abs(diff), axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    return scale[:, 0] * np.linalg.norm(diff / scale, axis=1)


def neighbour_cosine_means(table: object, *, trained: int) -> tuple[float, float]:
    r"""Mean of :func:`neighbour_cosine` over the pairs of trained rows, :math:`\cos(E_p, E_{p+1})` for
    p + 1 < ``trained``, and over the pairs that hold an untouched row (p + 1 ≥ ``trained``).

    Rows from ``trained`` on never received a gradient (no training sequence reaches them). Both means near 0,
    inside :func:`random_cosine_band`, say training made the table no smoother than random rows.
    """
    cos = neighbour_cosine(table)  # (n − 1,): pair p is (row p, row p + 1)
    trained = as_int("trained", trained, lo=2, hi=cos.shape[0])
    return float(np.mean(cos[: trained - 1])), float(np.mean(cos[trained - 1 :]))


class TrainedRowChange(NamedTuple):
    r"""How two tables that started equal differ, rows before ``trained`` against the rest."""

    moved_min: float  # smallest ‖a_p − b_p‖ over p < trained: > 0 when every trained row moved
    moved_mean: float  # mean ‖a_p − b_p‖ over p < trained
    untouched_max: float  # largest ‖a_p − b_p‖ over p ≥ trained: 0 exactly when no untouched row moved
    mean_norm: float  # mean ‖a_p‖ over every row of a: the scale the distances compare to


def trained_row_change(a: object, b: object, *, trained: int) -> TrainedRowChange:
    r""":func:`row_distances` :math:`\lVert a_p - b_p\rVert_2` split at ``trained``: smallest and mean over the
    trained rows, largest over the untouched ones, and the mean row norm of ``a``.

    Two models trained from one seed on different tasks: a row no sequence reaches keeps its initial value in both,
    so ``untouched_max`` is 0 exactly, while every trained row moved (``moved_min`` > 0).
    """
    distance = row_distances(a, b)  # (n,)
    trained = as_int("trained", trained, lo=1, hi=distance.shape[0] - 1)
    moved, kept = distance[:trained], distance[trained:]
    norms = np.linalg.norm(np.asarray(a, dtype=np.float64), axis=1)
    return TrainedRowChange(float(np.min(moved)), float(np.mean(moved)), float(np.max(kept)), float(np.mean(norms)))


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
    :math:`[\mathbf{1}_t \Vert \mathbf{1}_p \Vert \mathbf{1}_s]\,[E_{tok}; E_{pos}; E_{seg}]` (the Q&A of
    mmmwhy's 「Transformer 中的 position embedding 的设计」).
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
