r"""The extrapolation lab's task and settings, without torch: what the app needs to describe a run and its optimum.

**The task** is a noisy lag-copy source whose best possible loss is known in closed form. Tokens come from a
vocabulary of V; each of the first ``lag`` tokens is uniform, and every later token copies a fixed permutation
of the token ``lag`` places back, :math:`x_t = \pi(x_{t-\text{lag}})`, except with probability ε, when it is
uniform again. Predicting it needs nothing but "look exactly ``lag`` tokens back" — a purely *relative* skill — so
any loss above the optimum beyond the training length is the position encoding failing to carry that skill over.
The optimum per position is :math:`\ln V` for t < lag and, after that, the entropy of the noisy copy,

.. math::
    H = -p\ln p - (V - 1)\,\tfrac{\varepsilon}{V}\ln\tfrac{\varepsilon}{V}, \qquad p = 1 - \varepsilon + \varepsilon/V.

The training and evaluation code is :mod:`posenc_core.torch_backend.lab`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import PosEncError

__all__ = ["ENCODINGS", "EXTENSIONS", "PRESETS", "LabConfig", "optimal_loss"]

ENCODINGS = ("none", "learned", "sinusoidal", "rope", "alibi", "t5")
#: Zero-shot context extension applied to the RoPE model at inference, by rope_type (None: plain RoPE).
EXTENSIONS = (None, "linear", "ntk", "yarn")


@dataclass(frozen=True)
class LabConfig:
    """Everything that decides a run; two runs with equal configs give equal results."""

    encodings: tuple[str, ...] = ENCODINGS
    vocab_size: int = 16
    lag: int = 2  # x_t copies x_{t−2}: the query must find the previous token — position matters
    noise: float = 0.1  # ε: the probability that a token ignores the copy rule
    train_length: int = 32
    eval_factor: int = 8  # evaluate out to eval_factor × train_length
    extension_factor: int = 4  # zero-shot RoPE extension to this multiple
    d_model: int = 64
    n_heads: int = 8  # ALiBi's steepest slope is 2^(−8/H): 8 heads give a head with slope 1/2
    n_layers: int = 2
    steps: int = 300
    batch_size: int = 32
    lr: float = 3e-3
    eval_sequences: int = 64
    seed: int = 0
    t5_buckets: int = 32
    t5_max_distance: int = 128

    def __post_init__(self) -> None:
        unknown = set(self.encodings) - set(ENCODINGS)
        if not self.encodings or unknown:
            raise PosEncError(f"encodings must be a non-empty subset of {ENCODINGS}, got {self.encodings}")
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise PosEncError(f"d_model / n_heads must be an even integer, got {self.d_model} / {self.n_heads}")
        if not 0.0 < self.noise < 1.0 or self.lag < 1 or self.lag >= self.train_length:
            raise PosEncError("need 0 < noise < 1 and 1 ≤ lag < train_length")

    @property
    def eval_length(self) -> int:
        return self.eval_factor * self.train_length


#: Named configurations: "cpu" finishes in about a minute on 2 cores, "tiny" is the CI test, "gpu" the big run.
PRESETS = {
    "cpu": LabConfig(),
    "tiny": LabConfig(encodings=("learned", "alibi"), eval_factor=4, eval_sequences=32),
    "gpu": LabConfig(
        d_model=256, n_heads=8, n_layers=4, steps=2000, batch_size=64, train_length=128, lr=1e-3, eval_sequences=256
    ),
}


def optimal_loss(config: LabConfig, length: int) -> np.ndarray:
    r"""The best achievable cross-entropy (nats) at each position 0 … length − 1, from the formula above."""
    v, eps = config.vocab_size, config.noise
    p_hit = 1.0 - eps + eps / v
    copied = -p_hit * math.log(p_hit) - (v - 1) * (eps / v) * math.log(eps / v)
    return np.where(np.arange(length) < config.lag, math.log(v), copied)
