r"""Changing RoPE after training: what each rescaling, and each layer made NoPE, costs the real model in loss.

Context-extension methods change the frequencies θ_i of a trained model so that more positions fit in the angles it
saw; each is meant to be followed by some fine-tuning. Here none is: the model (trained at 8,192 positions) is run at
the reader's text length, well inside 8,192, with

- **base × k** — θ_i = (k·b)^(−2i/d): every pair but the first turns slower (the NTK-aware base b·k^(d/(d−2)) of
  bloc97 2023 is this with k^(d/(d−2)) = k^1.03 for d = 64);
- **PI** (Chen et al. 2023, arXiv:2306.15595) — θ_i/k: positions read as m/k (transformers' ``"linear"``);
- **dynamic NTK** (emozilla 2023; transformers' ``"dynamic"``) — the NTK base for α = k·ℓ/L − (k − 1) with
  ℓ = max(length, L), L = 8,192: below L, α = 1 and the frequencies are the model's own;
- **YaRN** (Peng et al. 2023, arXiv:2309.00071, §3.2–3.4) — pairs that turn many times within 8,192 tokens keep
  θ_i, pairs that turn less than once get θ_i/k, a ramp between; cos and sin multiplied by 0.1·ln k + 1.

Each is set through transformers' own ``rope_parameters`` (:data:`RESCALINGS` gives the dict): a copy of the model's
config with those parameters builds a new rotary embedding of the model's own class, whose ``__init__`` calls
transformers' ``ROPE_INIT_FUNCTIONS``; it is swapped in for one forward and swapped back (:mod:`.intervene`). The
same settings read by :func:`posenc_core.rope_frequencies` must give the same θ_i and factor (:func:`core_frequencies`;
the project's contract that the core equals transformers).

Then one layer at a time loses position: its attention gets cos = 1, sin = 0 (a pre-hook on that layer's attention,
:func:`~.intervene.layers_without_position`), the other 29 keep RoPE. The loss change by layer says which layers'
use of position the text's predictions depend on (:func:`nope_layer_losses`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from posenc_core import RopeFrequencies, rope_frequencies

from .intervene import layers_without_position, rotary_from_parameters, rotary_swapped, token_losses
from .load import RealModel

__all__ = [
    "FACTORS",
    "RESCALINGS",
    "LayerScan",
    "RescaleTable",
    "Rescaling",
    "core_frequencies",
    "nope_layer_losses",
    "rescaled_frequencies",
    "rescaling_losses",
]

#: The scaling factors the page offers: each method is run at each (a figure of loss against k).
FACTORS = (2, 4, 8, 16)


@dataclass(frozen=True)
class Rescaling:
    r"""One method: the ``rope_parameters`` transformers reads for it, and the same settings for the core.

    ``parameters(theta, k, L)`` → transformers' dict; ``core(theta, k, L)`` → (base, rope_scaling) for
    :func:`posenc_core.rope_frequencies` (L = the model's ``max_position_embeddings``, the training length).
    """

    name: str
    parameters: Callable[[float, float, int], dict[str, Any]]
    core: Callable[[float, float, int], tuple[float, dict[str, Any] | None]]


def _base(theta: float, k: float, length: int) -> dict[str, Any]:
    return {"rope_type": "default", "rope_theta": theta * k}


def _linear(theta: float, k: float, length: int) -> dict[str, Any]:
    return {"rope_type": "linear", "rope_theta": theta, "factor": float(k)}


def _dynamic(theta: float, k: float, length: int) -> dict[str, Any]:
    return {"rope_type": "dynamic", "rope_theta": theta, "factor": float(k)}


def _yarn(theta: float, k: float, length: int) -> dict[str, Any]:
    # the model was trained at `length` positions; YaRN stretches them by k
    return {"rope_type": "yarn", "rope_theta": theta, "factor": float(k), "original_max_position_embeddings": length}


def _core(params: Callable[[float, float, int], dict[str, Any]]) -> Callable[..., tuple[float, dict | None]]:
    def read(theta: float, k: float, length: int) -> tuple[float, dict[str, Any] | None]:
        settings = params(theta, k, length)
        base = float(settings.pop("rope_theta"))
        return base, (settings if settings["rope_type"] != "default" else None)

    return read


#: The rescalings, in the page's order (one registry: the page, the tests and the CLI read it).
RESCALINGS: MappingProxyType[str, Rescaling] = MappingProxyType(
    {
        name: Rescaling(name, params, _core(params))
        for name, params in (("base", _base), ("linear", _linear), ("dynamic", _dynamic), ("yarn", _yarn))
    }
)


def _check(method: str, factor: float) -> Rescaling:
    if method not in RESCALINGS:
        raise ValueError(f"method must be one of {tuple(RESCALINGS)}, got {method!r}")
    if not factor >= 1:
        raise ValueError(f"factor must be ≥ 1, got {factor}")
    return RESCALINGS[method]


def rescaled_rotary(real: RealModel, method: str, factor: float) -> Any:
    r"""transformers' rotary embedding for ``method`` at ``factor``, built from the model's config with those
    ``rope_parameters`` (:func:`~.intervene.rotary_from_parameters`)."""
    entry = _check(method, factor)
    return rotary_from_parameters(real, entry.parameters(real.rope_theta, factor, real.max_position_embeddings))


def rescaled_frequencies(real: RealModel, method: str, factor: float, seq_len: int | None = None) -> RopeFrequencies:
    r"""(inv_freq, attention_factor) as transformers builds them for ``method`` at ``factor``; with ``seq_len``,
    after its rotary embedding has run on that many positions (dynamic NTK recomputes there)."""
    import torch

    rotary = rescaled_rotary(real, method, factor)
    if seq_len is not None:
        positions = torch.arange(int(seq_len), device=real.device)[None]
        rotary(torch.zeros(1, device=real.device), positions)
    inv_freq = rotary.inv_freq.detach().double().cpu().numpy()
    return RopeFrequencies(inv_freq, float(rotary.attention_scaling))


def core_frequencies(real: RealModel, method: str, factor: float, seq_len: int | None = None) -> RopeFrequencies:
    r"""The same settings read by :func:`posenc_core.rope_frequencies` (float64): what transformers must match."""
    entry = _check(method, factor)
    base, scaling = entry.core(real.rope_theta, factor, real.max_position_embeddings)
    return rope_frequencies(
        real.head_dim,
        base=base,
        rope_scaling=scaling,
        max_position_embeddings=real.max_position_embeddings,
        seq_len=seq_len,
    )


@dataclass(frozen=True)
class RescaleTable:
    r"""The text's mean loss (nats per token) as trained (``base``) and under each method at each factor
    (``loss[m, j]`` for ``methods[m]``, ``factors[j]``), with the θ_i and attention factor transformers used."""

    base: float
    methods: tuple[str, ...]
    factors: tuple[float, ...]
    loss: np.ndarray  # (M, F)
    attention_factor: np.ndarray  # (M, F)
    inv_freq: np.ndarray  # (M, F, d/2)
    length: int

    @property
    def change(self) -> np.ndarray:
        r"""(M, F) the loss under each setting minus the loss as trained."""
        return self.loss - self.base


def rescaling_losses(
    real: RealModel, ids: np.ndarray, factors: tuple[float, ...] = FACTORS, methods: tuple[str, ...] = tuple(RESCALINGS)
) -> RescaleTable:
    r"""The loss on ``ids`` under every (method, factor): one forward of transformers' own code each, with the
    rotary embedding transformers builds for those ``rope_parameters`` swapped in (and the model's put back)."""
    length = int(np.asarray(ids).size)
    loss = np.empty((len(methods), len(factors)))
    scale = np.empty_like(loss)
    inv_freq = np.empty((len(methods), len(factors), real.head_dim // 2))
    base = float(token_losses(real, ids).mean())
    for m, method in enumerate(methods):
        for j, factor in enumerate(factors):
            rotary = rescaled_rotary(real, method, factor)
            with rotary_swapped(real, rotary):
                loss[m, j] = token_losses(real, ids).mean()
            # read after the forward: dynamic NTK would have recomputed its θ_i had the text outgrown 8,192
            inv_freq[m, j] = rotary.inv_freq.detach().double().cpu().numpy()
            scale[m, j] = float(rotary.attention_scaling)
    return RescaleTable(
        base=base,
        methods=tuple(methods),
        factors=tuple(float(f) for f in factors),
        loss=loss,
        attention_factor=scale,
        inv_freq=inv_freq,
        length=length,
    )


@dataclass(frozen=True)
class LayerScan:
    r"""The text's mean loss as trained (``base``), with layer l alone made NoPE (``loss[l]``), and with every
    layer made NoPE (``all_layers``), in nats per token."""

    base: float
    loss: np.ndarray  # (layers,)
    all_layers: float
    length: int

    @property
    def change(self) -> np.ndarray:
        r"""(layers,) the loss with that layer made NoPE minus the loss as trained."""
        return self.loss - self.base


def nope_layer_losses(real: RealModel, ids: np.ndarray) -> LayerScan:
    r"""One forward per layer with that layer's RoPE made the identity (cos = 1, sin = 0), one with every layer's,
    and one as trained: ``num_layers + 2`` forwards of transformers' own code (~30 s at 256 tokens on 2 cores)."""
    base = float(token_losses(real, ids).mean())
    losses = []
    for layer in range(real.num_layers):
        with layers_without_position(real, (layer,)):
            losses.append(float(token_losses(real, ids).mean()))
    with layers_without_position(real, range(real.num_layers)):
        every = float(token_losses(real, ids).mean())
    return LayerScan(base=base, loss=np.asarray(losses), all_layers=every, length=int(np.asarray(ids).size))
