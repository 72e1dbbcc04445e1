r"""Where position lives once it is added to the word vectors: linear probes of the residual stream.

:func:`residual_stream_probe` follows a position code through random blocks, with and without the residual
connection (He et al. 2016, arXiv:1512.03385); :func:`position_readout` compares, at the input, a linear probe with
the best any linear map can do and with the nearest row of the table. The question is Kazemnejad's ("Transformer
Architecture: The Positional Encoding", 2019, FAQ): how does position reach later layers, and can it be read apart
from the word?
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np

from .errors import PosEncError, as_array, as_bool, as_choice, as_int, check_elements

__all__ = ["PROBE_READS", "PositionReadout", "position_readout", "residual_stream_probe"]

#: What :func:`residual_stream_probe` reads back from the stream: the position code, the word vectors, or both from
#: the same fits (one least-squares solve per block for both targets).
PROBE_READS = ("position", "word", "both")
#: The word vectors' variance per coordinate: ½, the power of a sinusoid's entries.
_WORD_VARIANCE = 0.5


def residual_stream_probe(
    table: object, *, layers: int, residual: bool = True, seed: int = 0, read: str = "position"
) -> np.ndarray:
    r"""How well a linear probe reads the position code (or, ``read="word"``, the word vectors) back after each of
    ``layers`` random blocks: R², shape (layers + 1,), entry 0 at the input; ``read="both"`` gives (2, layers + 1),
    position then word, from the same stream.

    Each position holds a random word vector (N(0, ½) per coordinate, the power of a sinusoid's entries) plus its row
    of ``table`` (L, d). A block is a pre-LayerNorm ReLU MLP of width 4d with random weights (variance-preserving);
    ``residual=True`` adds its output to the stream, :math:`h \leftarrow h + F(h)`, ``False`` replaces the stream,
    :math:`h \leftarrow F(h)`. After each block a least-squares probe :math:`h \mapsto` table is fitted on the even
    positions and scored (R²) on the odd ones. With the residual stream the position code stays linearly readable
    through depth; without it, it is not, within a few blocks — and neither is the word (``read="word"``, the same
    draws): random, untrained blocks scramble everything, so that loss is not specific to position.

    The question is Kazemnejad's ("Transformer Architecture: The Positional Encoding", 2019, FAQ): how does position
    reach later layers? The residual connection is He et al. 2016 (arXiv:1512.03385).
    """
    table = as_array("table", table, ndim=2)
    layers = as_int("layers", layers, lo=0, hi=64)
    residual = as_bool("residual", residual)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    read = as_choice("read", read, PROBE_READS)
    length, dim = table.shape
    if length < 2 * (dim + 2):
        raise PosEncError(f"table needs at least 2·(d + 2) = {2 * (dim + 2)} rows for a held-out probe, got {length}")
    check_elements("residual_stream_probe", (length, 4 * dim))
    _check_held_out_rows_vary(table)
    rng = np.random.default_rng(seed)
    words = rng.standard_normal((length, dim)) * math.sqrt(_WORD_VARIANCE)  # (L, d)
    h = words + table  # (L, d): word + position
    targets = {"position": (table,), "word": (words,), "both": (table, words)}[read]
    scores = [_probe_r2s(h, targets)]
    for _ in range(layers):
        w1 = rng.standard_normal((dim, 4 * dim)) / math.sqrt(dim)  # (d, 4d)
        w2 = rng.standard_normal((4 * dim, dim)) / math.sqrt(2 * dim)  # (4d, d): ReLU halves the variance
        z = (h - h.mean(axis=1, keepdims=True)) / (h.std(axis=1, keepdims=True) + 1e-12)  # LayerNorm, no gain
        block = np.maximum(z @ w1, 0.0) @ w2
        h = h + block if residual else block
        scores.append(_probe_r2s(h, targets))
    curves = np.asarray(scores).T  # (targets, layers + 1)
    return curves if read == "both" else curves[0]


class PositionReadout(NamedTuple):
    r"""R² of three ways to read the position code from word + position at the input."""

    linear: float  # the least-squares probe, fitted on even positions, scored on odd ones
    ceiling: float  # the best any linear map can do: Σλ²/(λ + σ²) / Σλ
    curve: float  # the nearest row of the table: a decoder that knows the curve


def position_readout(table: object, *, seed: int = 0) -> PositionReadout:
    r"""How much of the position code three readers recover from :math:`h = w + p` at the input: a linear probe, the
    ceiling of every linear map, and the nearest row of the table, as R².

    Same draws as :func:`residual_stream_probe` (word vectors :math:`w \sim N(0, \sigma^2 I)`, σ² = ½, the power of
    a sinusoid's entries). The best linear map is
    :math:`\hat p = \mu + \Sigma_p(\Sigma_p + \sigma^2 I)^{-1}(h - \mu)` (linear least squares with p uniform over
    the rows, w independent of p), whose R² is :math:`\sum_k \lambda_k^2/(\lambda_k + \sigma^2) / \sum_k \lambda_k`
    over the eigenvalues of the table's covariance: every direction the code spans carries word noise of the same
    power, and no linear map can remove it. The nearest row, :math:`\arg\min_m \lVert h - p_m\rVert`, is the
    maximum-likelihood position under isotropic Gaussian words; it is not linear, and it knows the table.
    Kazemnejad 2019 (FAQ) asks where position lives once added; this answers "not apart from the word, for a linear
    reader".
    """
    table = as_array("table", table, ndim=2).astype(np.float64, copy=False)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    length, dim = table.shape
    if length < 2 * (dim + 2):
        raise PosEncError(f"table needs at least 2·(d + 2) = {2 * (dim + 2)} rows for a held-out probe, got {length}")
    check_elements("position_readout", (length, length))
    if np.max(np.abs(table)) > 1e100:  # squares and covariances of larger entries overflow float64
        raise PosEncError("table entries must be at most 1e100 in size (the readout squares them)")
    _check_held_out_rows_vary(table)
    words = np.random.default_rng(seed).standard_normal((length, dim)) * math.sqrt(_WORD_VARIANCE)
    h = words + table  # (L, d): the same stream as residual_stream_probe's input
    eigen = np.clip(np.linalg.eigvalsh(np.cov(table.T, bias=True)), 0.0, None)  # (d,): the code's spread
    total = float(eigen.sum())
    if total == 0.0:
        raise PosEncError("table must vary across positions (every row is the same)")
    ceiling = float(np.sum(eigen**2 / (eigen + _WORD_VARIANCE))) / total
    # ‖h − p_m‖² = ‖h‖² − 2 h·p_m + ‖p_m‖²: the nearest row maximises 2 h·p_m − ‖p_m‖²
    nearest = np.argmax(2.0 * h @ table.T - np.sum(table**2, axis=1)[None, :], axis=1)  # (L,)
    spread = float(np.sum((table - table.mean(axis=0)) ** 2))
    curve = 1.0 - float(np.sum((table[nearest] - table) ** 2)) / spread
    return PositionReadout(_probe_r2(h, table), ceiling, curve)


def _check_held_out_rows_vary(table: np.ndarray) -> None:
    r"""R² divides by the spread of the held-out (odd) rows: a table whose odd rows are all equal has no R²."""
    if np.all(table[1::2] == table[1]):
        raise PosEncError("table must vary across positions: its held-out (odd) rows are all the same")


def _probe_r2s(h: np.ndarray, targets: tuple[np.ndarray, ...]) -> list[float]:
    r""":func:`_probe_r2` for several targets at once: one least-squares solve, one R² per target."""
    stacked = np.concatenate(targets, axis=1)
    features = np.c_[h, np.ones(h.shape[0])]
    weights, *_ = np.linalg.lstsq(features[0::2], stacked[0::2], rcond=None)
    error = features[1::2] @ weights - stacked[1::2]
    spread = stacked[1::2] - stacked[1::2].mean(axis=0)
    bounds = np.cumsum([0] + [t.shape[1] for t in targets])
    return [
        float(1.0 - np.sum(error[:, a:b] ** 2) / np.sum(spread[:, a:b] ** 2)) for a, b in itertools.pairwise(bounds)
    ]


def _probe_r2(h: np.ndarray, target: np.ndarray) -> float:
    r"""R² on the odd rows of a least-squares map (with intercept) from h to target fitted on the even rows."""
    features = np.c_[h, np.ones(h.shape[0])]
    weights, *_ = np.linalg.lstsq(features[0::2], target[0::2], rcond=None)
    error = features[1::2] @ weights - target[1::2]
    spread = target[1::2] - target[1::2].mean(axis=0)
    return float(1.0 - np.sum(error**2) / np.sum(spread**2))
