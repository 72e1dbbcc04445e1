r"""How the lab's model handles position, per family: one :class:`LabHooks` per family the lab trains.

:data:`LAB_HOOKS` is keyed like the family registry (:data:`posenc_core.families.FAMILIES`, whose entries marked
``lab`` are :data:`posenc_core.families.LAB`), and holds what the registry cannot, since it imports no torch. The
model (:class:`~posenc_lab.train.TinyLM`) and the stacked trainer
(:class:`~posenc_lab.stack.Stack`) read these hooks and never a family's name;
``tests/test_families.py`` checks that every lab family has its hooks.

A family's position enters the model in at most four places: rows ``added`` to the token vectors (learned,
sinusoidal), a ``rotation`` of q and k (RoPE, p-RoPE, and the hybrid on the layers it ``rotates``), an additive
attention ``bias`` per head that depends on positions alone (ALiBi; T5's, which is learned), and a ``gate_bias``
computed in each layer from that layer's input (FoX's cumulative log forget gates: position from the data).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from posenc_core import hybrid_rope_layers
from posenc_core.torch_backend import alibi_slopes, rope_cos_sin, rope_frequencies, sinusoidal, t5_relative_bucket

from .tasks import EXTENSIONS

__all__ = ["FOX_GATE_BIAS", "LAB_HOOKS", "LabHooks", "forget_bias", "relative"]

Tables = tuple[torch.Tensor, torch.Tensor]  # RoPE's (cos, sin), each (L, d_head/2)
Evaluate = Callable[[int, "str | None"], dict]  # (length, rope_type) -> the model's loss and accuracy curves


def relative(length: int, device: torch.device) -> torch.Tensor:
    r"""(L, L) key position minus query position, j − i."""
    positions = torch.arange(length, device=device)
    return positions[None, :] - positions[:, None]


def _nothing(model: nn.Module, length: int) -> None:
    return None


def _as_given(model: nn.Module, length: int, tables: Tables | None) -> Tables | None:
    return tables


def _no_record(model: nn.Module, evaluate: Evaluate, first_seed: bool) -> dict:
    return {}


def _every_layer(model: nn.Module, layer: int) -> bool:
    return True


@dataclass(frozen=True)
class LabHooks:
    r"""One family's part of the lab model.

    ``setup(model, longest)`` registers the family's parameters and buffers, after the shared weights (so equal seeds
    give equal shared weights across families); ``own`` names the submodules it adds that hold trained parameters
    (the stacked trainer trains them in place). ``added(model, L)``: the (L, d) rows added to the token vectors, or
    None. ``rotation(model, L, tables)``: RoPE's (cos, sin) at length L, or ``tables`` as given (which replace the
    trained ones in a zero-shot extension). ``bias(model, rel, index)``: the additive (H, L, L) bias before the causal
    mask, from ``rel`` (L, L) = j − i and, for a ``learned_bias``, ``index(model, L)``, the (L, L) index of its
    learned values (made once per length by the stacked trainer, whose learned biases attend apart on a GPU).
    ``rotates(model, layer)``: whether layer ``layer`` (from 0) turns q and k by the rotation (every layer, but the
    hybrid's). ``gate_bias(model, layer, h)``: a bias computed from the data, (B, H, L, L) with −inf on future keys,
    from ``h`` (B, L, d), the layer's input after its LayerNorm (what q, k and v are made from), or None for a family
    whose bias depends on positions alone. ``record(model, evaluate, first_seed)``: what a run stores beside the loss
    curves.
    """

    setup: Callable[[nn.Module, int], None]
    own: tuple[str, ...] = ()
    added: Callable[[nn.Module, int], torch.Tensor | None] = _nothing
    rotation: Callable[[nn.Module, int, Tables | None], Tables | None] = _as_given
    bias: Callable[[nn.Module, torch.Tensor, torch.Tensor | None], torch.Tensor] | None = None
    index: Callable[[nn.Module, int], torch.Tensor] | None = None
    record: Callable[[nn.Module, Evaluate, bool], dict] = _no_record
    rotates: Callable[[nn.Module, int], bool] = _every_layer
    gate_bias: Callable[[nn.Module, int, torch.Tensor], torch.Tensor] | None = None

    @property
    def learned_bias(self) -> bool:
        return self.index is not None


# --- none (NoPE) ----------------------------------------------------------------------------------------------------


def _no_setup(model: nn.Module, longest: int) -> None:
    return None


# --- learned: a table as long as the longest evaluation; rows ≥ train_length − 1 are never trained ------------------


def _learned_setup(model: nn.Module, longest: int) -> None:
    model.positions = nn.Embedding(longest, model.config.d_model)


def _learned_added(model: nn.Module, length: int) -> torch.Tensor:
    return model.positions.weight[:length]


def _learned_record(model: nn.Module, evaluate: Evaluate, first_seed: bool) -> dict:
    r"""The first seed's trained table, to 4 L: rows from L − 1 never moved (the learned page shows them)."""
    if not first_seed:
        return {}
    rows = min(4 * model.config.train_length, model.positions.num_embeddings)
    return {"table": np.round(model.positions.weight[:rows].detach().cpu().numpy(), 5).tolist()}


# --- sinusoidal: a fixed buffer, made once -------------------------------------------------------------------------


def _sinusoidal_setup(model: nn.Module, longest: int) -> None:
    model.register_buffer("sinusoid", sinusoidal(longest, model.config.d_model, dtype=torch.float32), persistent=False)


def _sinusoidal_added(model: nn.Module, length: int) -> torch.Tensor:
    return model.sinusoid[:length]


# --- T5: one learned scalar per (bucket, head), shared by all layers as in T5 ---------------------------------------


def _t5_setup(model: nn.Module, longest: int) -> None:
    model.t5_bias = nn.Embedding(model.config.t5_buckets, model.config.n_heads)


def _t5_index(model: nn.Module, length: int) -> torch.Tensor:
    r"""(L, L) T5's unidirectional bucket of each (query i, key j) (Raffel et al. 2020)."""
    rel = relative(length, model.head.weight.device)
    return t5_relative_bucket(
        rel, bidirectional=False, num_buckets=model.config.t5_buckets, max_distance=model.config.t5_max_distance
    )


def _t5_bias(model: nn.Module, rel: torch.Tensor, index: torch.Tensor | None) -> torch.Tensor:
    return model.t5_bias(index).permute(2, 0, 1)  # (H, L, L)


# --- RoPE: cos and sin made once; the evaluation also runs zero-shot extensions ------------------------------------


def _rope_setup(model: nn.Module, longest: int) -> None:
    cos, sin = model.rope_tables(longest, None)
    model.register_buffer("rope_cos", cos, persistent=False)
    model.register_buffer("rope_sin", sin, persistent=False)


def _rope_rotation(model: nn.Module, length: int, tables: Tables | None) -> Tables:
    cos, sin = tables if tables is not None else (model.rope_cos, model.rope_sin)
    return cos[:length], sin[:length]


def _rope_record(model: nn.Module, evaluate: Evaluate, first_seed: bool) -> dict:
    r"""The trained model run zero-shot at ``extension_factor`` × L with each rope_type of :data:`EXTENSIONS`."""
    length = model.config.extension_factor * model.config.train_length
    return {"extension": {str(kind): evaluate(length, kind) for kind in EXTENSIONS}}


# --- ALiBi: −m_h (i − j) on and below the diagonal (Press et al. 2022, §3) -----------------------------------------


def _alibi_setup(model: nn.Module, longest: int) -> None:
    model.register_buffer("slopes", alibi_slopes(model.config.n_heads).to(torch.float32), persistent=False)


def _alibi_bias(model: nn.Module, rel: torch.Tensor, index: torch.Tensor | None) -> torch.Tensor:
    return model.slopes[:, None, None] * rel.to(torch.float32)


# --- p-RoPE: RoPE whose slowest pairs stand still (Barbero et al. 2024, §6) ----------------------------------------


def _p_rope_setup(model: nn.Module, longest: int) -> None:
    r"""cos and sin of p-RoPE's angles: the ``proportional`` rope type with ``config.p_rope`` of the pairs turning."""
    config = model.config
    freqs = rope_frequencies(
        config.d_model // config.n_heads,
        rope_scaling={"rope_type": "proportional"},
        partial_rotary_factor=config.p_rope,
    )
    cos, sin = rope_cos_sin(torch.arange(longest, dtype=torch.float64), freqs.inv_freq, dtype=torch.float32)
    model.register_buffer("rope_cos", cos, persistent=False)
    model.register_buffer("rope_sin", sin, persistent=False)


# --- hybrid: RoPE on three of every four layers, none on the fourth (Llama 4's iRoPE, SmolLM3, Command A) -----------


def _hybrid_rotates(model: nn.Module, layer: int) -> bool:
    r"""Whether ``layer`` rotates: :func:`posenc_core.hybrid_rope_layers`. In the lab's 2 layers, layer 1 rotates and
    layer 2 carries no position: the real models' NoPE layers close each group of four and attend globally, after
    RoPE layers that handle what is near; two layers keep that order, position first, a layer free of it last."""
    return bool(hybrid_rope_layers(model.config.n_layers)[layer])


# --- FoX: a forget gate per head and token, its cumulative log sum added to the scores (Lin et al. 2025) -----------

#: The gates' bias at initialisation. FoX's reference code (github.com/zhixuan-lin/forgetting-transformer,
#: ``ForgettingAttentionLayer`` with ``fgate_type="full"``, the data-dependent gate) gives its gate projection a bias
#: and zeroes it, like every bias of the layer; a special initialisation (``fgate_bias_init``, decay times from
#: T_min to T_max) is allowed only for its data-independent gates. So the lab zeroes it too: every gate starts at
#: σ(w·x), near 1/2 for small w·x, not near 1, and training decides how much each head forgets.
FOX_GATE_BIAS = 0.0


def forget_bias(log_forget: torch.Tensor) -> torch.Tensor:
    r"""(…, L, L) :math:`D_{ij} = c_i - c_j`, :math:`c_i = \sum_{l \le i}\log f_l`, for j ≤ i, −inf above: the torch
    mirror of :func:`posenc_core.forget_gate_bias` (tested equal to it), from log gates (…, L)."""
    total = log_forget.cumsum(-1)
    bias = total[..., :, None] - total[..., None, :]
    length = log_forget.shape[-1]
    future = torch.ones(length, length, dtype=torch.bool, device=log_forget.device).triu(1)
    return bias.masked_fill(future, float("-inf"))


def _fox_setup(model: nn.Module, longest: int) -> None:
    r"""One gate projection w (d → H) and bias b per layer, as FoX's ``fgate_proj``."""
    config = model.config
    model.forget = nn.ModuleList(nn.Linear(config.d_model, config.n_heads) for _ in range(config.n_layers))
    for gate in model.forget:
        nn.init.constant_(gate.bias, FOX_GATE_BIAS)


def _fox_gate_bias(model: nn.Module, layer: int, h: torch.Tensor) -> torch.Tensor:
    r"""(B, H, L, L) forgetting attention's bias from the layer's normed input h (B, L, d): log σ(w·h_t + b) per head
    and token (eq. 5 of Lin et al. 2025), summed as in :func:`forget_bias` (eq. 6)."""
    log_forget = F.logsigmoid(model.forget[layer](h)).transpose(1, 2)  # (B, H, L)
    return forget_bias(log_forget)


LAB_HOOKS = MappingProxyType(
    {
        "none": LabHooks(_no_setup),
        "sinusoidal": LabHooks(_sinusoidal_setup, added=_sinusoidal_added),
        "learned": LabHooks(_learned_setup, own=("positions",), added=_learned_added, record=_learned_record),
        "t5": LabHooks(_t5_setup, own=("t5_bias",), bias=_t5_bias, index=_t5_index),
        "rope": LabHooks(_rope_setup, rotation=_rope_rotation, record=_rope_record),
        "alibi": LabHooks(_alibi_setup, bias=_alibi_bias),
        "p_rope": LabHooks(_p_rope_setup, rotation=_rope_rotation),
        "hybrid": LabHooks(_rope_setup, rotation=_rope_rotation, rotates=_hybrid_rotates),
        "fox": LabHooks(_fox_setup, own=("forget",), gate_bias=_fox_gate_bias),
    }
)
