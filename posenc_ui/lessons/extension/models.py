r"""Page 7 (context extension), its last section: real models and a pasted ``config.json``.

Every bundled preset's wavelengths at its own context length, the frequencies of any pasted ``config.json`` before
and after its own scaling (type, factor, d, base and attention factor in the title), and the table of where each
field of the chosen preset was read. Recipes only: :mod:`.view` puts them into the page's view.
"""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    PosEncError,
    implied_base,
    model_layers,
    pair_wavelengths,
    parse_config_text,
    rope_frequencies_from_config,
    rope_wavelengths,
)

from ...i18n import t
from ...lesson import PageRefusal, Values, reads, uses
from ...memo import memo
from ...presets import TRANSFORMERS_DEFAULTS, load_presets, scaling_of, training_length, without_scaling
from . import figures as figs
from .layers import chosen_kind, layer_config, pasted_layers

#: The kind of layer the models chart draws of a model that has several: its global (full-attention) layers.
GLOBAL = "full_attention"

# --- real models, and a pasted config.json ------------------------------------------------------------------------


@memo
def _published() -> tuple[dict[str, np.ndarray], dict[str, int], tuple[str, ...]]:
    curves, lengths, left_out = {}, {}, []
    for preset in load_presets().values():
        if preset.missing:
            continue  # not drawn without the fields that decide its frequencies (the text says which)
        config = preset.config()
        try:
            layers = model_layers(config, seq_len=config.get("max_position_embeddings"))
            if not any(layer.rotates for layer in layers):
                continue  # no RoPE in any layer (GPT-2): no wavelengths, and not refused
            name = chosen_kind(layers, GLOBAL, lesson=False)  # several kinds of layer: the global ones
        except PosEncError:
            left_out.append(preset.name)  # a config the core refuses: named in the title, never dropped silently
            continue
        inv_freq = next(layer for layer in layers if layer.rotates and layer.layer_type == name).frequencies.inv_freq
        # every pair in its place in the head: p-RoPE's pairs that never turn are gaps (NaN), not dropped, so Gemma 4's
        # 64 turning pairs of 256 stay in the first quarter of the axis, as page 9 draws the same head
        curves[preset.name], lengths[preset.name] = pair_wavelengths(inv_freq), training_length(config)
    return curves, lengths, tuple(left_out)


#: The presets the models chart draws at first (the ones the text names); the others are a click away in its legend.
MODELS_SHOWN = ("llama2_7b", "codellama_7b", "llama3_1_8b", "qwen2_5_7b", "qwen3_8b", "deepseek_v3", "gpt_neox_20b")


@uses()
def models_figure(v: Values, lang: str) -> go.Figure:
    curves, lengths, left_out = _published()
    presets = load_presets()
    shown = {presets[preset_id].name for preset_id in MODELS_SHOWN if preset_id in presets}
    return figs.model_wavelengths(curves, lengths, left_out=left_out, shown=shown, lang=lang)


def _without_rope(text: str) -> bool:
    r"""Whether the core reads every layer of a pasted config, and none of them rotates."""
    try:
        return not any(layer.rotates for layer in pasted_layers(text))
    except PosEncError:
        return False


@memo
def _pasted(text: str, layer: str) -> tuple[np.ndarray, np.ndarray, float, int, str, float]:
    whole = parse_config_text(text)
    length = training_length(whole)
    if not isinstance(length, int | float) or isinstance(length, bool):
        if _without_rope(text):  # T5, BLOOM: said as what they are, not as a missing field
            raise PageRefusal("extension.no_layer_rotates")
        raise PosEncError(
            "config needs max_position_embeddings (or original_max_position_embeddings)", code="no_training_length"
        )
    layers = pasted_layers(text)
    if not any(layer.rotates for layer in layers):  # GPT-2: it has a training length, and no RoPE
        raise PageRefusal("extension.no_layer_rotates")
    config = layer_config(whole, layers, layer)  # the layers of kind `layer` only
    longest = config.get("max_position_embeddings", length)
    after = rope_frequencies_from_config(config, seq_len=longest if isinstance(longest, int) else None)
    before = rope_frequencies_from_config(without_scaling(config)).inv_freq
    rope_type, factor = scaling_of(config)
    return before, after.inv_freq, after.attention_factor, int(length), rope_type, factor


@uses("config", "pasted_layer")
def pasted_figure(v: Values, lang: str) -> go.Figure:
    before, after, attention_factor, length, rope_type, factor = _pasted(v["config"], v["pasted_layer"])
    title = t(
        "extension.fig_pasted",
        lang,
        layer=chosen_kind(pasted_layers(v["config"]), v["pasted_layer"]),
        type=rope_type,
        factor=f"{factor:g}",
        dim=2 * before.shape[0],
        base=f"{implied_base(before):,.6g}",
        attention=f"{attention_factor:.4f}",
    )
    return figs.wavelengths(
        rope_wavelengths(before),
        rope_wavelengths(after),
        length=length,
        target=None,
        title=title,
        after_name=t("extension.after_config", lang),
        lang=lang,
    )


@reads("model")
def preset_words(v: Values, lang: str) -> dict[str, str]:
    r"""What the preset paragraph quotes: the chosen model's name and :func:`preset_table`."""
    return {"model": t(f"extension.model.{v['model']}", lang), "table": preset_table(v, lang)}


@reads("model")
def preset_table(v: Values, lang: str) -> str:
    r"""A markdown table of the chosen preset: field, value, where it was read (links)."""
    preset = load_presets()[v["model"]]
    rows = [
        f"| {t('extension.col_field', lang)} | {t('extension.col_value', lang)} | {t('extension.col_source', lang)} |",
        "|---|---|---|",
    ]
    for name, value in preset.values.items():
        shown = json.dumps(value, ensure_ascii=False).replace("|", "\\|")
        source = preset.sources[name]
        label = t("extension.link_defaults" if source.startswith(TRANSFORMERS_DEFAULTS) else "extension.link", lang)
        rows.append(f"| `{name}` | `{shown}` | [{label}]({source}) |")
    for name in preset.missing:
        rows.append(
            f"| `{name}` | {t('extension.not_bundled', lang)} | [{t('extension.link', lang)}]({preset.source}) |"
        )
    return "\n".join(rows) + f"\n\n*{t(f'extension.note.{preset.id}', lang)}*"
