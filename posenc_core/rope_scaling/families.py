r"""Model families whose config.json says something about RoPE that the generic reader cannot see, keyed by
``model_type``: where the family keeps its head size under a formula of its own, and what a family does that posenc
does not model (refused with that sentence, never read as something else).

The generic reader (:mod:`.config`, :mod:`.layers`) handles every family that names its fields as most do; an entry
here is the exception, with the transformers code that decides it. ``tests/core/test_transformers_families.py``
enumerates transformers' families itself, so a family that needs an entry shows up there as a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..errors import PosEncError, as_int
from .temperature import QueryTemperature

__all__ = ["FAMILY_CONVENTIONS", "FamilyConvention", "family_convention"]


@dataclass(frozen=True)
class FamilyConvention:
    r"""What one family does differently. ``head_size(config)`` gives the size of the head its RoPE acts on when it is
    not under a usual name; ``refusal`` is the sentence saying what posenc does not model about it;
    ``rope_entries`` maps a layer type to the ``rope_parameters`` entry its attention reads when the entries are not
    named after the layer types; ``rotates(config, index, layer_type)`` says whether a layer rotates where the
    family decides it in code rather than in a field (Cohere 2: only its sliding layers); ``ignored`` are config keys
    the family's model does not read for RoPE; ``theta_marks_nope_only``: ``layer_rope_theta`` only marks NoPE layers
    (0), every other layer turns at the global base; ``mrope`` = (default mrope_section, interleaved) for a family
    whose text model turns with M-RoPE (:mod:`posenc_core.rope.mrope`) whether or not its config names the section;
    ``no_rope_layer_interval``: the interval the family's config class assumes when a config.json gives neither
    ``no_rope_layers`` nor the interval; ``chunked_rope_layers``: without ``layer_types``, the rotating layers are
    "chunked_attention" (Llama 4); ``sliding_window_pattern``: without ``layer_types``, every k-th layer is global and
    the others slide (Gemma 3: 6, Gemma 2: 2); ``global_head_dim``: the head of the full_attention layers when the
    config gives neither it nor a per_layer_config (Gemma 4: 512); ``nope_temperature``: the query temperature its
    code applies on its NoPE layers with no config key asking for it (Beam); ``source`` is the transformers code that
    decides it."""

    model_types: tuple[str, ...]
    source: str
    head_size: Callable[[Mapping[str, object]], int] | None = None
    refusal: str | None = None
    rope_entries: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    rotates: Callable[[Mapping[str, object], int, str], bool] | None = None
    ignored: tuple[str, ...] = ()
    theta_marks_nope_only: bool = False
    mrope: tuple[tuple[int, int, int], bool] | None = None
    no_rope_layer_interval: int | None = None
    chunked_rope_layers: bool = False
    sliding_window_pattern: int | None = None
    global_head_dim: int | None = None
    nope_temperature: QueryTemperature | None = None


def _memory_attention_head(config: Mapping[str, object]) -> int:
    r"""SAM 2 / SAM 3 video trackers: memory attention works at hidden / (downsample rate · heads)."""
    hidden = as_int("memory_attention_hidden_size", config.get("memory_attention_hidden_size"), lo=2)
    rate = as_int("memory_attention_downsample_rate", config.get("memory_attention_downsample_rate", 1), lo=1)
    heads = as_int("memory_attention_num_attention_heads", config.get("memory_attention_num_attention_heads"), lo=1)
    return hidden // (rate * heads)


def _sliding_only(config: Mapping[str, object], index: int, layer_type: str) -> bool:
    return layer_type == "sliding_attention"


def _sliding_only_if_windowed(config: Mapping[str, object], index: int, layer_type: str) -> bool:
    return config.get("sliding_window") is None or layer_type == "sliding_attention"


def _cohere2_moe(config: Mapping[str, object], index: int, layer_type: str) -> bool:
    mlp = config.get("mlp_layer_types")
    dense = isinstance(mlp, list) and index < len(mlp) and isinstance(mlp[index], str) and mlp[index] == "dense"
    pattern = config.get("prefix_dense_sliding_window_pattern")
    every_dense = isinstance(pattern, int) and not isinstance(pattern, bool) and pattern == 1
    return layer_type == "sliding_attention" or (dense and every_dense)


def _mem_rope(config: Mapping[str, object], index: int, layer_type: str) -> bool:
    return config.get("use_mem_rope") is True


def _theta_given(config: Mapping[str, object], index: int, layer_type: str) -> bool:
    parameters = config.get("rope_parameters")
    nested = isinstance(parameters, Mapping) and parameters.get("rope_theta") is not None
    return nested or config.get("rope_theta") is not None  # the config class moves a top-level base in


_CONTIGUOUS = "recomposition_frequencies: cat(m[i % 3] for m in freq.split(mrope_section)) (Qwen2-VL's M-RoPE)"
_INTERLEAVED = "recomposition_frequencies: pairs offset 1 and 2 mod 3 read h and w (Qwen3-VL's interleaved M-RoPE)"

_CONVENTIONS = (
    FamilyConvention(
        ("llama4_text",),
        "Llama4TextConfig.__post_init__: no_rope_layer_interval = 4; layer_types chunked where RoPE, full where NoPE",
        no_rope_layer_interval=4,
        chunked_rope_layers=True,
    ),
    FamilyConvention(
        ("smollm3", "mistral_large4"),
        "SmolLM3Config / MistralLarge4Config.__post_init__: every 4th layer NoPE unless no_rope_layers says otherwise",
        no_rope_layer_interval=4,
    ),
    FamilyConvention(
        (
            "qwen2_vl_text",
            "qwen2_5_vl_text",
            "paddleocr_vl_text",
            "qwen2_5_omni_text",
            "qwen2_5_omni_thinker",
            "qwen2_5_omni_talker",
        ),
        _CONTIGUOUS,
        mrope=((16, 24, 24), False),
    ),
    FamilyConvention(
        ("glm4v_text", "glm4v_moe_text", "glm_image_text", "glm_ocr_text"), _CONTIGUOUS, mrope=((8, 12, 12), False)
    ),
    FamilyConvention(
        (
            "qwen3_vl_text",
            "qwen3_vl_moe_text",
            "cohere_compass_text",
            "cosmos3_edge_text",
            "qwen3_omni_moe_text",
            "qwen3_omni_moe_thinker",
            "qwen3_omni_moe_talker_text",
        ),
        _INTERLEAVED,
        mrope=((24, 20, 20), True),
    ),
    FamilyConvention(("qwen3_5_text", "qwen3_5_moe_text", "qwen4_exp_text"), _INTERLEAVED, mrope=((11, 11, 10), True)),
    FamilyConvention(
        ("cohere2",),
        "Cohere2Attention applies RoPE only where sliding_window is set; Cohere2Config: sliding_window_pattern 4",
        rotates=_sliding_only,
        sliding_window_pattern=4,
    ),
    FamilyConvention(
        ("afmoe", "flint"),
        "their attention applies RoPE only where sliding_window is set (the sliding layers), as Cohere2Attention",
        rotates=_sliding_only,
    ),
    FamilyConvention(
        ("gemma3_text", "embedding_gemma2_text", "t5gemma2_text"),
        "Gemma3TextConfig.__post_init__: sliding_window_pattern defaults to 6 (five sliding layers, one global)",
        sliding_window_pattern=6,
    ),
    FamilyConvention(
        ("gemma4_text", "gemma4_unified_text"),
        "Gemma4TextConfig.__post_init__: global_head_dim (512 by default) becomes the full_attention layers' head_dim",
        global_head_dim=512,
    ),
    FamilyConvention(
        ("gemma2", "gpt_oss"),
        "Gemma2Config / GptOssConfig.__post_init__: sliding and global layers alternate",
        sliding_window_pattern=2,
    ),
    FamilyConvention(
        ("exaone4", "exaone_moe", "kolibri1"),
        "Exaone4Attention: `if self.sliding_window is None or self.is_sliding` applies RoPE",
        rotates=_sliding_only_if_windowed,
    ),
    FamilyConvention(
        ("beam",),
        "modeling_beam.compute_attention_scaling: the NoPE layers' queries times (1 + (p + 1)/2048)^0.1",
        nope_temperature=QueryTemperature("compute_attention_scaling", 0.1, 2048, 1, "power"),
    ),
    FamilyConvention(
        ("zamba2",),
        "Zamba2Attention: RoPE only `if self.config.use_mem_rope` (False by default)",
        rotates=_mem_rope,
    ),
    FamilyConvention(
        ("olmo_hybrid",),
        "OlmoHybridModel builds its rotary embedding only when rope_parameters has a rope_theta (released: none)",
        rotates=_theta_given,
    ),
    FamilyConvention(
        ("cohere2_moe",),
        "Cohere2MoeAttention: RoPE on sliding layers, and on dense ones when prefix_dense_sliding_window_pattern = 1",
        rotates=_cohere2_moe,
    ),
    FamilyConvention(
        ("muse_spark", "muse_glimmer"),
        "MuseSparkModel.forward: position_embeddings if layer_rope_theta[i] else None (one global rotary embedding)",
        theta_marks_nope_only=True,
    ),
    FamilyConvention(
        ("minimax_m3_vl_text",),
        "apply_rotary_pos_emb in modeling_minimax_m3_vl rotates cos.shape[-1] = the whole head; rotary_dim is unread",
        ignored=("rotary_dim",),
    ),
    FamilyConvention(
        ("sam2_video", "sam3_tracker_video", "edgetam_video"),
        "compute_axial_rope_parameters in modeling_sam2_video (and its copies)",
        head_size=_memory_attention_head,
    ),
    FamilyConvention(
        ("deepseek_v4",),
        "DeepseekV4Attention.__init__: rope_layer_type = 'main' if sliding_attention else 'compress'",
        rope_entries=MappingProxyType(
            {
                "sliding_attention": "main",
                "compressed_sparse_attention": "compress",
                "heavily_compressed_attention": "compress",
            }
        ),
    ),
    FamilyConvention(
        ("pixtral",),
        "PixtralVisionRotaryEmbedding.compute_axial_rope_parameters",
        refusal="Pixtral's vision encoder turns the rows with the even pairs' frequencies of a full-head RoPE and the "
        "columns with the odd ones; posenc's axial RoPE gives both axes the same frequencies, so it does not model it",
    ),
    FamilyConvention(
        ("minimax_m3_vl_vision",),
        "MiniMaxM3VLVisionRotaryEmbedding",
        refusal="MiniMax-M3-VL's vision encoder turns three axes (time, height, width) over a third of the head each, "
        "and lets the rest pass; posenc's axial RoPE has two axes, so it does not model it",
    ),
    FamilyConvention(
        ("eomt_dinov3",),
        "EomtDinov3RotaryEmbedding.forward",
        refusal="EoMT-DINOv3 turns its pairs by 2π times the patch centre's coordinate in [−1, 1] (jittered in "
        "training), not by an integer position; posenc does not model RoPE over normalised coordinates",
    ),
    FamilyConvention(
        ("ernie4_5_vl_moe_text",),
        "Ernie4_5_VLMoeTextRotaryEmbedding.compute_default_rope_parameters",
        refusal="Ernie 4.5 VL reorders its frequencies for its own 3-D M-RoPE (the height and width sections "
        "pre-rotated, even pairs then odd); posenc does not model that order",
    ),
)

#: model_type → its :class:`FamilyConvention`.
FAMILY_CONVENTIONS: Mapping[str, FamilyConvention] = MappingProxyType(
    {model_type: entry for entry in _CONVENTIONS for model_type in entry.model_types}
)


def family_convention(config: Mapping[str, object]) -> FamilyConvention | None:
    r"""The convention of the family ``config["model_type"]`` names, after refusing a family posenc does not
    model (its sentence says what); None for the families the generic reader reads."""
    entry = FAMILY_CONVENTIONS.get(str(config.get("model_type")))
    if entry is not None and entry.refusal is not None:
        family = str(config.get("model_type"))
        raise PosEncError(
            f"{entry.refusal} (model_type {family!r})", code="not_modelled", family=family, reason=entry.refusal
        )
    return entry
