r"""The cos/sin table a rotation keeps between calls: the same numbers, bit for bit, as one made block by block;
never changed by a call (an attention factor scales a copy); never kept past its size."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

import posenc_core as pc
from posenc_core.rope import rotation


def _never_kept(monkeypatch) -> None:
    monkeypatch.setattr(rotation, "_KEPT_TABLE_ELEMENTS", 0)


@settings(max_examples=60, deadline=None)
@given(
    length=hst.integers(1, 300),
    pairs=hst.integers(1, 24),
    start=hst.sampled_from([0.0, 7.0, -3.5, 1e5]),
    step=hst.sampled_from([1.0, 0.5, 3.0]),
    pairing=hst.sampled_from(rotation.PAIRINGS),
    factor=hst.sampled_from([1.0, 1.25]),
    seed=hst.integers(0, 2**16),
)
def test_a_kept_table_rotates_bit_for_bit_as_one_made_block_by_block(
    length, pairs, start, step, pairing, factor, seed
) -> None:
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, length, 2 * pairs + 2))  # two dimensions that do not turn
    inv_freq = pc.rope_inv_freq(2 * pairs, base=500.0)
    positions = start + step * np.arange(length)
    kwargs = {"query_positions": positions, "key_positions": positions, "pairing": pairing, "attention_factor": factor}
    with pytest.MonkeyPatch.context() as patch:
        _never_kept(patch)
        made = (pc.rope_scores(q, k, inv_freq, **kwargs), pc.apply_rope(q, positions, inv_freq, pairing=pairing))
    rotation._KEPT.clear()
    for _ in range(3):  # its first call is not kept, the next keeps the table as it is made, the rest read it
        kept = (pc.rope_scores(q, k, inv_freq, **kwargs), pc.apply_rope(q, positions, inv_freq, pairing=pairing))
        for a, b in zip(kept, made, strict=True):
            np.testing.assert_array_equal(a, b)
    assert len(rotation._KEPT) == 1


def test_positions_out_of_step_are_kept_and_turned_as_made(monkeypatch) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 16))
    positions = np.sort(rng.uniform(0, 1e4, 100))  # no progression: direct cos and sin
    inv_freq = pc.rope_inv_freq(16)
    rotation._KEPT.clear()
    kept = [pc.apply_rope(x, positions, inv_freq) for _ in range(3)]
    assert len(rotation._KEPT) == 1
    _never_kept(monkeypatch)
    for again in kept:
        np.testing.assert_array_equal(again, pc.apply_rope(x, positions, inv_freq))


def test_an_attention_factor_scales_a_copy_and_leaves_the_kept_table_as_it_was() -> None:
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 64, 32))
    inv_freq = pc.rope_inv_freq(32)
    rotation._KEPT.clear()
    first = pc.rope_scores(q, k, inv_freq)
    before = pc.rope_scores(q, k, inv_freq)  # asked again: kept
    assert len(rotation._KEPT) == 1
    scaled = pc.rope_scores(q, k, inv_freq, attention_factor=3.0)
    # a logit scales by the factor's square (up to rounding: the factor multiplies cos and sin before the sum)
    np.testing.assert_allclose(scaled, 9.0 * before, rtol=0, atol=1e-13 * 9.0 * np.max(np.abs(before)))
    for again in (before, pc.rope_scores(q, k, inv_freq)):
        np.testing.assert_array_equal(again, first)
    table = rotation._KEPT.get((np.arange(64.0).tobytes(), inv_freq.tobytes()))
    assert table is not None and not table.flags.writeable


def test_a_table_is_kept_on_its_second_request_and_read_from_the_third() -> None:
    inv_freq = pc.rope_inv_freq(16)
    x = np.ones((40, 16))
    rotation._KEPT.clear()
    pc.apply_rope(x, np.arange(40.0), inv_freq)
    assert len(rotation._KEPT) == 0  # asked once: only remembered
    pc.apply_rope(x, np.arange(40.0), inv_freq)
    assert len(rotation._KEPT) == 1
    key = (np.arange(40.0).tobytes(), inv_freq.tobytes())
    table = rotation._KEPT.get(key)
    pc.apply_rope(x, np.arange(40.0), inv_freq)
    assert rotation._KEPT.get(key) is table  # read, not made again


def test_positions_never_asked_twice_keep_no_table() -> None:
    # a class: every student's own positions, more sets than are kept; none is made whole only to be dropped
    inv_freq = pc.rope_inv_freq(8)
    rotation._KEPT.clear()
    for start in range(3 * rotation._KEPT.size):
        pc.apply_rope(np.ones((10, 8)), start + np.arange(10.0), inv_freq)
    assert len(rotation._KEPT) == 0


def test_a_table_past_the_size_is_made_block_by_block_and_not_kept() -> None:
    inv_freq = pc.rope_inv_freq(128)
    length = rotation._KEPT_TABLE_ELEMENTS // 64 + 1  # one row past the size
    x = np.ones((length, 128))
    rotation._KEPT.clear()
    for _ in range(2):
        pc.apply_rope(x, np.arange(length, dtype=np.float64), inv_freq)
    assert len(rotation._KEPT) == 0
    for _ in range(2):
        pc.apply_rope(x[:-1], np.arange(length - 1, dtype=np.float64), inv_freq)  # exactly the size: kept
    assert len(rotation._KEPT) == 1


def test_at_most_the_set_number_of_tables_are_kept() -> None:
    inv_freq = pc.rope_inv_freq(8)
    rotation._KEPT.clear()
    for start in range(rotation._KEPT.size + 3):
        for _ in range(2):
            pc.apply_rope(np.ones((10, 8)), start + np.arange(10.0), inv_freq)
    assert len(rotation._KEPT) == rotation._KEPT.size
