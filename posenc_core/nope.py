r"""Why a decoder can do without any position encoding (NoPE): the causal mask itself carries position.

Take attention with no position signal at all and, to see the bare effect, uniform weights. Under the causal mask the
query at position t (counting from 1) can see exactly t keys, so its output is the mean of t value vectors,

.. math:: y_t = \frac{1}{t}\sum_{j \le t} x_j .

For value vectors of zero mean and covariance I (d coordinates) the squared norm of that mean has expectation d / t:
the norm falls like :math:`1/\sqrt{t}`, and a reader of :math:`\log\lVert y_t\rVert^2` recovers :math:`\log t` up to
a spread that does not depend on t (a :math:`\chi^2_d / d` factor). Without the mask every position averages the same
L vectors, :math:`y_t = \bar{x}` for all t, and nothing about t is left to read.

Papers: Haviv et al. 2022, "Transformer Language Models without Positional Encodings Still Learn Positional
Information", arXiv:2203.16634 (a causal decoder without position learns it; a bidirectional encoder does not);
Kazemnejad et al. 2023, "The Impact of Positional Encoding on Length Generalization in Transformers",
arXiv:2305.19466, §5 (Theorem 1: a causal layer with no position can recover absolute positions).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .errors import as_array, as_bool, as_int

__all__ = ["NopeProbe", "nope_position_probe", "nope_position_probes", "uniform_attention_average"]

#: The percentiles of the probe's reading drawn as a band around its median (over held-out sequences).
BAND = (10.0, 90.0)


def uniform_attention_average(x: object, *, causal: bool = True) -> np.ndarray:
    r"""The output of attention with uniform weights over its value vectors ``x`` (…, L, d): with ``causal``,
    :math:`y_t = \frac{1}{t}\sum_{j\le t} x_j` (t = 1 … L); without, every row is :math:`\frac{1}{L}\sum_j x_j`.

    Uniform weights are what softmax gives when every score is equal, as with q = 0 or with no position and identical
    keys. Paper: Kazemnejad et al. 2023, arXiv:2305.19466, §5 (the first layer of their construction).
    """
    x = as_array("x", x, min_ndim=2).astype(np.float64, copy=False)
    causal = as_bool("causal", causal)
    length = x.shape[-2]
    if not causal:
        return np.broadcast_to(x.mean(axis=-2, keepdims=True), x.shape).copy()
    counts = np.arange(1, length + 1, dtype=np.float64)[:, None]  # (L, 1): keys visible to query t
    # y_t = (1/t) Σ_{j≤t} x_j
    return np.cumsum(x, axis=-2) / counts


class NopeProbe(NamedTuple):
    r"""What a reader of the output's norm recovers about the position t (1 … L) under uniform attention."""

    positions: np.ndarray  # (L,) t = 1 … L
    mean_square_norm: np.ndarray  # (L,) mean over all sequences of ‖y_t‖² / d (expected 1/t under the mask)
    median: np.ndarray  # (L,) the probe's median reading of t over the held-out sequences
    low: np.ndarray  # (L,) its 10th percentile
    high: np.ndarray  # (L,) its 90th percentile
    r2: float  # R² of the probe's log t on the held-out sequences
    slope: float  # least-squares slope of log(mean ‖y_t‖²) against log t (−1 for a norm falling like 1/√t)


def nope_position_probe(length: int, dim: int, *, sequences: int = 64, causal: bool = True, seed: int = 0) -> NopeProbe:
    r"""A linear probe that reads :math:`\log t` from :math:`\log\lVert y_t\rVert^2`, the log squared norm of uniform
    attention's output, fitted on half of ``sequences`` random sequences and scored (R²) on the other half.

    Each sequence holds L value vectors :math:`x_j \sim N(0, I_d)` (zero mean: a common mean would add a constant to
    every :math:`y_t` and stop the fall). :math:`y_t` is :func:`uniform_attention_average`; the probe is
    :math:`\widehat{\log t} = a + b\,\log\lVert y_t\rVert^2`, least squares on the even sequences, R² of
    :math:`\log t` on the odd ones; its reading of t is :math:`\exp(\widehat{\log t})`. Under the mask
    :math:`\mathbb{E}\lVert y_t\rVert^2 = d/t`, so the probe reads t to a relative spread set by d alone. Without
    it, :math:`y_t` is the same for every t of a sequence, each sequence holds every t once, so the fitted slope is
    0, the probe answers the mean of :math:`\log t` everywhere and R² is 0 (up to rounding), whatever the seed.
    The norms are drawn from their own random walk (:func:`_running_squares`), exactly as distributed as those of
    drawn vectors. Papers: Haviv et al. 2022, arXiv:2203.16634; Kazemnejad et al. 2023, arXiv:2305.19466, §5.
    """
    causal = as_bool("causal", causal)
    running, t = _running_squares(length, dim, sequences, seed)
    return _probe(running / t**2 if causal else _free_square(running, t), t, dim)


def nope_position_probes(length: int, dim: int, *, sequences: int = 64, seed: int = 0) -> tuple[NopeProbe, NopeProbe]:
    r"""``(with the causal mask, without it)``: both :func:`nope_position_probe` readings of the same draw, equal to
    the two calls to the last bit, for one draw instead of two (a page draws both).
    Papers: Haviv et al. 2022, arXiv:2203.16634; Kazemnejad et al. 2023, arXiv:2305.19466, §5.
    """
    running, t = _running_squares(length, dim, sequences, seed)
    return _probe(running / t**2, t, dim), _probe(_free_square(running, t), t, dim)


def _running_squares(length: int, dim: int, sequences: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    r"""(S, L) :math:`R_t = \lVert c_t\rVert^2`, the squared norms of the running sums :math:`c_t = \sum_{j\le t}x_j`
    of S sequences of :math:`x_j \sim N(0, I_d)`, and the positions t = 1 … L, drawn without the S·L·d values.

    Given :math:`c_{t-1}`, split the new vector along and across it: :math:`x_t = z_t u + w_t` with
    :math:`u = c_{t-1}/\lVert c_{t-1}\rVert`, :math:`z_t \sim N(0, 1)` and :math:`\lVert w_t\rVert^2 \sim
    \chi^2_{d-1}`, independent of each other and of the past (an isotropic Gaussian stays one in any orthonormal
    basis). So :math:`R_t = (\sqrt{R_{t-1}} + z_t)^2 + \lVert w_t\rVert^2`, :math:`R_0 = 0`: the walk of the norms
    has exactly the law of the norms of the drawn walk (a squared Bessel chain), at a cost of S·L numbers instead of
    S·L·d (at the page's largest L = 1,024, d = 256: 0.90 s became 0.04 s on the 2-core machine, and every new
    setting of a class paid it).
    ``tests/core/test_todays_models.py`` checks the identity on drawn vectors, and the walk's mean
    :math:`\mathbb{E}R_t = dt` and covariances :math:`\mathrm{Cov}(R_s, R_t) = 2ds^2` (s ≤ t), those of vectors
    drawn and summed.
    """
    length = as_int("length", length, lo=2, hi=8192)
    dim = as_int("dim", dim, lo=1, hi=4096)
    sequences = as_int("sequences", sequences, lo=2, hi=4096)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    rng = np.random.default_rng(seed)
    along = rng.standard_normal((length, sequences))  # z_t
    across = rng.chisquare(dim - 1, (length, sequences)) if dim > 1 else np.zeros((length, sequences))  # ‖w_t‖²
    running = np.empty((length, sequences))
    radius = np.zeros(sequences)  # ‖c_{t−1}‖
    for step in range(length):
        radius += along[step]
        np.multiply(radius, radius, out=running[step])
        running[step] += across[step]  # R_t = (‖c_{t−1}‖ + z_t)² + ‖w_t‖²
        np.sqrt(running[step], out=radius)
    return running.T, np.arange(1, length + 1, dtype=np.float64)


def _free_square(running: np.ndarray, t: np.ndarray) -> np.ndarray:
    r"""(S, L): ‖y_t‖² without the mask: every y_t is the sequence's mean :math:`c_L / L`, so :math:`R_L / L^2`."""
    return np.repeat((running[:, -1] / t[-1] ** 2)[:, None], running.shape[1], axis=1)


def _probe(square: np.ndarray, t: np.ndarray, dim: int) -> NopeProbe:
    r"""The probe fitted to the squared norms ``square`` (S, L) of d = ``dim`` coordinates at positions ``t``
    (:func:`nope_position_probe`)."""
    feature, target = np.log(square), np.broadcast_to(np.log(t), square.shape)  # (S, L) each
    design = np.stack([np.ones(square[0::2].size), feature[0::2].ravel()], axis=1)  # (S/2·L, 2)
    (a, b), *_ = np.linalg.lstsq(design, target[0::2].ravel(), rcond=None)
    # \widehat{\log t} = a + b log‖y_t‖²
    read = a + b * feature[1::2]  # (S/2, L)
    held_out = target[1::2]
    r2 = 1.0 - float(np.sum((read - held_out) ** 2)) / float(np.sum((held_out - held_out.mean()) ** 2))
    mean_square = square.mean(axis=0) / dim  # (L,)
    slope = float(np.polyfit(np.log(t), np.log(mean_square), 1)[0])
    low, median, high = np.exp(np.percentile(read, [BAND[0], 50.0, BAND[1]], axis=0))
    return NopeProbe(t, mean_square, median, low, high, r2, slope)
