r"""The lab's models trained as one: every weight of the E models stacked along a leading axis, so that one training
step runs all E encodings with the kernels of one model.

**Why.** A lab model is small (the CPU preset: 2 layers, d = 64, 32 tokens a sequence), and on a GPU a model that
small is bound by kernel launches, not by arithmetic: a probe on an H100 measured 4–7 ms a step for one model, with
the card about 3 % busy. Trained one after another, E models pay E times the launches. Stacked, each launch does the
work of all E: on an H200, the CPU preset's six models trained in 2.62 s stacked against 9.08 s one after another
(3.46×; 8.7 ms a step for all six against 5.0 ms for each model alone). On a CPU, which is bound by arithmetic, it
saves overhead only: 1.26–1.46× for the CPU preset's six models on 2 cores (``python bench/bench_lab.py
--baseline``, the two trainers side by side, four runs); so does the GPU preset on a GPU (1.28× on the H200).

**What stays equal.** The models share nothing but their input batches (which were already the same for every
encoding). Each stacked weight holds the E models' weights side by side; the loss is the *sum* of each model's own
mean loss, so the gradient of model e's weights is the gradient of model e's loss alone; Adam acts element by element,
so one step of the stack is each model's own Adam step. Training the stack equals training the E :class:`TinyLM`
one after another, up to float rounding in the batched kernels (``tests/torch/test_lab_stack.py`` checks logits,
gradients and whole training runs against the models trained one by one).

**The encodings as data.** What differs between encodings becomes a tensor with an axis over the models:

- an additive position table (E, L, d): the learned rows, the sinusoid, or zeros;
- RoPE's rotation, applied to the RoPE model's heads alone;
- an additive attention bias per model and head (E·H, L, L): ALiBi's −m_h(i − j), T5's learned bucket bias, or 0,
  each with −∞ above the diagonal. The E models' heads sit side by side as the E·H heads of one attention call. On a
  GPU there is one exception: T5's bias is learned, and an attention whose bias needs a gradient takes PyTorch's slow
  reference path (on 2 CPU cores, 71 ms against 26 ms for 48 heads of the CPU preset, forward and backward). So T5's
  model is put last and, on a GPU, its heads attend in a call of their own; on a CPU attention is written out, and
  every head attends in one call. The other members' biases are constants, made once per length;
- a bias computed from the data in every layer (FoX's forget gates, a family's ``gate_bias``), from each member's own
  normed input to that layer: (B, E·H, L, L), zero for the heads of members without one, added to the constant bias;
- which layers rotate: each layer turns the heads of the members whose ``rotates`` says so (the hybrid's first only),
  as one rotation of every head whose other members turn by 0 (exact: :func:`_layer_rotation`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from posenc_core.torch_backend import rotate_pairs

from .hooks import LAB_HOOKS

__all__ = ["Stack"]

#: Parameters that only one encoding's model has: the stack trains the model's own tensor, in place.
OWN = tuple(f"{name}." for hooks in LAB_HOOKS.values() for name in hooks.own)


class Stack(nn.Module):
    r"""E lab models (``TinyLM``, one per encoding, same configuration) as one module: ``forward`` gives the E models'
    logits (E, B, L, vocab) for one batch of tokens, ``losses`` each model's own loss, ``unstack`` writes the trained
    weights back into the models."""

    def __init__(self, models: Sequence[nn.Module]) -> None:
        super().__init__()
        # A plain list, not submodules (while training, their weights live here); a learned bias (T5's) last: its
        # heads attend apart.
        self.members = sorted(models, key=lambda m: m.hooks.learned_bias)
        models = self.members
        self.config = models[0].config
        self.names = [name for name, _ in models[0].named_parameters() if not name.startswith(OWN)]
        with torch.no_grad():
            weights = {name: [dict(m.named_parameters())[name] for m in models] for name in self.names}
            self.weights = nn.ParameterList(nn.Parameter(torch.stack(weights[name])) for name in self.names)
        # The learned table and T5's bias (each family's ``own``) are the members' own Parameters, trained in place.
        self.own = nn.ParameterList(p for m in models for name, p in m.named_parameters() if name.startswith(OWN))
        self._constants: dict[int, dict] = {}  # length → the bias, RoPE tables and zero positions at that length

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        r"""Logits (E, B, L, vocab) of every member for ``tokens`` (B, L)."""
        w = dict(zip(self.names, self.weights, strict=True))
        length = tokens.shape[1]
        x = w["tokens.weight"][:, tokens]  # (E, B, L, d)
        positions = self._positions(length)
        if positions is not None:
            x = x + positions[:, None]  # (E, 1, L, d)
        bias, rope = self._biases(length), self._constant(length)["rope"]
        for i in range(self.config.n_layers):
            x = self._block(x, w, i, bias, rope[i])
        return _linear(_layer_norm(x, w["ln_f.weight"], w["ln_f.bias"]), w["head.weight"], w["head.bias"])

    def losses(self, tokens: torch.Tensor, scored_by: str) -> torch.Tensor:
        r"""(E,) each member's own mean next-token cross-entropy; a task scored by distance (the task's
        :attr:`~posenc_lab.tasks.Task.scored_by`): of the answer, the last token, alone."""
        logits = self(tokens[:, :-1])  # (E, B, L − 1, vocab)
        target = tokens[:, 1:]
        if scored_by == "distance":
            logits, target = logits[:, :, -1], tokens[:, -1]  # (E, B, vocab), (B,)
        members, vocab = logits.shape[0], logits.shape[-1]
        every = target.expand(members, *target.shape).reshape(-1)
        return F.cross_entropy(logits.reshape(-1, vocab), every, reduction="none").view(members, -1).mean(1)

    @torch.no_grad()
    def unstack(self) -> None:
        r"""Copy each member's trained slice of the stacked weights back into the member."""
        for e, member in enumerate(self.members):
            own = dict(member.named_parameters())
            for name, stacked in zip(self.names, self.weights, strict=True):
                own[name].copy_(stacked[e])

    # --- one block -------------------------------------------------------------------------------------------------

    def _block(
        self, x: torch.Tensor, w: dict, layer: int, bias: list[torch.Tensor], rope: tuple | None
    ) -> torch.Tensor:
        r"""A pre-LN decoder block of every member at once, as ``Block.forward``; the members' heads side by side."""
        e, b, length, d = x.shape
        h, p = self.config.n_heads, f"blocks.{layer}."
        normed = _layer_norm(x, w[p + "ln1.weight"], w[p + "ln1.bias"])  # (E, B, L, d)
        qkv = _linear(normed, w[p + "qkv.weight"], w[p + "qkv.bias"])
        q, k, v = qkv.view(e, b, length, 3, h, d // h).permute(3, 1, 0, 4, 2, 5).reshape(3, b, e * h, length, d // h)
        if rope is not None:  # every head at once: the rotating members' turn, the others' tables turn by 0
            q, k = rotate_pairs(q, *rope), rotate_pairs(k, *rope)
        attn = _attend(q, k, v, bias, self._gate_biases(normed, layer))  # (B, E·H, L, d_head)
        attn = attn.view(b, e, h, length, d // h).permute(1, 0, 3, 2, 4).reshape(e, b, length, d)
        x = x + _linear(attn, w[p + "proj.weight"], w[p + "proj.bias"])
        hidden = F.gelu(_linear(_layer_norm(x, w[p + "ln2.weight"], w[p + "ln2.bias"]), *_pair(w, p + "mlp.0")))
        return x + _linear(hidden, *_pair(w, p + "mlp.2"))

    # --- what differs between the members, as tensors ------------------------------------------------------------

    def _positions(self, length: int) -> torch.Tensor | None:
        r"""(E, L, d): what each member adds to its token vectors (None when no member adds anything)."""
        rows = [m.hooks.added(m, length) for m in self.members]
        if all(row is None for row in rows):
            return None
        zeros = self._constant(length)["zeros"]
        return torch.stack([zeros if row is None else row for row in rows])

    def _biases(self, length: int) -> list[torch.Tensor]:
        r"""The members' additive attention biases with −∞ on future keys, as consecutive groups of heads: one
        (1, E'·H, L, L) for every member with a fixed bias (made once per length), then each learned bias (T5's)
        (1, H, L, L), computed anew at every call."""
        constant = self._constant(length)
        learned = [
            m.attention_bias(length, constant["indices"][e])[None]
            for e, m in enumerate(self.members)
            if m.hooks.learned_bias
        ]
        return ([] if constant["bias"] is None else [constant["bias"]]) + learned

    def _gate_biases(self, normed: torch.Tensor, layer: int) -> torch.Tensor | None:
        r"""(B, E·H, L, L): each gated member's bias from its own normed input ``normed[e]`` (B, L, d), zeros for
        the other members' heads; None when no member computes a bias from the data."""
        if all(m.hooks.gate_bias is None for m in self.members):
            return None
        _, b, length, _ = normed.shape
        zeros = normed.new_zeros(b, self.config.n_heads, length, length)
        blocks = [
            zeros if m.hooks.gate_bias is None else m.hooks.gate_bias(m, layer, normed[e])
            for e, m in enumerate(self.members)
        ]
        return torch.cat(blocks, dim=1)

    def _constant(self, length: int) -> dict:
        r"""The members' fixed tensors at ``length``, made on first use."""
        if length not in self._constants:
            self._constants[length] = _constants(self.members, length)
        return self._constants[length]


def _constants(members: Sequence[nn.Module], length: int) -> dict:
    r"""Zero positions (L, d); the fixed biases of every member without a learned bias, side by side
    (1, E'·H, L, L), and each learned bias's index (T5's bucket of each (i, j)) by member; per layer, each member
    rotating in it (RoPE; the hybrid in its first layer) by its heads and its (cos, sin)."""
    config = members[0].config
    device = next(members[0].parameters()).device
    zeros = torch.zeros(length, config.d_model, device=device)
    future = torch.ones(length, length, dtype=torch.bool, device=device).triu(1)
    causal = torch.zeros(config.n_heads, length, length, device=device).masked_fill(future, float("-inf"))
    fixed = [m.attention_bias(length) for m in members if not m.hooks.learned_bias]  # a learned one: at each call
    bias = torch.cat([causal if b is None else b for b in fixed])[None] if fixed else None  # (1, E'·H, L, L)
    indices = {e: m.hooks.index(m, length) for e, m in enumerate(members) if m.hooks.learned_bias}
    tables = [m.hooks.rotation(m, length, None) for m in members]  # (L, d_head/2) cos and sin, or None
    rope = [_layer_rotation(members, tables, layer) for layer in range(config.n_layers)]
    return {"zeros": zeros, "bias": bias, "indices": indices, "rope": rope}


def _layer_rotation(members: Sequence[nn.Module], tables: list, layer: int) -> tuple | None:
    r"""(E·H, L, d_head/2) cos and sin for every head of every member in ``layer``: a member that rotates there its
    own tables on each of its heads, every other cos 1 and sin 0; None when no member rotates in it.

    A turn by 0 is exact: x·1 − y·0 = x and x·0 + y·1 = y in floating point (for finite x and y), so one rotation of
    all E·H heads gives every member what its own model computes, bit for bit, without cutting the heads apart and
    joining them again (a copy of q and k, and of their gradients, per rotating member and layer)."""
    turning = [e for e, m in enumerate(members) if tables[e] is not None and m.hooks.rotates(m, layer)]
    if not turning:
        return None
    config = members[0].config
    cos, sin = tables[turning[0]]
    heads = config.n_heads
    every_cos = cos.new_ones(len(members) * heads, *cos.shape)
    every_sin = sin.new_zeros(len(members) * heads, *sin.shape)
    for e in turning:
        every_cos[e * heads : (e + 1) * heads] = tables[e][0]
        every_sin[e * heads : (e + 1) * heads] = tables[e][1]
    return every_cos, every_sin


def _attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, biases: list[torch.Tensor], gates: torch.Tensor | None = None
) -> torch.Tensor:
    r"""Attention of (B, E·H, L, d_head) heads, each consecutive group of heads with its own bias from ``biases``,
    plus ``gates`` (B, E·H, L, L), the biases computed from the data, when there are any.

    On a CPU it is written out (scores, softmax, weighted sum) for every head in one call, T5's learned bias
    included: a step of the CPU preset's six models took 108 ms against 118 ms through PyTorch's reference attention
    (medians of six alternating rounds of 15 steps, 2 cores; its checks for rows of −∞ cost as much as its softmax),
    which in turn beat its flash kernel for 8-wide heads (122 against 145 ms, an earlier run). Elsewhere each group
    goes to ``scaled_dot_product_attention``."""
    if q.device.type == "cpu":
        bias = biases[0] if len(biases) == 1 else torch.cat(biases, dim=1)
        scores = torch.matmul(q * q.shape[-1] ** -0.5, k.transpose(-1, -2)) + bias
        if gates is not None:
            scores = scores + gates
        return torch.matmul(scores.softmax(-1), v)
    outputs, start = [], 0
    for bias in biases:
        heads = slice(start, start + bias.shape[1])
        mask = bias if gates is None else bias + gates[:, heads]
        outputs.append(F.scaled_dot_product_attention(q[:, heads], k[:, heads], v[:, heads], attn_mask=mask))
        start = heads.stop
    return outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=1)


def _pair(w: dict, prefix: str) -> tuple[torch.Tensor, torch.Tensor]:
    return w[prefix + ".weight"], w[prefix + ".bias"]


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    r"""Each member's ``nn.Linear``: x (E, …, in) @ weight (E, out, in)ᵀ + bias (E, out), in one batched product."""
    e, out = bias.shape
    flat = torch.baddbmm(bias[:, None], x.reshape(e, -1, x.shape[-1]), weight.transpose(1, 2))
    return flat.view(*x.shape[:-1], out)


def _layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    r"""Each member's ``nn.LayerNorm`` on x (E, B, L, d), with its own (E, d) scale and shift."""
    return F.layer_norm(x, x.shape[-1:]) * weight[:, None, None] + bias[:, None, None]
