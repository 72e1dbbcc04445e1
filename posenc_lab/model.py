r"""The lab's one model: a pre-LN decoder whose position handling comes from its family's hooks
(:data:`posenc_lab.hooks.LAB_HOOKS`), never from a family's name."""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from posenc_core.torch_backend import rope_cos_sin, rope_frequencies, rotate_pairs

from .hooks import LAB_HOOKS, relative
from .tasks import LabConfig

__all__ = ["Block", "TinyLM"]


class Block(nn.Module):
    """Pre-LN decoder block: causal self-attention, then a 4× MLP, each on a residual branch."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None, rope: tuple | None, gate: Callable | None = None
    ) -> torch.Tensor:
        r"""``mask``: the (H, L, L) bias with −inf on future keys, or None (causal); ``rope``: (cos, sin) or None;
        ``gate``: a bias from the data, (B, H, L, L) with −inf on future keys, of this layer's normed input."""
        b, length, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).view(b, length, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        if rope is not None:  # (cos, sin), each (L, d_head/2): rotate q and k, (B, H, L, d_head)
            q, k = rotate_pairs(q, *rope), rotate_pairs(k, *rope)
        if gate is not None:  # (B, H, L, L), its own −inf above the diagonal
            mask = gate(h) if mask is None else gate(h) + mask
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, length, d))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    """A decoder whose one varying part is ``encoding``, whose hooks (:data:`~posenc_lab.hooks.LAB_HOOKS`) say how it
    handles position; shared weights are created first, so equal seeds give equal shared initial weights across
    encodings."""

    def __init__(self, config: LabConfig, encoding: str) -> None:
        super().__init__()
        self.config, self.encoding = config, encoding
        d, h = config.d_model, config.n_heads
        longest = max(config.eval_length, config.extension_factor * config.train_length)
        # Every input signal starts at one scale: token vectors and learned position rows N(0, 1) (PyTorch's default),
        # sinusoid entries of RMS 1/√2. A learned table 50 times smaller (GPT-2's 0.02 beside N(0, 1) tokens) would be
        # drowned, and the "learned" model would train as one with no position at all; a 0.02 token table would be
        # drowned by the sinusoids. The rows past the training length stay N(0, 1): random, as in a real model.
        self.tokens = nn.Embedding(config.vocab, d)
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, config.vocab)
        self.hooks = LAB_HOOKS[encoding]
        self.hooks.setup(self, longest)

    def rope_tables(self, length: int, rope_scaling: dict | None) -> tuple[torch.Tensor, torch.Tensor]:
        r"""(L, d_head/2) cos and sin for the RoPE frequencies of ``rope_scaling`` (None: as trained)."""
        freqs = rope_frequencies(
            self.config.d_model // self.config.n_heads,
            rope_scaling=rope_scaling,
            max_position_embeddings=self.config.train_length,
            seq_len=length,  # dynamic NTK reads the length actually run
        )
        positions = torch.arange(length, dtype=torch.float64)
        return rope_cos_sin(positions, freqs.inv_freq, attention_factor=freqs.attention_factor, dtype=torch.float32)

    def forward(self, tokens: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        r"""Logits (B, L, vocab); ``rope`` replaces the trained RoPE tables (zero-shot extension)."""
        length = tokens.shape[1]
        x = self.tokens(tokens)
        added = self.hooks.added(self, length)
        if added is not None:
            x = x + added
        rope = self.hooks.rotation(self, length, rope)
        mask = self.attention_bias(length)
        for i, block in enumerate(self.blocks):
            turn = rope if self.hooks.rotates(self, i) else None
            gate = None if self.hooks.gate_bias is None else functools.partial(self.hooks.gate_bias, self, i)
            x = block(x, mask, turn, gate)
        return self.head(self.ln_f(x))

    def attention_bias(self, length: int, index: torch.Tensor | None = None) -> torch.Tensor | None:
        r"""The additive (H, L, L) bias with −inf on future keys, or None for a plain causal mask; ``index`` is a
        learned bias's index at ``length`` (:class:`~posenc_lab.hooks.LabHooks`), when already made."""
        if self.hooks.bias is None:
            return None
        rel = relative(length, self.head.weight.device)  # j − i
        if index is None and self.hooks.learned_bias:
            index = self.hooks.index(self, length)
        return self.hooks.bias(self, rel, index).masked_fill(rel > 0, float("-inf"))
