"""The torch backend computes what the NumPy core computes: float64 to 1e-12, float32 to 1e-5 (CPU in CI)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import posenc_core as pc  # noqa: E402
from posenc_core import torch_backend as tb  # noqa: E402


def _t(array: np.ndarray, dtype=torch.float64) -> torch.Tensor:
    return torch.as_tensor(array, dtype=dtype)


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
@pytest.mark.parametrize(("length", "dim", "base"), [(1, 2, 10000.0), (300, 64, 10000.0), (97, 38, 500.0)])
def test_sinusoidal_matches_numpy_core(layout, length, dim, base):
    want = pc.sinusoidal(length, dim, base=base, layout=layout)
    got64 = tb.sinusoidal(length, dim, base=base, layout=layout).numpy()
    got32 = tb.sinusoidal(length, dim, base=base, layout=layout, dtype=torch.float32).numpy()
    np.testing.assert_allclose(got64, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got32, want, rtol=0, atol=1e-5)


@pytest.mark.parametrize("pairing", ["half", "interleaved"])
@pytest.mark.parametrize(
    ("shape", "rotary_dim", "factor"), [((5, 16), 16, 1.0), ((2, 3, 40, 64), 32, 1.2), ((7, 10), 10, 0.9)]
)
def test_apply_rope_matches_numpy_core(pairing, shape, rotary_dim, factor):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    positions = np.arange(shape[-2], dtype=np.float64) + 100.0
    inv_freq = pc.rope_inv_freq(rotary_dim)
    want = pc.apply_rope(x, positions, inv_freq, pairing=pairing, attention_factor=factor)
    got64 = tb.apply_rope(_t(x), _t(positions), _t(inv_freq), pairing=pairing, attention_factor=factor)
    got32 = tb.apply_rope(_t(x, torch.float32), _t(positions), _t(inv_freq), pairing=pairing, attention_factor=factor)
    np.testing.assert_allclose(got64.numpy(), want, rtol=0, atol=1e-12)
    assert got32.dtype == torch.float32
    np.testing.assert_allclose(got32.numpy(), want, rtol=0, atol=1e-5)


@pytest.mark.parametrize(
    "scaling",
    [
        None,
        {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096},
        {"rope_type": "ntk", "factor": 4},
    ],
)
def test_rope_frequencies_are_the_numpy_cores(scaling):
    want = pc.rope_frequencies(128, rope_scaling=scaling, max_position_embeddings=4096)
    got = tb.rope_frequencies(128, rope_scaling=scaling, max_position_embeddings=4096)
    np.testing.assert_array_equal(got.inv_freq.numpy(), want.inv_freq)
    assert got.attention_factor == want.attention_factor


@pytest.mark.parametrize(("heads", "lq", "lk", "causal"), [(8, 6, 6, True), (12, 4, 9, True), (5, 7, 7, False)])
def test_alibi_matches_numpy_core(heads, lq, lk, causal):
    np.testing.assert_array_equal(tb.alibi_slopes(heads).numpy(), pc.alibi_slopes(heads))
    want = pc.alibi_bias(heads, lq, lk, causal=causal)
    np.testing.assert_array_equal(tb.alibi_bias(heads, lq, lk, causal=causal).numpy(), want)


@pytest.mark.parametrize(
    ("bidirectional", "num_buckets", "max_distance"), [(True, 32, 128), (False, 32, 128), (True, 8, 20)]
)
def test_t5_buckets_match_numpy_core_exactly(bidirectional, num_buckets, max_distance):
    rel = np.arange(-3000, 3001)
    want = pc.t5_relative_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    got = tb.t5_relative_bucket(
        torch.as_tensor(rel), bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    np.testing.assert_array_equal(got.numpy(), want)


def test_shaw_index_matches_numpy_core():
    np.testing.assert_array_equal(
        tb.shaw_relative_index(5, 9, max_relative=3).numpy(), pc.shaw_relative_index(5, 9, max_relative=3)
    )


@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_numpy_core(causal):
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 7, 8)), rng.standard_normal((2, 7, 3))
    bias = pc.alibi_bias(2, 5, 7, causal=False)
    want_out, want_w = pc.attention(q, k, v, bias=bias, causal=causal)
    got_out, got_w = tb.attention(_t(q), _t(k), _t(v), bias=_t(bias), causal=causal)
    np.testing.assert_allclose(got_w.numpy(), want_w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got_out.numpy(), want_out, rtol=0, atol=1e-12)


def test_pick_device_prefers_an_available_device_and_refuses_a_missing_one(monkeypatch):
    monkeypatch.delenv("POSENC_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    assert tb.pick_device().type == expected
    assert tb.pick_device("cpu").type == "cpu"
    monkeypatch.setenv("POSENC_DEVICE", "cpu")
    assert tb.pick_device().type == "cpu"
    with pytest.raises(pc.PosEncError, match="device"):
        tb.pick_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(pc.PosEncError, match="not available"):
            tb.pick_device("cuda")


def test_bad_hyperparameters_raise_the_cores_error():
    with pytest.raises(pc.PosEncError, match="dim"):
        tb.sinusoidal(4, 5)
    with pytest.raises(pc.PosEncError, match="pairing"):
        tb.apply_rope(torch.zeros(2, 4), torch.arange(2.0), torch.ones(2), pairing="diagonal")
