r"""Which RoPE frequencies the real model uses, and what stopping some of them costs.

RoPE (Su et al. 2021, arXiv:2104.09864) splits each query and key head of size d into d/2 pairs and turns pair i by
the angle p·θ_i at position p, θ_i = b^(−2i/d) (SmolLM2: b = 100,000, d = 64, so wavelengths 2π/θ_i from 6.3 to
~440,000 tokens). transformers' Llama pairs dimension i with i + d/2 (``rotate_half``). A pair whose query and key
parts are small contributes little to the score whatever its angle; Barbero et al. 2024 ("Round and Round We Go!
What makes Rotary Positional Encodings useful?", arXiv:2410.06205, §5) measured the norms of each pair's part of
Gemma 7B's queries and keys and found the largest on the lowest frequencies. :func:`pair_norms` makes the same
measurement on this model, reading the queries and keys *before* the rotation (the outputs of each layer's own
``q_proj`` and ``k_proj``, which RoPE rotates without changing their norm) with hooks on transformers' modules.

p-RoPE (Barbero et al. 2024, §6) stops the slowest pairs (θ_i = 0: the pair is a plain dot product at every
distance). Here it is applied to a model that was trained with every pair turning, without any training, and so is
the opposite (the fastest pairs stopped): :func:`stopped_rotation_losses` measures what each costs in loss on the
text. The frequencies are changed in a copy of the model's own rotary embedding (its ``inv_freq`` buffer), swapped
in for one forward of transformers' own code and swapped back (:mod:`.intervene`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posenc_core import rope_inv_freq, rope_wavelengths

from .intervene import MODEL_LOCK, projections_read, rotary_swapped, rotary_with_inv_freq, token_losses
from .load import RealModel, forward

__all__ = [
    "STOP_COUNTS",
    "STOP_SIDES",
    "PairNorms",
    "StoppedLosses",
    "core_inv_freq",
    "model_inv_freq",
    "pair_norms",
    "projections",
    "stopped_inv_freq",
    "stopped_rotation_losses",
]

#: Which end of the frequency range is stopped: the slowest pairs (p-RoPE's choice) or the fastest.
STOP_SIDES = ("slowest", "fastest")
#: How many of the 32 pairs are stopped, for the curve of loss against the number stopped.
STOP_COUNTS = (2, 4, 8, 16)


def model_inv_freq(real: RealModel) -> np.ndarray:
    r"""(d/2,) float64: the model's own ``inv_freq`` buffer (θ_i, radians per token), as transformers built it."""
    with MODEL_LOCK:  # the model's own module, never another session's swapped in
        return real.model.model.rotary_emb.inv_freq.detach().double().cpu().numpy()


@dataclass(frozen=True)
class PairNorms:
    r"""Mean norm of each RoPE pair's part of the queries and keys, by layer (before rotation).

    ``query[l, i]`` = mean over tokens t and query heads h of √(q²_{t,h,i} + q²_{t,h,i+d/2}) in layer l; ``key`` the
    same over the key/value heads. ``inv_freq`` and ``wavelengths`` (2π/θ_i, tokens) label the pairs.
    """

    query: np.ndarray  # (layers, d/2)
    key: np.ndarray  # (layers, d/2)
    inv_freq: np.ndarray  # (d/2,)
    wavelengths: np.ndarray  # (d/2,)
    length: int

    def share(self, part: str, pairs: slice) -> np.ndarray:
        r"""(layers,) the fraction of the summed squared pair norms of ``part`` ("query" / "key") in ``pairs``."""
        energy = getattr(self, part) ** 2
        return energy[:, pairs].sum(axis=1) / energy.sum(axis=1)


def projections(real: RealModel, ids: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    r"""Every layer's queries (L, H, d) and keys (L, H_kv, d) before RoPE, as the model's own ``q_proj`` and
    ``k_proj`` output them during one of transformers' forwards (hooks: :func:`~.intervene.projections_read`)."""
    with projections_read(real) as captured:
        forward(real, ids)
    d = real.head_dim
    queries = [q[0].double().cpu().numpy().reshape(q.shape[1], -1, d) for q in captured["query"]]
    keys = [k[0].double().cpu().numpy().reshape(k.shape[1], -1, d) for k in captured["key"]]
    return queries, keys


def _pair_norm(x: np.ndarray) -> np.ndarray:
    r"""(d/2,) mean over tokens and heads of the norm of pair (x_i, x_{i+d/2}) (``rotate_half``'s pairing)."""
    half = x.shape[-1] // 2
    # ‖(x_i, x_{i+d/2})‖ for each token and head
    norms = np.hypot(x[..., :half], x[..., half:])  # (L, H, d/2)
    return norms.mean(axis=(0, 1))


def pair_norms(real: RealModel, ids: np.ndarray) -> PairNorms:
    r"""The size of each pair's part of the queries and keys, by layer (one forward; Barbero et al. 2024, §5)."""
    queries, keys = projections(real, ids)
    inv_freq = model_inv_freq(real)
    return PairNorms(
        query=np.stack([_pair_norm(q) for q in queries]),
        key=np.stack([_pair_norm(k) for k in keys]),
        inv_freq=inv_freq,
        wavelengths=rope_wavelengths(inv_freq),
        length=int(np.asarray(ids).size),
    )


def stopped_inv_freq(inv_freq: np.ndarray, count: int, side: str) -> np.ndarray:
    r"""``inv_freq`` with the ``count`` slowest (the last) or fastest (the first) θ_i set to 0: those pairs stop
    turning (p-RoPE, Barbero et al. 2024 §6, stops the slowest)."""
    if side not in STOP_SIDES:
        raise ValueError(f"side must be one of {STOP_SIDES}, got {side!r}")
    pairs = inv_freq.size
    if not 0 <= count <= pairs:
        raise ValueError(f"count must be between 0 and {pairs}, got {count}")
    stopped = np.array(inv_freq, dtype=np.float64)
    if count:
        if side == "slowest":
            stopped[pairs - count :] = 0.0
        else:
            stopped[:count] = 0.0
    return stopped


@dataclass(frozen=True)
class StoppedLosses:
    r"""The text's mean loss (nats per token) with the model as trained, and with ``counts`` pairs stopped at each
    end (``loss[side][j]`` for ``counts[j]``); ``tokens`` the per-token losses of each, for the figures' detail."""

    base: float
    counts: tuple[int, ...]
    loss: dict[str, np.ndarray]  # side → (len(counts),)
    length: int

    def change(self, side: str) -> np.ndarray:
        r"""(len(counts),) loss with the pairs stopped minus the loss as trained (nats per token)."""
        return self.loss[side] - self.base


def stopped_rotation_losses(
    real: RealModel, ids: np.ndarray, counts: tuple[int, ...] = STOP_COUNTS, sides: tuple[str, ...] = STOP_SIDES
) -> StoppedLosses:
    r"""The loss on ``ids`` when the slowest or fastest ``count`` pairs stop turning, for each count and side: one
    forward of transformers' own code per (side, count), the model's rotary embedding swapped for a copy with those
    θ_i = 0 (:func:`~.intervene.rotary_with_inv_freq`) and restored after it."""
    inv_freq = model_inv_freq(real)
    base = float(token_losses(real, ids).mean())
    loss: dict[str, np.ndarray] = {}
    for side in sides:
        values = []
        for count in counts:
            with rotary_swapped(real, rotary_with_inv_freq(real, stopped_inv_freq(inv_freq, count, side))):
                values.append(float(token_losses(real, ids).mean()))
        loss[side] = np.asarray(values)
    return StoppedLosses(base=base, counts=tuple(counts), loss=loss, length=int(np.asarray(ids).size))


def core_inv_freq(real: RealModel) -> np.ndarray:
    r"""(d/2,) the core's θ_i = b^(−2i/d) for the model's head size and base (:func:`posenc_core.rope_inv_freq`)."""
    return rope_inv_freq(real.head_dim, base=real.rope_theta)
