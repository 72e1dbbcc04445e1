r"""Interventions on the one shared model, and the loss they are measured by.

One model is loaded per server process and shared by all its sessions (Streamlit runs each session's script in its
own thread). An intervention changes that shared object for the time of one forward: a rotary embedding swapped for
one built from another config (:func:`rotary_swapped`), forward pre-hooks that give some layers cos = 1, sin = 0
(:func:`layers_without_position`), forward hooks that read the query and key projections (:func:`projections_read`).
Two sessions must never see each other's changes, so every intervention holds :data:`MODEL_LOCK` — one re-entrant
lock per process — from the change, through its forward, to the restore (``try/finally``: the model is restored even
when the forward fails). We chose the lock over copies of the model: a copy of the 135M float32 weights costs
~0.5 GB a session, and a forward is short (~0.4–1 s at 256 tokens), so waiting for the lock costs less than memory
the process does not have. :func:`posenc_real.load.forward` takes the same lock, so a plain forward of another
session waits for an intervention to end and sees the model as loaded.

The loss is the mean next-token negative log-likelihood (nats) that transformers' ``LlamaForCausalLM`` computes with
``labels=`` the input ids; :func:`token_losses` returns it per token, from the same logits, so a figure can show
where a change costs.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .load import MODEL_LOCK, RealModel, forward

__all__ = [
    "MODEL_LOCK",
    "layers_without_position",
    "mean_loss",
    "projections_read",
    "rotary_from_parameters",
    "rotary_swapped",
    "rotary_with_inv_freq",
    "token_losses",
]


def token_losses(real: RealModel, ids: np.ndarray, positions: np.ndarray | None = None) -> np.ndarray:
    r"""(L − 1,) float64: −log p(ids[t + 1] | ids[≤ t]) from transformers' logits, in nats, for t = 0 … L − 2.

    Their mean is what ``LlamaForCausalLM(labels=ids)`` returns as ``loss`` (its ``ForCausalLMLoss``: logits shifted
    by one, cross-entropy in float32). Call it inside an intervention to measure that intervention.
    """
    import torch

    logits = forward(real, ids, positions).logits[0]  # (L, V)
    targets = torch.tensor(np.asarray(ids, dtype=np.int64)[1:], device=logits.device)
    nll = torch.nn.functional.cross_entropy(logits[:-1].float(), targets, reduction="none")  # (L − 1,)
    return nll.double().cpu().numpy()


def mean_loss(real: RealModel, ids: np.ndarray) -> float:
    r"""The mean of :func:`token_losses`: transformers' own causal-LM loss on ``ids`` (nats per token)."""
    return float(token_losses(real, ids).mean())


def _rotary(real: RealModel) -> Any:
    return real.model.model.rotary_emb


def rotary_from_parameters(real: RealModel, rope_parameters: dict[str, Any]) -> Any:
    r"""A new rotary embedding of the model's own class, built by transformers from a copy of the model's config
    whose ``rope_parameters`` are replaced: its ``__init__`` calls ``ROPE_INIT_FUNCTIONS[rope_type]`` (or the default
    computation), so the frequencies and ``attention_scaling`` are transformers' own. The model is not touched."""
    config = copy.deepcopy(real.model.config)
    config.rope_parameters = dict(rope_parameters)
    rotary = type(_rotary(real))(config=config)
    return rotary.to(real.device)


def rotary_with_inv_freq(real: RealModel, inv_freq: np.ndarray) -> Any:
    r"""A copy of the model's rotary embedding whose ``inv_freq`` buffer holds ``inv_freq`` (its forward, which forms
    the angles and cos/sin, stays transformers' own). The model is not touched."""
    import torch

    with MODEL_LOCK:  # the model's own module, never another session's swapped in
        rotary = copy.deepcopy(_rotary(real))
    values = torch.tensor(np.asarray(inv_freq, dtype=np.float32), device=rotary.inv_freq.device)
    if values.shape != rotary.inv_freq.shape:
        raise ValueError(f"inv_freq has shape {tuple(values.shape)}, the model's {tuple(rotary.inv_freq.shape)}")
    rotary.inv_freq.copy_(values)
    return rotary


@contextlib.contextmanager
def rotary_swapped(real: RealModel, rotary: Any) -> Iterator[None]:
    r"""Inside the block (and holding :data:`MODEL_LOCK`) the model's ``model.rotary_emb`` is ``rotary``, so its own
    forward computes every layer's cos and sin with it; the model's own module is put back on exit, whatever
    happened."""
    with MODEL_LOCK:
        inner = real.model.model
        original = inner.rotary_emb
        inner.rotary_emb = rotary
        try:
            yield
        finally:
            inner.rotary_emb = original


@contextlib.contextmanager
def layers_without_position(real: RealModel, layers: Sequence[int]) -> Iterator[None]:
    r"""Inside the block (holding :data:`MODEL_LOCK`) the attention of each layer in ``layers`` receives cos = 1 and
    sin = 0 (a forward pre-hook replaces its ``position_embeddings``): RoPE's rotation there is the identity, so that
    layer's scores see no position at all (NoPE); the causal mask still orders the tokens. Hooks removed on exit."""
    import torch

    def no_rotation(module: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        cos, sin = kwargs["position_embeddings"]
        kwargs["position_embeddings"] = (torch.ones_like(cos), torch.zeros_like(sin))
        return args, kwargs

    with MODEL_LOCK:
        handles = []
        try:
            for index in layers:
                attention = real.model.model.layers[int(index)].self_attn
                handles.append(attention.register_forward_pre_hook(no_rotation, with_kwargs=True))
            yield
        finally:
            for handle in handles:
                handle.remove()


@contextlib.contextmanager
def projections_read(real: RealModel) -> Iterator[dict[str, list[Any]]]:
    r"""Inside the block (holding :data:`MODEL_LOCK`) forward hooks on every layer's ``q_proj`` and ``k_proj`` keep
    their outputs — the queries and keys *before* RoPE rotates them — in ``{"query": [...], "key": [...]}``, one
    (1, L, heads · head_dim) tensor per layer, in layer order. Hooks removed on exit."""
    captured: dict[str, list[Any]] = {"query": [], "key": []}

    def keeper(name: str) -> Any:
        def hook(module: Any, args: tuple, output: Any) -> None:
            captured[name].append(output.detach())

        return hook

    with MODEL_LOCK:
        handles = []
        try:
            for layer in real.model.model.layers:
                handles.append(layer.self_attn.q_proj.register_forward_hook(keeper("query")))
                handles.append(layer.self_attn.k_proj.register_forward_hook(keeper("key")))
            yield captured
        finally:
            for handle in handles:
                handle.remove()
