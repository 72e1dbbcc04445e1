r"""Section 4's measurements on the real model: the hooked queries and keys are the ones transformers' own modules
compute, the pair norms are a plain loop over them, stopping pairs changes exactly the frequencies it says (checked
against transformers' own p-RoPE type, the core's p-RoPE and an independent hook), and the model is the same after
every intervention."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc_core import rope_inv_freq
from posenc_core.families import p_rope_inv_freq
from posenc_real import RealModel, forward, tokenize
from posenc_real.frequencies import (
    model_inv_freq,
    pair_norms,
    projections,
    stopped_inv_freq,
    stopped_rotation_losses,
)
from posenc_real.intervene import MODEL_LOCK, rotary_from_parameters, rotary_swapped, token_losses

TEXT = (
    "The river rose through the night, and by morning the old stone bridge stood alone in a wide brown lake, "
    "its three arches still holding the road above the water."
)


@pytest.fixture(scope="module")
def ids(real: RealModel) -> np.ndarray:
    return tokenize(real, TEXT)


def _model_state(real: RealModel) -> tuple:
    inner = real.model.model
    hooks = sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in real.model.modules())
    return inner.rotary_emb, inner.rotary_emb.inv_freq.clone(), hooks


def test_hooked_queries_and_keys_are_the_layers_own_projections(real: RealModel, ids: np.ndarray) -> None:
    queries, keys = projections(real, ids)
    assert len(queries) == len(keys) == real.num_layers
    assert queries[0].shape == (ids.size, real.num_heads, real.head_dim)
    assert keys[0].shape == (ids.size, real.num_kv_heads, real.head_dim)
    # independently: transformers' own hidden states (the input of each layer), its norm, its q_proj and k_proj
    with torch.no_grad():
        states = real.model(torch.as_tensor(ids)[None], output_hidden_states=True, use_cache=False).hidden_states
        for layer in (0, 13, real.num_layers - 1):
            block = real.model.model.layers[layer]
            x = block.input_layernorm(states[layer])
            q = block.self_attn.q_proj(x)[0].double().numpy().reshape(ids.size, real.num_heads, real.head_dim)
            k = block.self_attn.k_proj(x)[0].double().numpy().reshape(ids.size, real.num_kv_heads, real.head_dim)
            np.testing.assert_allclose(queries[layer], q, rtol=0, atol=1e-5)
            np.testing.assert_allclose(keys[layer], k, rtol=0, atol=1e-5)


def test_pair_norms_are_the_mean_norm_of_each_rotate_half_pair(real: RealModel, ids: np.ndarray) -> None:
    norms = pair_norms(real, ids)
    queries, keys = projections(real, ids)
    half = real.head_dim // 2
    assert norms.query.shape == (real.num_layers, half) and norms.key.shape == (real.num_layers, half)
    for layer in (2, 21):
        for i in (0, 7, half - 1):  # pair i is dimensions i and i + d/2 (transformers' rotate_half)
            expected_q = np.mean([np.sqrt(x[i] ** 2 + x[i + half] ** 2) for token in queries[layer] for x in token])
            expected_k = np.mean([np.sqrt(x[i] ** 2 + x[i + half] ** 2) for token in keys[layer] for x in token])
            assert norms.query[layer, i] == pytest.approx(expected_q, rel=1e-12)
            assert norms.key[layer, i] == pytest.approx(expected_k, rel=1e-12)
    np.testing.assert_allclose(norms.inv_freq, rope_inv_freq(64, base=100_000.0), rtol=1e-6)
    assert norms.wavelengths[0] == pytest.approx(2 * np.pi, rel=1e-6)
    shares = norms.share("query", slice(0, half)) + 0.0
    np.testing.assert_allclose(shares, 1.0)


def test_stopping_the_slowest_pairs_is_transformers_own_p_rope_and_the_cores(real: RealModel) -> None:
    inv_freq = model_inv_freq(real)
    for count in (4, 16):
        ours = stopped_inv_freq(inv_freq, count, "slowest")
        fraction = (32 - count) / 32
        theirs = (
            rotary_from_parameters(
                real, {"rope_type": "proportional", "rope_theta": real.rope_theta, "partial_rotary_factor": fraction}
            )
            .inv_freq.double()
            .numpy()
        )
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=0)
        np.testing.assert_allclose(ours, p_rope_inv_freq(64, p=fraction, base=100_000.0), rtol=1e-6, atol=0)
        assert np.count_nonzero(ours == 0) == count
    fastest = stopped_inv_freq(inv_freq, 2, "fastest")
    assert list(fastest[:2]) == [0.0, 0.0] and np.array_equal(fastest[2:], inv_freq[2:])


def test_stopped_losses_match_an_independent_hook_and_restore_the_model(real: RealModel, ids: np.ndarray) -> None:
    before = forward(real, ids).logits.clone()
    state = _model_state(real)
    stopped = stopped_rotation_losses(real, ids, counts=(4,))
    base = token_losses(real, ids).mean()
    assert stopped.base == pytest.approx(base, abs=0)

    # independently: every layer's attention gets cos = 1, sin = 0 on the 4 fastest pairs (dims 0–3 and 32–35)
    def hook(module, args, kwargs):
        cos, sin = kwargs["position_embeddings"]
        cos, sin = cos.clone(), sin.clone()
        for dim in (0, 1, 2, 3, 32, 33, 34, 35):
            cos[..., dim], sin[..., dim] = 1.0, 0.0
        kwargs["position_embeddings"] = (cos, sin)
        return args, kwargs

    with MODEL_LOCK:
        layers = real.model.model.layers
        handles = [layer.self_attn.register_forward_pre_hook(hook, with_kwargs=True) for layer in layers]
        try:
            expected = token_losses(real, ids).mean()
        finally:
            for handle in handles:
                handle.remove()
    assert stopped.loss["fastest"][0] == pytest.approx(expected, abs=1e-5)
    assert stopped.change("fastest")[0] == pytest.approx(expected - base, abs=1e-5)
    assert stopped.change("fastest")[0] > 0.05  # the fastest pairs matter to this model on this text
    after = _model_state(real)
    assert after[0] is state[0] and torch.equal(after[1], state[1]) and after[2] == state[2]
    assert torch.equal(forward(real, ids).logits, before)


def test_a_failed_forward_still_restores_the_model(real: RealModel, ids: np.ndarray) -> None:
    state = _model_state(real)
    rotary = rotary_from_parameters(real, {"rope_type": "default", "rope_theta": 10.0})
    with pytest.raises(RuntimeError, match="boom"), rotary_swapped(real, rotary):
        assert real.model.model.rotary_emb is rotary
        raise RuntimeError("boom")
    assert real.model.model.rotary_emb is state[0]
    assert torch.equal(real.model.model.rotary_emb.inv_freq, state[1])
