r"""One registry entry per rope_type: everything that lists rope_types reads :data:`posenc_core.ROPE_REGISTRY`.

Adding a type touches the core (its function and entry), its test and its words; these tests fail if some other
list of types was written by hand again.
"""

from __future__ import annotations

import copy
import inspect

import numpy as np
import pytest

import posenc_core as pc
from posenc_core.rope_scaling import SCALED_TYPES
from posenc_lab.tasks import EXTENSIONS
from posenc_ui.i18n import has
from posenc_ui.lessons.extension.view import METHODS, _method_config
from posenc_ui.lessons.lab.figures import EXTENSION_COLOURS
from posenc_ui.presets import load_presets, scaling_of, without_scaling

SCALED = [name for name in pc.ROPE_REGISTRY if name != "default"]

#: The rope_types of the peer, transformers 5.23.0 (``modeling_rope_utils.ROPE_INIT_FUNCTIONS`` and each model's
#: ``"default"``), plus ``"ntk"``: bloc97's NTK-aware base change (2023), which transformers has no type for
#: (docs/references.md), and ``"axial"``: the 2-D RoPE that transformers' vision encoders compute in their own
#: modeling files (tests/core/test_transformers_families.py). Written out by hand, so that a type lost from the
#: registry, or one added to it without its source, fails here.
EXPECTED_TYPES = {"default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional"} | {"ntk", "axial"}
#: The context extensions page 7 offers: every type but plain RoPE and the two that choose what turns instead.
EXTENSIONS_OFFERED = EXPECTED_TYPES - {"default", "proportional", "axial"}


def test_rope_types_are_transformers_types_plus_ntk_in_the_registrys_order() -> None:
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    assert {"default", *ROPE_INIT_FUNCTIONS} | {"ntk", "axial"} == EXPECTED_TYPES  # the peer, as pinned
    assert set(pc.ROPE_TYPES) == EXPECTED_TYPES and pc.ROPE_TYPES[0] == "default"
    assert pc.ROPE_TYPES == tuple(pc.ROPE_REGISTRY)  # one order everywhere: the registry's
    assert all(entry.name == name for name, entry in pc.ROPE_REGISTRY.items())


def test_the_extension_page_offers_every_scaling_and_the_models_own() -> None:
    assert METHODS[0] == "model" and set(METHODS[1:]) == EXTENSIONS_OFFERED
    assert len(METHODS) == len(set(METHODS))


@pytest.mark.parametrize("name", SCALED)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_rope_type_has_words_in_both_languages(name: str, lang: str) -> None:
    assert has(f"extension.method.{name}", lang)
    if not pc.ROPE_REGISTRY[name].formula:  # the page explains why it cannot build one from s alone
        assert has(f"extension.{name}_needs_factors", lang)


def test_the_config_reader_passes_original_length_to_exactly_the_types_whose_transformers_code_reads_it() -> None:
    r"""Read from the peer's own source: transformers 5.23.0's YaRN, LongRoPE and Llama 3 init functions read
    ``original_max_position_embeddings``; linear and dynamic do not (dynamic NTK measures against
    ``max_position_embeddings``, docs/references.md), and neither does the NTK-aware base change."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    reads = {
        name for name, fn in ROPE_INIT_FUNCTIONS.items() if "original_max_position_embeddings" in inspect.getsource(fn)
    }
    assert reads - {"proportional"} == {"yarn", "longrope", "llama3"}
    assert set(SCALED_TYPES) == {"yarn", "longrope", "llama3"}


def test_the_lab_stretches_rope_with_pi_ntk_and_yarn_each_with_its_own_colour() -> None:
    r"""The lab's zero-shot stretches, as the README and the page name them: none, PI (``linear``), NTK-aware, YaRN."""
    assert EXTENSIONS == (None, "linear", "ntk", "yarn")
    assert all(pc.ROPE_REGISTRY[name].in_lab for name in EXTENSIONS[1:])
    assert len(EXTENSIONS) <= len(EXTENSION_COLOURS)


def _transformers_frequencies(config: dict, seq_len: int) -> tuple[np.ndarray, float]:
    r"""What transformers 5.23.0 computes for a Llama ``config.json``: ``ROPE_INIT_FUNCTIONS[rope_type]``."""
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    hf = LlamaConfig(**copy.deepcopy(config))  # transformers rewrites the nested dict it is given
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS[hf.rope_parameters["rope_type"]](hf, seq_len=seq_len)
    return inv_freq.double().numpy(), float(attention_factor)


def _ntk_frequencies(head_dim: int, base: float, factor: float) -> np.ndarray:
    r"""bloc97's NTK-aware scaling, as a naive loop: base' = base·s^(d/(d−2)), θ_i = base'^(−2i/d)."""
    stretched = base * factor ** (head_dim / (head_dim - 2))
    return np.array([stretched ** (-2 * i / head_dim) for i in range(head_dim // 2)])


@pytest.mark.parametrize("name", [name for name in SCALED if pc.ROPE_REGISTRY[name].formula])
def test_every_buildable_type_is_accepted_by_the_config_reader_and_read_back(name: str) -> None:
    r"""The page's config for the type (Llama 2 7B: d = 128, base 10⁴, 4096 positions; s = 8) gives what transformers
    computes from the same config, or for NTK-aware, which transformers lacks, what its formula gives."""
    config = _method_config("llama2_7b", "full_attention", name, 8, 32, 1)
    assert scaling_of(config) == (name, 8.0)
    got = pc.rope_frequencies_from_config(config, seq_len=8 * 4096)
    if name == "ntk":
        want, factor = _ntk_frequencies(128, 1e4, 8.0), 1.0
        assert 1e4 * 8 ** (128 / 126) == pytest.approx(82_685, abs=0.5)  # docs/references.md: s = 8 → 82 685
    else:
        want, factor = _transformers_frequencies(config, 8 * 4096)
    np.testing.assert_allclose(got.inv_freq, want, rtol=1e-6, atol=0)  # transformers computes in float32
    assert got.attention_factor == pytest.approx(factor, rel=1e-6)
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
    assert yarn == {
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 2048,
        "beta_fast": 16,
        "beta_slow": 2,
    }
    llama3 = pc.ROPE_REGISTRY["llama3"].scaling(factor=8, original_max_position_embeddings=8192)
    assert llama3["low_freq_factor"] == 1.0 and llama3["high_freq_factor"] == 4.0  # Meta's Llama 3.1 bands
    assert pc.ROPE_REGISTRY["linear"].scaling(factor=2, original_max_position_embeddings=1, **extra) == {
        "rope_type": "linear",
        "factor": 2.0,
    }
