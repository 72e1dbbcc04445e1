r"""Real models' RoPE settings, and the pasted ``config.json`` box: read, validate, never evaluate.

Each preset in ``assets/presets/<id>.json`` holds the few ``config.json`` fields that decide RoPE, every one with
the URL it was read from::

    {"id": "llama2_7b", "name": "Llama 2 7B", "source": "https://…/config.json", "note": "…",
     "values": {"rope_theta": {"value": 10000.0, "source": "https://…/config.json"}, …},
     "missing": ["rope_scaling"]}          # optional: a field the model has but this file does not reproduce

:meth:`Preset.config` is then a plain config dict for :func:`posenc_core.rope_frequencies_from_config`. Pasted text
goes through the core's :func:`~posenc_core.rope_scaling.parse_config_text`: capped in size and nesting, parsed with
:mod:`json` only, every problem a :class:`~posenc_core.PosEncError` with a code the page shows in the reader's
language while keeping its last figure. No maths here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posenc_core import PosEncError, config_scaling, config_training_length, model_layers
from posenc_core.rope_scaling import parse_config_text

from .paths import ROOT
from .state import Param

PRESET_DIR = ROOT / "assets" / "presets"
#: Where a value comes from when the checkpoint's config.json leaves it unset: the pinned transformers release's
#: config class, whose defaults the checkpoint is loaded with (the preset's note says so).
TRANSFORMERS_DEFAULTS = "https://github.com/huggingface/transformers/blob/v5.23.0/src/transformers/models/"
#: Reading order of the presets (the page's model picker).
PRESET_IDS = (
    "llama2_7b",
    "codellama_7b",
    "llama3_1_8b",
    "mistral_7b",
    "qwen2_5_7b",
    "deepseek_v3",
    "phi3_mini_128k",
    "gpt_neox_20b",
    "llama4_scout",
    "gemma3_27b",
    "gemma4_26b",
    "qwen3_8b",
    "qwen3_vl_8b",
    "gpt_oss_120b",
    "mistral_small_3_1",
    "smollm3_3b",
    "gpt2",
    "jamba_v0_1",
)
#: The config fields that decide RoPE (what a pasted config is reduced to in a share link).
ROPE_FIELDS = (
    "head_dim",
    "qk_rope_head_dim",
    "hidden_size",
    "n_embd",
    "num_attention_heads",
    "n_head",
    "max_position_embeddings",
    "n_positions",
    "original_max_position_embeddings",
    "rope_theta",
    "rotary_emb_base",
    "partial_rotary_factor",
    "rotary_pct",
    "rotary_dim",
    "rope_scaling",
    "rope_parameters",
    # a model read layer by layer (posenc_core.model_layers): layer count, kinds, windows, NoPE layers, temperatures
    "num_hidden_layers",
    "n_layer",
    "num_layers",
    "layer_types",
    "sliding_window",
    "use_sliding_window",
    "sliding_window_pattern",
    "rope_local_base_freq",
    "attention_chunk_size",
    "no_rope_layers",
    "no_rope_layer_interval",
    "attn_temperature_tuning",
    "floor_scale",
    "attn_scale",
    "global_head_dim",
    "text_config",  # a vision-language model's decoder: kept, reduced to these same fields
    # what a family builds in code (posenc_core.layer_kinds): its name, hybrid layouts, non-RoPE position schemes
    "model_type",
    "n_layers",
    "decoder_layers",
    "num_decoder_layers",
    "layers_block_type",
    "block_types",
    "attention_window_size",
    "attn_layer_period",
    "attn_layer_offset",
    "attn_layer_indices",
    "linear_attn_config",
    "cross_attention_layers",
    "use_mem_rope",
    "alibi",
    "position_embedding_type",
    "relative_attention_num_buckets",
    "max_target_positions",
    "max_decoder_position_embeddings",
    "rel_extent",
    "d_model",
    "d_kv",
    "decoder_attention_heads",
    "attention_heads",
    "n_heads",
    "emb_dim",
    "decoder",
)


@dataclass(frozen=True)
class Preset:
    r"""One model's RoPE fields, each with its source; ``missing`` names fields the model has but we do not ship."""

    id: str
    name: str
    source: str
    note: str
    values: Mapping[str, Any]
    sources: Mapping[str, str]
    missing: tuple[str, ...] = ()

    def config(self) -> dict[str, Any]:
        r"""A config dict (a fresh copy: callers may edit it) for ``rope_frequencies_from_config``."""
        return json.loads(json.dumps(dict(self.values)))


def parse_preset(data: object) -> Preset:
    r"""A :class:`Preset` from the parsed JSON of one preset file; ``PosEncError`` says what is wrong with it."""
    if not isinstance(data, Mapping):
        raise PosEncError("a preset must be a JSON object")
    for key in ("id", "name", "source", "note"):
        if not isinstance(data.get(key), str):
            raise PosEncError(f"preset field {key!r} must be a string")
    fields = data.get("values")
    if not isinstance(fields, Mapping) or not fields:
        raise PosEncError(f"preset {data['id']!r} needs a non-empty 'values' object")
    values, sources = {}, {}
    for name, entry in fields.items():
        if not isinstance(entry, Mapping) or set(entry) != {"value", "source"} or not isinstance(entry["source"], str):
            raise PosEncError(f"preset {data['id']!r}: {name!r} must be {{'value': …, 'source': 'https://…'}}")
        if not entry["source"].startswith(("https://huggingface.co/", TRANSFORMERS_DEFAULTS)):
            raise PosEncError(
                f"preset {data['id']!r}: the source of {name!r} must be the checkpoint on huggingface.co or "
                f"transformers' config defaults ({TRANSFORMERS_DEFAULTS}…)"
            )
        values[name], sources[name] = entry["value"], entry["source"]
    missing = data.get("missing", [])
    if not isinstance(missing, list) or not all(isinstance(m, str) for m in missing):
        raise PosEncError(f"preset {data['id']!r}: 'missing' must be a list of field names")
    return Preset(data["id"], data["name"], data["source"], data["note"], values, sources, tuple(missing))


@functools.cache
def load_presets(folder: Path = PRESET_DIR) -> dict[str, Preset]:
    r"""Every preset of :data:`PRESET_IDS`, read once per process; a missing or malformed file is an error."""
    presets = {}
    for preset_id in PRESET_IDS:
        with (folder / f"{preset_id}.json").open(encoding="utf-8") as fh:
            preset = parse_preset(json.load(fh))
        if preset.id != preset_id:
            raise PosEncError(f"{preset_id}.json names itself {preset.id!r}")
        presets[preset_id] = preset
    return presets


@functools.cache
def rotating_preset_ids() -> tuple[str, ...]:
    r"""The presets with at least one layer that rotates, in :data:`PRESET_IDS`' order: the models page 7 offers, whose
    figures all draw RoPE frequencies. The others (GPT-2's learned table, Jamba's attention without position) are
    drawn on page 9's strip, and page 7's strip reads them from a pasted config."""
    presets = load_presets()
    return tuple(i for i in PRESET_IDS if any(layer.rotates for layer in model_layers(presets[i].config())))


def training_length(config: Mapping[str, Any]) -> int | None:
    r"""The pre-training context the config records (:func:`posenc_core.config_training_length`); None if none."""
    return config_training_length(config)


def rope_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    r"""Only the fields that decide RoPE (:data:`ROPE_FIELDS`), in that order; a ``text_config`` or an
    encoder-decoder's ``decoder`` reduced likewise."""
    kept = {key: config[key] for key in ROPE_FIELDS if key in config}
    for sub in ("text_config", "decoder"):  # a decoder under its own key is reduced likewise
        if isinstance(kept.get(sub), Mapping):
            kept[sub] = rope_fields(kept[sub])
    return kept


@dataclass(frozen=True)
class ConfigTextParam(Param):
    r"""The paste box's text. In a link it travels as compact JSON of its RoPE fields only (a full config would make
    a 64 kB URL); a link value that is not a JSON object falls back to the default with a notice."""

    widget: str = "text_area"  # drawn by page.paste_box(), not controls()

    def _parse(self, text: str) -> str:
        try:
            config = parse_config_text(text)
        except PosEncError as err:
            raise ValueError(str(err)) from None
        return json.dumps(config, indent=2, ensure_ascii=False)

    def encode(self, value: Any) -> str:
        try:
            return json.dumps(rope_fields(parse_config_text(value)), separators=(",", ":"), ensure_ascii=False)
        except PosEncError:
            return str(value)[:2000]  # broken text being edited: kept short in the URL until it parses


def scaling_of(config: Mapping[str, Any]) -> tuple[str, float]:
    r"""(rope_type, factor s) a config asks for (:func:`posenc_core.config_scaling`, with transformers' rule for a
    missing factor): ("default", 1) without scaling."""
    rope_type, factor = config_scaling(config)
    return rope_type, factor


def without_scaling(config: Mapping[str, Any]) -> dict[str, Any]:
    r"""The same model with plain RoPE: rope_scaling / rope_parameters reduced to the base fields they may carry."""
    plain = {key: value for key, value in config.items() if key not in ("rope_scaling", "rope_parameters")}
    kept = {
        key: value for key, value in _scaling_dict(config).items() if key in ("rope_theta", "partial_rotary_factor")
    }
    if kept:
        plain["rope_parameters"] = {"rope_type": "default", **kept}
    return plain


def _scaling_dict(config: Mapping[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for key in ("rope_scaling", "rope_parameters"):
        if isinstance(config.get(key), Mapping):
            merged.update(config[key])
    return merged
