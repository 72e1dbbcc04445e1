r"""Every RoPE the pinned transformers ships, read by posenc_core from the family's config.json.

The cases are found here, not listed: every ``transformers.models.*.modeling_*`` module with a ``…RotaryEmbedding``
class, the config class its ``__init__`` names (or, when that composite config cannot build it, the sub-config that
can, as the model itself passes it), instantiated at its defaults, which mirror a released checkpoint. The config is
serialised to JSON as ``save_pretrained`` writes ``config.json`` (``to_json_string()``; a text sub-config through its
parent, which the reader descends into; the same with every field written out is read the same),
read by :func:`posenc_core.rope_frequencies_from_config` (per layer type where transformers keeps one buffer per
type) and by :func:`posenc_core.model_layers`, and compared with the buffers the family's rotary embedding holds
(``inv_freq`` or ``<type>_inv_freq``, and ``attention_scaling``) — what its attention applies: where a buffer holds
zero frequencies (proportional RoPE), the model turns those pairs by 0, and so does posenc. Axial RoPE's buffer holds
one axis' frequencies, shared by the row and the column, as posenc's ``inv_freq`` for that type does. Where the config
and what the model applies differ, posenc follows the model: MiniMax-M3-VL's text config says ``rotary_dim`` 64, but
its ``apply_rotary_pos_emb`` rotates ``cos.shape[-1]`` = the whole 128-dim head at the buffer's 64 frequencies, so
posenc reads the whole head (``families.py``); GLM-4-MoE's defaults (head 42 × 0.5 = 21 dims) would rotate 22
dimensions with exponents over 21, which posenc refuses rather than models.

Every case agrees to float32 rounding (``rtol`` 2e-6, see ``test_transformers_parity``), or is refused with a
:class:`~posenc_core.PosEncError` and listed in :data:`KNOWN_REFUSED` with its reason. A family the next release adds
is a new case: it passes, or it fails here until it is read or named. A listed refusal that starts to agree fails too.
Importing ~200 modeling modules takes a few seconds; the whole file runs in well under a minute on two cores.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers
import transformers.models

import posenc_core as pc

pytestmark = pytest.mark.slow  # imports ~200 modeling modules (~10 s); stays in the default run

INV_FREQ_RTOL = 2e-6  # transformers' float32 inv_freq vs posenc's float64 (test_transformers_parity)
FACTOR_REL = 1e-9

#: (module, class[, buffer label]) → why posenc refuses it (the refusal's sentence says the same to a reader).
KNOWN_REFUSED = {
    ("pixtral", "PixtralVisionRotaryEmbedding"): "rows take the even pairs' frequencies, columns the odd ones",
    ("minimax_m3_vl", "MiniMaxM3VLVisionRotaryEmbedding"): "three axes over a third of the head each",
    ("eomt_dinov3", "EomtDinov3RotaryEmbedding"): "turns by 2π·(patch centre in [−1, 1]), not by a position",
    ("ernie4_5_vl_moe", "Ernie4_5_VLMoeTextRotaryEmbedding"): "frequencies reordered for its own 3-D M-RoPE",
    ("efficientloftr", "EfficientLoFTRRotaryEmbedding"): "partial_rotary_factor 4 (> 1) at its defaults",
    ("glm4_moe", "Glm4MoeRotaryEmbedding"): "42 · 0.5 = 21 rotary dims at its defaults: odd",
    ("glm4v_moe", "Glm4vMoeTextRotaryEmbedding"): "42 · 0.5 = 21 rotary dims at its defaults: odd",
    ("qwen3_omni_moe", "Qwen3OmniMoeThinkerTextRotaryEmbedding"): "2048 / 28 heads = 73 dims at its defaults: odd",
    ("qwen3_omni_moe", "Qwen3OmniMoeTalkerRotaryEmbedding"): "2048 / 28 heads = 73 dims at its defaults: odd",
}

#: Cases whose frequencies agree but whose model model_layers refuses: transformers' own forward fails at these
#: defaults (split_with_sizes: the section must sum to the 64 pairs), so there is no model to read.
KNOWN_LAYER_REFUSED = {
    ("glm4v", "Glm4vTextRotaryEmbedding"): "mrope_section [8, 12, 12] covers 32 of its 64 pairs at its defaults",
    ("glm_image", "GlmImageTextRotaryEmbedding"): "mrope_section [8, 12, 12] covers 32 of its 64 pairs at its defaults",
    ("hrm_text", "HrmTextRotaryEmbedding"): "runs one stack of layers again in cycles: not one list of layers",
}

#: Cases whose rotary embedding is not the text decoder's: model_layers reads the decoder (under text_config), so its
#: layers are held to the decoder's own rotary embedding, not to this one.
NOT_THE_DECODER = {
    ("musicflamingo", "MusicFlamingoRotaryEmbedding"): "the audio encoder's RoPE, at the top level of its config",
}

#: Rotary classes transformers itself cannot build or that hold no inv_freq buffer to compare: named, with why.
NOT_COMPARABLE = {
    ("esmfold2", "EsmFold2RotaryEmbedding"): "takes an atom_config, not a model config",
    ("llama4", "Llama4VisionRotaryEmbedding"): "holds complex phasors (freqs_ci) of its own 2-D layout, no inv_freq",
    ("cohere_compass", "CohereCompassRotaryEmbedding"): "transformers fails to build it at its defaults (KeyError)",
}


@dataclass(frozen=True)
class Case:
    module: str
    rotary: str
    label: str | None  # the buffer's layer type (Gemma 3: sliding_attention / full_attention), None for one buffer
    config_json: dict
    inv_freq: np.ndarray
    attention_scaling: float
    source: str  # the rotary class's source, for the M-RoPE layout it recomposes with
    full_json: dict  # to_dict with every field, PreTrainedConfig's defaults included

    @property
    def id(self) -> str:
        return "-".join(part for part in (self.module, self.rotary, self.label) if part)


def _rotary_classes():
    """(package, class) for every …RotaryEmbedding class defined in a transformers modeling module."""
    root = Path(transformers.models.__path__[0])
    for package in sorted(path.name for path in root.iterdir() if path.is_dir()):
        for path in sorted((root / package).glob("modeling_*.py")):
            if not re.search(r"^class \w+RotaryEmbedding\b", path.read_text(encoding="utf-8"), flags=re.M):
                continue
            name = f"transformers.models.{package}.{path.stem}"
            module = importlib.import_module(name)
            for attr, cls in vars(module).items():
                if inspect.isclass(cls) and attr.endswith("RotaryEmbedding") and cls.__module__ == name:
                    yield package, module, cls


def _config_class(module, cls):
    parameter = inspect.signature(cls.__init__).parameters.get("config")
    annotation = None if parameter is None else parameter.annotation
    if isinstance(annotation, str):
        annotation = vars(module).get(annotation)
    return annotation if inspect.isclass(annotation) else None


def _built(cls, config_class):
    r"""(rotary module, the JSON a reader would paste): the config class at its defaults, or the first of its
    sub-configs the rotary class accepts (a text config is pasted with its parent, which the reader descends into)."""
    config = config_class()
    candidates = [(config, config)]
    for name in getattr(config, "sub_configs", {}) or {}:
        sub = getattr(config, name, None)
        if sub is not None:
            candidates.append((sub, config if name == "text_config" else sub))
    for given, pasted in candidates:
        try:
            rotary = cls(given)
        except (AttributeError, KeyError, TypeError, ValueError):
            continue
        # what save_pretrained writes (only what differs from PreTrainedConfig's defaults), and every field
        return rotary, json.loads(pasted.to_json_string()), json.loads(pasted.to_json_string(use_diff=False))
    return None, None, None  # transformers' own class fails at these defaults: listed in NOT_COMPARABLE


def _buffers(rotary):
    """{label: (inv_freq float64, attention_scaling)} from inv_freq / <label>_inv_freq buffers."""
    out = {}
    for name, buffer in rotary.named_buffers(recurse=False):
        if name.endswith("inv_freq") and "original" not in name:
            label = name[: -len("inv_freq")].rstrip("_") or None
            scaling = getattr(rotary, f"{label}_attention_scaling" if label else "attention_scaling", 1.0)
            out[label] = (buffer.double().numpy(), float(scaling))
    return out


def _cases():
    cases, not_comparable = [], []
    with warnings.catch_warnings(), torch.device("cpu"):
        warnings.simplefilter("ignore")
        transformers.logging.set_verbosity_error()
        for package, module, cls in _rotary_classes():
            key = (package, cls.__name__)
            config_class = _config_class(module, cls)
            if config_class is None:
                not_comparable.append(key)
                continue
            rotary, config_json, full_json = _built(cls, config_class)
            buffers = {} if rotary is None else _buffers(rotary)
            if not buffers:
                not_comparable.append(key)
            source = inspect.getsource(cls) if buffers else ""
            for label, (inv_freq, scaling) in buffers.items():
                cases.append(Case(package, cls.__name__, label, config_json, inv_freq, scaling, source, full_json))
    return cases, not_comparable


CASES, UNCOMPARED = _cases()


def _known(case: Case) -> str | None:
    return KNOWN_REFUSED.get((case.module, case.rotary, case.label), KNOWN_REFUSED.get((case.module, case.rotary)))


def _assert_same(got: pc.RopeFrequencies, case: Case) -> None:
    np.testing.assert_allclose(np.asarray(got.inv_freq), case.inv_freq, rtol=INV_FREQ_RTOL, atol=0)
    assert got.attention_factor == pytest.approx(case.attention_scaling, rel=FACTOR_REL, abs=0)


def test_the_enumeration_finds_every_family_it_should():
    families = {case.module for case in CASES}
    assert len(CASES) >= 200 and len(families) >= 180  # 5.23.0: 234 cases in 192 modules
    assert {"llama", "gemma3", "gemma4", "llama4", "qwen3_vl", "deepseek_v3", "gpt_oss", "smollm3"} <= families
    assert sorted(UNCOMPARED) == sorted(NOT_COMPARABLE)


def test_the_config_with_every_field_written_out_reads_the_same():
    for case in CASES:
        if _known(case) is None:
            got = pc.rope_frequencies_from_config(case.full_json, layer_type=case.label)
            _assert_same(got, case)


def test_at_most_fifteen_cases_are_refused_each_with_its_reason():
    found = {(case.module, case.rotary) for case in CASES} | {(case.module, case.rotary, case.label) for case in CASES}
    assert set(KNOWN_REFUSED) | set(KNOWN_LAYER_REFUSED) <= found  # no entry outlives its family
    named = {**KNOWN_REFUSED, **KNOWN_LAYER_REFUSED, **NOT_COMPARABLE}
    assert len(named) == len(KNOWN_REFUSED) + len(KNOWN_LAYER_REFUSED) + len(NOT_COMPARABLE) <= 15
    assert all(named.values())


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_rope_frequencies_from_config_agree_with_the_familys_rotary_embedding_or_are_refused(case: Case):
    reason = _known(case)
    if reason is not None:
        with pytest.raises(pc.PosEncError):
            pc.rope_frequencies_from_config(case.config_json, layer_type=case.label)
        return
    got = pc.rope_frequencies_from_config(case.config_json, layer_type=case.label)
    _assert_same(got, case)


@pytest.mark.parametrize("case", [case for case in CASES if _known(case) is None], ids=lambda case: case.id)
def test_model_layers_gives_each_rotating_layer_its_types_frequencies(case: Case):
    if (case.module, case.rotary) in NOT_THE_DECODER:
        assert pc.model_layers(case.config_json)  # read, as the decoder under its text_config
        return
    if (case.module, case.rotary) in KNOWN_LAYER_REFUSED:
        with pytest.raises(pc.PosEncError):
            pc.model_layers(case.config_json)
        return
    layers = pc.model_layers(case.config_json)
    assert layers
    rotating = [layer for layer in layers if layer.rotates]
    if case.label is not None:
        split = pc.rope_frequencies_from_config(case.config_json, layer_type=case.label)
        rotating = [layer for layer in rotating if np.array_equal(layer.frequencies.inv_freq, split.inv_freq)]
        kinds = {layer.attention_type for layer in layers}
        assert rotating or case.label not in kinds  # a type the model has is drawn with this buffer
    for layer in rotating[:1] + rotating[-1:]:
        _assert_same(layer.frequencies, case)
        by_entry = pc.rope_frequencies_from_config(case.config_json, layer_type=layer.rope_entry)
        np.testing.assert_array_equal(by_entry.inv_freq, layer.frequencies.inv_freq)  # the page's per-type figures
        assert layer.rotary_dim == 2 * np.count_nonzero(case.inv_freq) * pc.ROPE_REGISTRY[layer.rope_type].axes


def _mrope_layout(source: str) -> tuple[tuple[int, ...], bool] | None:
    r"""(default mrope_section, interleaved) as a rotary class's own code reads them: its
    ``rope_parameters.get("mrope_section", [...])`` and whether it recomposes by pair index mod 3 (Qwen3-VL)."""
    found = re.search(r'get\("mrope_section", \[([\d, ]+)\]\)', source)
    if found is None or "recomposition_frequencies" not in source:
        return None
    return tuple(int(x) for x in found.group(1).split(",")), "offset in enumerate((1, 2)" in source


MROPE_CASES = [case for case in CASES if _mrope_layout(case.source) and _known(case) is None]
MROPE_CASES = [case for case in MROPE_CASES if (case.module, case.rotary) not in KNOWN_LAYER_REFUSED]


def test_the_m_rope_families_are_found():
    assert len(MROPE_CASES) >= 10  # 5.23.0: Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5, GLM-OCR …


@pytest.mark.parametrize("case", MROPE_CASES, ids=lambda case: case.id)
def test_model_layers_reads_the_m_rope_layout_the_familys_rotary_embedding_recomposes_with(case: Case):
    section, interleaved = _mrope_layout(case.source)
    text = case.config_json.get("text_config", case.config_json)
    section = tuple(text.get("rope_parameters", {}).get("mrope_section", section))
    layer = next(layer for layer in pc.model_layers(case.config_json) if layer.rotates)
    assert (layer.mrope_section, layer.mrope_interleaved) == (section, interleaved)


#: Every modeling module whose attention applies RoPE only under a condition, and how posenc reads that condition.
#: Found by scanning the source (an ``if`` just above the call), so a family the next release adds fails here until
#: it is read.
CONDITIONAL_ROPE = {
    "afmoe": "families.py: RoPE on sliding layers only",
    "cohere2": "families.py: RoPE on sliding layers only",
    "flint": "families.py: RoPE on sliding layers only",
    "cohere2_moe": "families.py: sliding layers, and dense ones under prefix_dense_sliding_window_pattern 1",
    "exaone4": "families.py: sliding layers only when a sliding window is set",
    "exaone4_5": "its text_config is an exaone4 config (families.py)",
    "exaone_moe": "families.py: sliding layers only when a sliding window is set",
    "kolibri1": "families.py: sliding layers only when a sliding window is set",
    "zamba2": "families.py: only with use_mem_rope",
    "olmo_hybrid": "families.py: only when rope_parameters has a rope_theta",
    "muse_spark": "families.py: layer_rope_theta 0 marks NoPE",
    "muse_glimmer": "families.py: layer_rope_theta 0 marks NoPE",
    "granite_swa": "layer_rope_theta: each layer's base, 0 = NoPE",
    "granitemoe_swa": "layer_rope_theta: each layer's base, 0 = NoPE",
    "granitemoehybrid": "position_embedding_type other than rope: no layer rotates",
    "beam": "a null rope_parameters entry: that layer type is NoPE",
    "cohere_compass": "a null rope_parameters entry: that layer type is NoPE",
    "smollm3": "no_rope_layers / no_rope_layer_interval",
    "mistral_large4": "no_rope_layers / no_rope_layer_interval (is_kv_shared_layer reuses keys already rotated)",
    "esm": "position_embedding_type other than rotary: no layer rotates",
    "evolla": "position_embedding_type other than rotary: no layer rotates",
    "falcon": "alibi: no layer rotates",
    "efficientloftr": "a feature matcher; refused (KNOWN_REFUSED)",
    "lightglue": "a keypoint matcher without a RotaryEmbedding class: no case here",
    "deepseek_v3": "rope_interleave changes the pairing of the weights, not which layers rotate",
    "mistral4": "rope_interleave changes the pairing of the weights, not which layers rotate",
    "glm4_moe_lite": "rope_interleave changes the pairing of the weights, not which layers rotate",
    "youtu": "rope_interleave changes the pairing of the weights, not which layers rotate",
    "axk1": "rope_interleave changes the pairing of the weights, not which layers rotate",
    "idefics": "cross-attention sublayers do not rotate; every decoder layer's self-attention does",
    "moonshine": "cross-attention sublayers do not rotate; every decoder layer's self-attention does",
    "moonshine_streaming": "cross-attention sublayers do not rotate; every decoder layer's self-attention does",
    "moshi": "its depth decoder does not rotate; the main decoder does",
    "kyutai_speech_to_text": "its depth decoder does not rotate; the main decoder does",
}


def _conditional_rope_modules() -> set[str]:
    found = set()
    root = Path(transformers.models.__path__[0])
    call = re.compile(r"apply_rotary(_pos)?_emb\w*\(\s*(q|query|k|key)")
    for path in root.glob("*/modeling_*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if call.search(line) and "def " not in line:
                if any(re.match(r"\s*if .+:\s*(#.*)?$", above) for above in lines[max(0, i - 3) : i]):
                    found.add(path.parent.name)
    return found


def test_every_family_that_turns_rope_off_under_a_condition_is_read():
    assert _conditional_rope_modules() == set(CONDITIONAL_ROPE)
