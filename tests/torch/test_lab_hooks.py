r"""The lab's hooks for the 2025 designs equal the NumPy core: FoX's forget-gate bias, p-RoPE's rotation, the hybrid's
layer pattern; and the model and the stacked trainer apply them where the core says (float64 to 1e-12 where the hook
is the formula itself; float32 runs of the model to 1e-5)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402

import posenc_core as pc  # noqa: E402
from posenc_core.families import p_rope_inv_freq  # noqa: E402
from posenc_core.torch_backend import rotate_pairs  # noqa: E402
from posenc_lab.hooks import FOX_GATE_BIAS, LAB_HOOKS, forget_bias  # noqa: E402
from posenc_lab.stack import Stack  # noqa: E402
from posenc_lab.tasks import LIVE_DEFAULT, PRESETS, TASKS, LabConfig, batches_for, for_task  # noqa: E402
from posenc_lab.train import TinyLM  # noqa: E402

TINY = PRESETS["tiny"]


def _model(encoding: str, config: LabConfig = TINY, seed: int = 0) -> TinyLM:
    torch.manual_seed(seed)
    return TinyLM(config, encoding)


# --- FoX -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layer", [0, 1])
def test_fox_hook_is_the_cores_forget_gate_bias(layer: int) -> None:
    r"""The hook's (B, H, L, L) bias from a layer's input equals ``forget_gate_bias(log_forget_gates(h, w, b))``."""
    model = _model("fox").double()
    with torch.no_grad():
        for gate in model.forget:
            gate.bias.normal_()  # a bias that is not zero, so that b is tested too
    h = torch.randn(3, 11, TINY.d_model, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    got = LAB_HOOKS["fox"].gate_bias(model, layer, h).detach().numpy()
    gate = model.forget[layer]
    w, b = gate.weight.detach().numpy().T, gate.bias.detach().numpy()  # (d, H), (H,)
    want = pc.forget_gate_bias(pc.log_forget_gates(h.numpy(), w, b))
    assert got.shape == want.shape == (3, TINY.n_heads, 11, 11)
    assert np.array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=0, atol=1e-12)


def test_fox_bias_is_alibi_when_every_gate_is_equal() -> None:
    r"""Equal gates e^(−m) give −m(i − j): the torch mirror's ALiBi limit, as the core's."""
    got = forget_bias(torch.full((12,), -0.5, dtype=torch.float64)).numpy()
    want = pc.alibi_bias(8, 12, heads=[0])[0]
    lower = np.tril(np.ones((12, 12), dtype=bool))
    np.testing.assert_allclose(got[lower], want[lower], rtol=0, atol=1e-12)
    assert np.isneginf(got[~lower]).all()


def test_fox_gates_start_with_the_reference_codes_zero_bias() -> None:
    model = _model("fox")
    assert FOX_GATE_BIAS == 0.0
    assert all(torch.equal(g.bias, torch.zeros(TINY.n_heads)) for g in model.forget)
    assert len(model.forget) == TINY.n_layers  # one gate projection per layer, as FoX's fgate_proj


def test_fox_model_adds_its_bias_in_every_layer() -> None:
    r"""The model's forward equals one written out: each block's attention with the bias of its own normed input."""
    model = _model("fox").double().eval()
    tokens = torch.randint(0, TINY.vocab, (2, 13), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        x = model.tokens(tokens)
        for i, block in enumerate(model.blocks):
            h = block.ln1(x)
            b, length, d = x.shape
            q, k, v = block.qkv(h).view(b, length, 3, TINY.n_heads, -1).permute(2, 0, 3, 1, 4)
            scores = q @ k.transpose(-1, -2) / (d // TINY.n_heads) ** 0.5 + LAB_HOOKS["fox"].gate_bias(model, i, h)
            attn = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, length, d)
            x = x + block.proj(attn)
            x = x + block.mlp(block.ln2(x))
        want = model.head(model.ln_f(x))
        np.testing.assert_allclose(model(tokens).numpy(), want.numpy(), rtol=0, atol=1e-10)


# --- p-RoPE --------------------------------------------------------------------------------------------------------


def test_p_rope_tables_turn_the_cores_p_rope_frequencies() -> None:
    config = dataclasses.replace(TINY, p_rope=0.5)
    model = _model("p_rope", config)
    inv_freq = p_rope_inv_freq(config.d_model // config.n_heads, p=0.5)
    angles = np.outer(np.arange(model.rope_cos.shape[0], dtype=np.float64), inv_freq)  # m·θ_i
    np.testing.assert_allclose(model.rope_cos.numpy(), np.cos(angles), rtol=0, atol=1e-6)
    np.testing.assert_allclose(model.rope_sin.numpy(), np.sin(angles), rtol=0, atol=1e-6)
    assert (inv_freq == 0).sum() == 2 and torch.all(model.rope_cos[:, 2:] == 1)  # 8-wide heads: 2 of 4 pairs stand


def test_p_rope_scores_in_the_model_are_the_cores() -> None:
    r"""q, k rotated by the model's p-RoPE tables give :func:`posenc_core.rope_scores` at p-RoPE's frequencies on the
    turning pairs, the plain dot product on the others (at the CPU preset's 8-wide heads, p = 0.75)."""
    config = PRESETS["cpu"]
    model = _model("p_rope", config)
    head = config.d_model // config.n_heads
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((20, head)), rng.standard_normal((20, head))
    cos, sin = LAB_HOOKS["p_rope"].rotation(model, 20, None)
    rq = rotate_pairs(torch.as_tensor(q), cos.double(), sin.double()).numpy()
    rk = rotate_pairs(torch.as_tensor(k), cos.double(), sin.double()).numpy()
    got = rq @ rk.T / np.sqrt(head)
    inv_freq = p_rope_inv_freq(head, p=config.p_rope)
    positions = np.arange(20.0)
    turn = [i for i in range(head // 2) if inv_freq[i] > 0]
    idx = turn + [i + head // 2 for i in turn]
    still = [i for i in range(head) if i not in idx]
    want = pc.rope_scores(q[:, idx], k[:, idx], inv_freq[turn], scale=1 / np.sqrt(head)) + q[:, still] @ k[
        :, still
    ].T / np.sqrt(head)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)  # float32 tables
    assert positions.size == 20 and len(turn) == 3


# --- hybrid --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_layers", [2, 4, 5])
def test_hybrid_rotates_the_layers_the_core_says(n_layers: int) -> None:
    model = _model("hybrid", dataclasses.replace(TINY, n_layers=n_layers))
    got = [LAB_HOOKS["hybrid"].rotates(model, i) for i in range(n_layers)]
    assert got == pc.hybrid_rope_layers(n_layers).tolist()
    assert all(LAB_HOOKS["rope"].rotates(model, i) for i in range(n_layers))


def test_hybrid_model_is_rope_in_layer_one_and_nope_in_layer_two() -> None:
    r"""Same weights: the hybrid's forward equals the RoPE model's blocks run with rotation in the first only."""
    hybrid, rope = _model("hybrid"), _model("rope")
    rope.load_state_dict(hybrid.state_dict())
    tokens = torch.randint(0, TINY.vocab, (2, 15), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        tables = LAB_HOOKS["rope"].rotation(rope, 15, None)
        x = rope.tokens(tokens)
        x = rope.blocks[0](x, None, tables)
        x = rope.blocks[1](x, None, None)
        want = rope.head(rope.ln_f(x))
        assert torch.allclose(hybrid(tokens), want, rtol=0, atol=1e-6)
        assert not torch.allclose(rope(tokens), want, atol=1e-3)  # RoPE in both layers is another model


# --- the stack with the new members -------------------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_the_stack_gives_fox_its_own_gate_gradients(task: str) -> None:
    r"""The gate projections are FoX's own parameters (trained in place): the stack's backward gives them the gradient
    of FoX's loss alone."""
    config = dataclasses.replace(for_task(TINY, task), encodings=("rope", "fox", "hybrid"))
    models = [_model(e, config, seed=i) for i, e in enumerate(config.encodings)]
    stack = Stack(models)
    tokens = batches_for(config, torch.device("cpu")).batch(6, config.train_length)
    stack.losses(tokens, TASKS[task].scored_by).sum().backward()
    fox = models[1]
    stacked = {name: p.grad.clone() for name, p in fox.named_parameters() if name.startswith("forget.")}
    fox.zero_grad()
    logits = fox(tokens[:, :-1])
    if TASKS[task].scored_by == "distance":
        loss = F.cross_entropy(logits[:, -1], tokens[:, -1])
    else:
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
    loss.backward()
    for name, p in fox.named_parameters():
        if name.startswith("forget."):
            assert torch.allclose(stacked[name], p.grad, rtol=1e-3, atol=1e-4 * p.grad.abs().max()), name
            assert p.grad.abs().max() > 0


def test_the_default_live_run_trains_the_six_it_trained_before() -> None:
    r"""The 2025 designs are opt-in in a live run: its default set of models is unchanged (its ≤ 30 s on 2 cores)."""
    from posenc_ui.lessons.lab import view as lab

    six = ("none", "sinusoidal", "learned", "t5", "rope", "alibi")
    defaults = {p.name: p.default for p in lab.PARAMS}
    assert lab.live_config(defaults).encodings == LIVE_DEFAULT == six
