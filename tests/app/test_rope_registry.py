r"""One registry entry per rope_type: everything that lists rope_types reads :data:`posenc_core.ROPE_REGISTRY`.

Adding a type touches the core (its function and entry), its test and its words; these tests fail if some other
list of types was written by hand again.
"""

from __future__ import annotations

import numpy as np
import pytest

import posenc_core as pc
from posenc_core.lab_task import EXTENSIONS
from posenc_core.rope_scaling import SCALED_TYPES
from posenc_ui.figures.lab import EXTENSION_COLOURS
from posenc_ui.i18n import has
from posenc_ui.presets import load_presets, scaling_of, without_scaling
from posenc_ui.views.extension import METHODS, _method_config

SCALED = [name for name in pc.ROPE_REGISTRY if name != "default"]


def test_rope_types_are_the_registry_in_order() -> None:
    assert pc.ROPE_TYPES == tuple(pc.ROPE_REGISTRY)
    assert all(entry.name == name for name, entry in pc.ROPE_REGISTRY.items())


def test_the_extension_page_offers_every_registered_scaling() -> None:
    assert METHODS == ("model", *SCALED)


@pytest.mark.parametrize("name", SCALED)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_rope_type_has_words_in_both_languages(name: str, lang: str) -> None:
    assert has(f"extension.method.{name}", lang)
    if not pc.ROPE_REGISTRY[name].formula:  # the page explains why it cannot build one from s alone
        assert has(f"extension.{name}_needs_factors", lang)


def test_the_config_reader_passes_original_length_to_exactly_the_types_that_read_it() -> None:
    expected = {name for name, entry in pc.ROPE_REGISTRY.items() if "original_max_position_embeddings" in entry.keys}
    assert set(SCALED_TYPES) == expected


def test_the_lab_runs_the_registry_types_marked_for_it_each_with_its_own_colour() -> None:
    assert EXTENSIONS == (None, *(name for name, entry in pc.ROPE_REGISTRY.items() if entry.in_lab))
    assert len(EXTENSIONS) <= len(EXTENSION_COLOURS)


@pytest.mark.parametrize("name", [name for name in SCALED if pc.ROPE_REGISTRY[name].formula])
def test_every_buildable_type_is_accepted_by_the_config_reader_and_read_back(name: str) -> None:
    r"""The page's config for the type gives the same frequencies as the type's compute function called directly."""
    config = _method_config("llama2_7b", "full_attention", name, 8, 32, 1)
    assert scaling_of(config) == (name, 8.0)
    got = pc.rope_frequencies_from_config(config, seq_len=8 * 4096)
    scaling = pc.ROPE_REGISTRY[name].scaling(factor=8, original_max_position_embeddings=4096)
    direct = pc.rope_frequencies(128, rope_scaling=scaling, max_position_embeddings=4096, seq_len=8 * 4096)
    np.testing.assert_array_equal(got.inv_freq, direct.inv_freq)
    assert got.attention_factor == direct.attention_factor
    plain = pc.rope_frequencies_from_config(without_scaling(load_presets()["llama2_7b"].config())).inv_freq
    assert not np.array_equal(got.inv_freq, plain)  # s = 8 changes something


def test_a_type_without_a_formula_is_still_read_from_a_full_config() -> None:
    for name, entry in pc.ROPE_REGISTRY.items():
        if entry.formula:
            continue
        with pytest.raises(pc.PosEncError, match=name):
            entry.scaling(factor=8, original_max_position_embeddings=4096)
        config = load_presets()["phi3_mini_128k"].config()  # head_dim 96: 48 pairs
        config["rope_scaling"] = {"rope_type": name}
        if "short_factor" in entry.keys:  # LongRoPE: its searched factors, one per pair
            config["rope_scaling"] |= {"short_factor": [1.0] * 48, "long_factor": [1.0] * 48}
        assert pc.rope_frequencies_from_config(config).inv_freq.shape == (48 // entry.axes,)  # axial: one axis


def test_scaling_keeps_only_the_keys_a_type_reads() -> None:
    extra = {"beta_fast": 16, "beta_slow": 2, "low_freq_factor": 2.0}
    yarn = pc.ROPE_REGISTRY["yarn"].scaling(factor=4, original_max_position_embeddings=2048, **extra)
    assert yarn == {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048, "beta_fast": 16,
                    "beta_slow": 2}  # fmt: skip
    llama3 = pc.ROPE_REGISTRY["llama3"].scaling(factor=8, original_max_position_embeddings=8192)
    assert llama3["low_freq_factor"] == 1.0 and llama3["high_freq_factor"] == 4.0  # Meta's Llama 3.1 bands
    assert pc.ROPE_REGISTRY["linear"].scaling(factor=2, original_max_position_embeddings=1, **extra) == {
        "rope_type": "linear", "factor": 2.0}  # fmt: skip
