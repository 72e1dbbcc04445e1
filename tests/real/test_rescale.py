r"""Section 5's measurements on the real model: the frequencies transformers builds for every rescaling equal the
core's (the project's contract), the loss under a rescaling is the loss of the model fed the core's cos and sin
(an independent route into the same forward), dynamic NTK changes nothing inside the training length, the NoPE
scan's every-layer loss is the loss at position 0 everywhere, and the model is the same after every intervention."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc_core import rope_angles, rope_frequencies
from posenc_core.rope_scaling.formulas import ntk_base
from posenc_real import RealModel, forward, tokenize
from posenc_real.intervene import MODEL_LOCK, rotary_from_parameters, token_losses
from posenc_real.rescale import (
    FACTORS,
    RESCALINGS,
    core_frequencies,
    nope_layer_losses,
    rescaled_frequencies,
    rescaling_losses,
)

TEXT = "Rotary position embeddings turn each pair of a query by an angle that grows with its position in the text."


@pytest.fixture(scope="module")
def ids(real: RealModel) -> np.ndarray:
    return tokenize(real, TEXT)


@pytest.mark.parametrize("method", list(RESCALINGS))
def test_transformers_frequencies_for_every_rescaling_equal_the_cores(real: RealModel, method: str) -> None:
    for factor in FACTORS:
        theirs = rescaled_frequencies(real, method, factor, seq_len=300)
        ours = core_frequencies(real, method, factor, seq_len=300)
        np.testing.assert_allclose(theirs.inv_freq, ours.inv_freq, rtol=1e-6, atol=0)
        assert theirs.attention_factor == pytest.approx(ours.attention_factor, rel=1e-12)


def test_named_values_of_each_rescaling(real: RealModel) -> None:
    plain = rope_frequencies(64, base=100_000.0).inv_freq
    k = 4.0
    np.testing.assert_allclose(core_frequencies(real, "linear", k).inv_freq, plain / k)  # PI: θ_i / k
    np.testing.assert_allclose(core_frequencies(real, "base", k).inv_freq, rope_frequencies(64, base=4e5).inv_freq)
    # dynamic NTK below the training length: the model's own θ_i
    np.testing.assert_allclose(rescaled_frequencies(real, "dynamic", k, seq_len=8192).inv_freq, plain, rtol=1e-6)
    yarn = rescaled_frequencies(real, "yarn", k)
    assert yarn.attention_factor == pytest.approx(0.1 * np.log(k) + 1)  # YaRN's temperature, Peng et al. eq. 22
    assert yarn.inv_freq[0] == pytest.approx(plain[0], rel=1e-6)  # the fastest pair kept
    assert yarn.inv_freq[-1] == pytest.approx(plain[-1] / k, rel=1e-6)  # the slowest interpolated
    # static NTK-aware (bloc97) is base × k^(d/(d−2)): transformers' default type at that base equals the core's "ntk"
    theirs = rotary_from_parameters(real, {"rope_type": "default", "rope_theta": ntk_base(1e5, k, 64)})
    ours = rope_frequencies(64, base=1e5, rope_scaling={"rope_type": "ntk", "factor": k}).inv_freq
    np.testing.assert_allclose(theirs.inv_freq.double().numpy(), ours, rtol=1e-6)


def _loss_with_core_rotation(real: RealModel, ids: np.ndarray, inv_freq: np.ndarray, factor: float) -> float:
    r"""The loss with every layer's cos and sin computed here from the core's θ_i (float64, then float32)."""
    angles = rope_angles(np.arange(ids.size), inv_freq)  # (L, d/2)
    both = np.concatenate([angles, angles], axis=-1)[None]  # (1, L, d): rotate_half's layout
    cos = torch.as_tensor(np.cos(both) * factor, dtype=torch.float32)
    sin = torch.as_tensor(np.sin(both) * factor, dtype=torch.float32)

    def hook(module, args, kwargs):
        kwargs["position_embeddings"] = (cos, sin)
        return args, kwargs

    with MODEL_LOCK:
        layers = real.model.model.layers
        handles = [layer.self_attn.register_forward_pre_hook(hook, with_kwargs=True) for layer in layers]
        try:
            return float(token_losses(real, ids).mean())
        finally:
            for handle in handles:
                handle.remove()


def test_each_rescaling_moves_the_loss_as_the_core_frequencies_say(real: RealModel, ids: np.ndarray) -> None:
    before = forward(real, ids).logits.clone()
    rotary = real.model.model.rotary_emb
    table = rescaling_losses(real, ids, factors=(8,))
    assert table.base == pytest.approx(token_losses(real, ids).mean(), abs=0)
    for m, method in enumerate(table.methods):
        core = core_frequencies(real, method, 8, seq_len=ids.size)
        expected = _loss_with_core_rotation(real, ids, core.inv_freq, core.attention_factor)
        assert table.loss[m, 0] == pytest.approx(expected, abs=2e-3), method
    change = dict(zip(table.methods, table.change[:, 0], strict=True))
    assert change["dynamic"] == 0.0  # inside 8,192 tokens transformers' dynamic NTK is the model's own RoPE
    assert change["linear"] > 0.05  # PI at 8×, without fine-tuning, costs this model loss on this text
    assert real.model.model.rotary_emb is rotary
    assert torch.equal(forward(real, ids).logits, before)


def test_nope_scan_all_layers_is_position_zero_and_one_layer_a_hook(real: RealModel, ids: np.ndarray) -> None:
    before = forward(real, ids).logits.clone()
    hooks = sum(len(m._forward_pre_hooks) for m in real.model.modules())
    scan = nope_layer_losses(real, ids)
    assert scan.loss.shape == (real.num_layers,)
    # independently: position 0 for every token gives cos = 1, sin = 0 in every layer (an explicit mask keeps
    # transformers from reading the repeated positions as packed sequences)
    tokens = torch.as_tensor(ids)[None]
    with torch.no_grad():
        out = real.model(
            tokens,
            position_ids=torch.zeros_like(tokens),
            attention_mask=torch.ones_like(tokens),
            labels=tokens,
            use_cache=False,
        )
    assert scan.all_layers == pytest.approx(float(out.loss), abs=1e-5)
    # one layer made NoPE: the core's θ_i = 0 fed to that layer alone gives the same loss
    layer = int(np.argmax(scan.change))
    zero = (torch.ones(1, ids.size, real.head_dim), torch.zeros(1, ids.size, real.head_dim))

    def hook(module, args, kwargs):
        kwargs["position_embeddings"] = zero
        return args, kwargs

    with MODEL_LOCK:
        handle = real.model.model.layers[layer].self_attn.register_forward_pre_hook(hook, with_kwargs=True)
        try:
            expected = token_losses(real, ids).mean()
        finally:
            handle.remove()
    assert scan.loss[layer] == pytest.approx(expected, abs=1e-6)
    assert scan.change.max() > 0 and scan.all_layers > scan.loss.max()
    assert sum(len(m._forward_pre_hooks) for m in real.model.modules()) == hooks
    assert torch.equal(forward(real, ids).logits, before)
