r"""The RoPE layouts of today's models against loops written from their papers and against transformers' own code:
proportional RoPE (p-RoPE), axial 2-D RoPE, M-RoPE (its pair-to-axis layouts and its (t, h, w) position ids)."""

from __future__ import annotations

import itertools
import types

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel, Qwen2VLRotaryEmbedding
from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig
from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding

import posenc_core as pc

try:
    from . import naive
except ImportError:
    import naive

PROP = settings(max_examples=60, deadline=None)


@PROP
@given(
    half=st.integers(1, 128),
    proportion=st.sampled_from([0.0625, 0.125, 0.25, 0.5, 0.75, 1.0]),
    base=st.floats(2.0, 1e7),
    factor=st.sampled_from([1.0, 2.0, 8.0]),
)
def test_proportional_rope_equals_the_p_rope_loop(half, proportion, base, factor):
    head_dim = 2 * half
    scaling = {"rope_type": "proportional", "factor": factor}
    got = pc.rope_frequencies(head_dim, base=base, rope_scaling=scaling, partial_rotary_factor=proportion)
    want = naive.rope_proportional(head_dim, base, proportion, factor)
    np.testing.assert_allclose(got.inv_freq, want, rtol=1e-12, atol=0)
    assert got.attention_factor == 1.0


def test_proportional_rope_keeps_full_rope_s_fastest_pairs_and_stops_the_rest():
    r"""Gemma 4's global layers: a quarter of a 512-dim head turns, at exactly the frequencies full RoPE gives those
    pairs; the other 192 pairs never turn (p-RoPE keeps the high frequencies, Barbero et al. §6)."""
    got = pc.rope_frequencies(512, base=1e6, rope_scaling={"rope_type": "proportional"}, partial_rotary_factor=0.25)
    full = pc.rope_inv_freq(512, base=1e6)
    np.testing.assert_allclose(got.inv_freq[:64], full[:64], rtol=1e-15, atol=0)
    assert not got.inv_freq[64:].any()
    parameters = {"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25}
    (layer,) = pc.model_layers({"head_dim": 512, "rope_parameters": parameters})
    assert (layer.rotary_dim, layer.head_dim, layer.rope_type) == (128, 512, "proportional")


@pytest.mark.parametrize("head_dim", [8, 64, 72, 80, 128])
@pytest.mark.parametrize("base", [100.0, 10000.0])
def test_axial_rope_equals_the_rope_axial_loop_and_page_6s_frequencies(head_dim, base):
    got = pc.rope_frequencies(head_dim, base=base, rope_scaling={"rope_type": "axial"})
    np.testing.assert_allclose(got.inv_freq, naive.rope_axial(head_dim, base), rtol=1e-12, atol=0)
    np.testing.assert_allclose(got.inv_freq, pc.rope_inv_freq(head_dim // 2, base=base), rtol=1e-15)  # page 6's


def test_axial_rope_needs_two_halves_of_pairs():
    with pytest.raises(pc.PosEncError, match="multiple of 4"):
        pc.rope_frequencies(6, rope_scaling={"rope_type": "axial"})


def test_an_axial_vision_layer_turns_its_whole_head():
    (layer, *_) = pc.model_layers(
        {"num_hidden_layers": 2, "hidden_size": 1280, "num_heads": 16, "rope_parameters": {"rope_type": "axial"}}
    )
    assert (layer.head_dim, layer.rotary_dim, layer.frequencies.inv_freq.shape) == (80, 80, (20,))


# ------------------------------------------------------------------------------------------------ M-RoPE


def _cos_from_transformers(rotary, position_ids: np.ndarray, head_dim: int) -> np.ndarray:
    x = torch.zeros(1, position_ids.shape[1], head_dim, dtype=torch.float64)
    ids = torch.from_numpy(position_ids)[:, None, :]  # (3, batch 1, L)
    cos, _ = rotary(x, ids)
    return cos[0].double().numpy()  # (L, d)


@pytest.mark.parametrize(
    ("config_class", "rotary_class", "interleaved"),
    [
        (Qwen2VLTextConfig, Qwen2VLRotaryEmbedding, False),
        (Qwen3VLTextConfig, Qwen3VLTextRotaryEmbedding, True),
    ],
)
def test_mrope_angles_equal_the_cosines_qwen_vl_s_rotary_embedding_computes(config_class, rotary_class, interleaved):
    config = config_class()
    rotary = rotary_class(config)
    head_dim = (
        config.head_dim if getattr(config, "head_dim", None) else config.hidden_size // config.num_attention_heads
    )
    section = rotary.mrope_section
    ids = pc.mrope_position_ids([("text", 3), ("image", (4, 6)), ("text", 2), ("video", (3, 2, 4))])
    inv_freq = rotary.inv_freq.double().numpy()
    angles = pc.mrope_angles(ids, inv_freq, section, interleaved=interleaved)  # (L, d/2)
    want = _cos_from_transformers(rotary, ids, head_dim)
    np.testing.assert_allclose(np.cos(np.concatenate([angles, angles], axis=-1)), want, rtol=0, atol=1e-6)


def test_mrope_pair_axes_contiguous_and_interleaved_by_hand():
    assert pc.mrope_pair_axes([2, 1, 1]).tolist() == [0, 0, 1, 2]
    assert pc.mrope_pair_axes([2, 1, 1], interleaved=True).tolist() == [0, 1, 2, 0]
    axes = pc.mrope_pair_axes([24, 20, 20], interleaved=True)  # Qwen3-VL: each axis has fast and slow pairs
    assert np.bincount(axes).tolist() == [24, 20, 20]
    assert axes[:6].tolist() == [0, 1, 2, 0, 1, 2] and axes[60:].tolist() == [0, 0, 0, 0]


IMAGE_GRID = st.tuples(st.integers(1, 4), st.integers(1, 4)).map(lambda g: (2 * g[0], 2 * g[1]))  # merge 2
VIDEO_GRID = st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).map(
    lambda g: (g[0], 2 * g[1], 2 * g[2])
)
SEGMENTS = st.lists(
    st.one_of(
        st.tuples(st.just("text"), st.integers(0, 5)),
        st.tuples(st.just("image"), IMAGE_GRID),
        st.tuples(st.just("video"), VIDEO_GRID),
    ),
    max_size=5,
)


@PROP
@given(segments=SEGMENTS)
def test_mrope_position_ids_equal_the_loop_from_the_paper(segments):
    got = pc.mrope_position_ids(segments, spatial_merge_size=2)
    want = naive.mrope_position_ids(segments, spatial_merge_size=2)
    np.testing.assert_array_equal(got, np.array(want, dtype=np.int64).reshape(3, -1))


def _separated(segments: list) -> bool:
    r"""Every image or video between text tokens, as in a real prompt (<|vision_start|> … <|vision_end|>):
    get_rope_index groups adjacent tokens of one type, so two vision blocks side by side would read as one."""
    kinds = [kind for kind, size in segments if kind != "text" or size > 0]
    apart = all("text" in pair for pair in itertools.pairwise(kinds))
    return apart and any(kind != "text" for kind in kinds)


@PROP
@given(segments=SEGMENTS.filter(_separated))
def test_mrope_position_ids_equal_qwen2_vl_get_rope_index(segments):
    r"""transformers' ``Qwen2VLModel.get_rope_index`` on the same token types and grids (merge size 2)."""
    types_, images, videos = [], [], []
    for kind, size in segments:
        if kind == "text":
            types_ += [0] * size
            continue
        grid = (1, *size) if kind == "image" else size
        (images if kind == "image" else videos).append(grid)
        types_ += [1 if kind == "image" else 2] * (grid[0] * grid[1] * grid[2] // 4)
    model = types.SimpleNamespace(
        config=types.SimpleNamespace(vision_config=types.SimpleNamespace(spatial_merge_size=2))
    )
    model.get_vision_position_ids = types.MethodType(Qwen2VLModel.get_vision_position_ids, model)
    want, _ = Qwen2VLModel.get_rope_index(
        model,
        torch.zeros(1, len(types_), dtype=torch.long),
        torch.tensor([types_]),
        image_grid_thw=torch.tensor(images) if images else None,
        video_grid_thw=torch.tensor(videos) if videos else None,
    )
    np.testing.assert_array_equal(pc.mrope_position_ids(segments, spatial_merge_size=2), want[:, 0].numpy())


def test_a_text_only_sequence_is_plain_rope():
    ids = pc.mrope_position_ids([("text", 7)])
    assert (ids == np.arange(7)).all()


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: pc.mrope_pair_axes([16, 24]), "three pair counts"),
        (lambda: pc.mrope_pair_axes([8, 12, 12], pairs=64), "covers 32 pairs"),
        (lambda: pc.mrope_pair_axes([0, 32, 0], interleaved=True), "3 · 32"),
        (lambda: pc.mrope_position_ids([("audio", 3)]), "segments\\[0\\]"),
        (lambda: pc.mrope_position_ids([("image", (3, 4))], spatial_merge_size=2), "not divisible"),
    ],
)
def test_bad_m_rope_arguments_are_refused_in_words(call, words):
    with pytest.raises(pc.PosEncError, match=words):
        call()
