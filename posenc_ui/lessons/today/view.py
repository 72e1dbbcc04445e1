r"""Page 9 — position in today's models: how 2025–26 decoders mix position per layer, and why.

A real model's layers (a preset, read by :func:`posenc_core.model_layers`; the strip is page 7's) and what each kind of
layer sees (:func:`posenc_core.layer_reach`); why a causal decoder can do without position
(:func:`posenc_core.nope_position_probe`); Gemma 4's p-RoPE against NeoX-style partial RoPE
(:func:`posenc_core.rope_frequencies`). Multimodal RoPE and MLA's decoupled key are :mod:`.media`; this module
holds the rest and the view.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    LayerPosition,
    config_training_length,
    distinct_layer_types,
    layer_reach,
    mla_fold_residuals,
    model_layers,
    mrope_offset_scores,
    nope_position_probe,
    nope_position_probes,
    pair_wavelengths,
    rope_frequencies,
    rope_frequencies_from_config,
    rope_inv_freq,
    rope_wavelengths,
)

from ...i18n import t
from ...lesson import Check, Explain, PageEntry, PageRefusal, Values, View, uses
from ...memo import DEAR, memo
from ...presets import PRESET_IDS, load_presets
from ...state import ChoiceParam, IntParam
from ..extension import figures_layers as layer_figs
from ..extension.layers import kind_words, preset_layers, strip_figure
from . import figures as figs
from . import media

#: The preset whose global layers turn with p-RoPE (proportional): Gemma 4's 512-dimensional global head.
PROPORTIONAL_MODEL = "gemma4_26b"
#: The page's claims about the probe at every slider setting and seed (tests/core/test_todays_models.py: margins).
PROBE_R2 = 0.7
SLOPE_GAP = 0.1

PARAMS = (
    ChoiceParam("model", "llama4_scout", options=PRESET_IDS, widget="selectbox"),  # 16 presets: a radio fills a phone
    IntParam("length", 256, lo=16, hi=1024, step=16),
    IntParam("dim", 64, lo=16, hi=256, step=16),
    IntParam("seed", 0, lo=0, hi=99),
    ChoiceParam("proportion", 0.25, options=(0.125, 0.25, 0.5, 0.75), widget="segmented"),
    *media.PARAMS,
)


# --- 1. the layers of a real model ----------------------------------------------------------------------------------


def _context(model: str) -> int:
    r"""The longest context the model's config declares (``max_position_embeddings``, a VLM's in its
    ``text_config``), else its training length: what a layer without a window can see."""
    config = load_presets()[model].config()
    longest = config.get("max_position_embeddings") or config.get("text_config", {}).get("max_position_embeddings")
    return int(longest or config_training_length(config) or 1)


def _name(model: str, lang: str) -> str:
    return t(f"today.model.{model}", lang)


@uses("model")
def layers_figure(v: Values, lang: str) -> go.Figure:
    missing = load_presets()[v["model"]].missing
    return strip_figure(preset_layers(v["model"]), _name(v["model"], lang), lang, missing=missing)


def _missing(model: str) -> str:
    r"""The fields preset ``model`` lacks (its ``missing``), joined; empty when it ships every field it uses."""
    return ", ".join(load_presets()[model].missing)


@memo
def _layers_at_context(model: str) -> tuple[LayerPosition, ...]:
    r"""The preset's layers as the model turns them once it sees its whole context (``seq_len`` = that length:
    "dynamic" and "longrope" pick their long-context frequencies there); refused for a preset that lacks a field
    those frequencies need, rather than drawn with the short-context ones."""
    if _missing(model):
        raise PageRefusal("today.reach_missing", model=t(f"today.model.{model}", "en"), fields=_missing(model))
    return model_layers(load_presets()[model].config(), seq_len=_context(model))


@uses("model")
def reach_figure(v: Values, lang: str) -> go.Figure:
    layers = _layers_at_context(v["model"])
    reach = layer_reach(layers, context_length=_context(v["model"]))
    kinds = distinct_layer_types(layers)
    colours = layer_figs.kind_colours([kind.rotates for kind in kinds])
    names = [kind_words(kind, r.count, lang) for kind, r in zip(kinds, reach, strict=True)]
    title = t("today.fig_reach", lang, model=_name(v["model"], lang), context=f"{_context(v['model']):,}")
    return figs.reach(
        names,
        [r.span for r in reach],
        [r.shortest for r in reach],
        [r.longest for r in reach],
        colours,
        title=title,
        lang=lang,
    )


@uses("model")
def reach_words(v: Values, lang: str) -> dict[str, str]:
    r"""One line per kind of layer: what it sees and which of its pairs turn within that view."""
    if _missing(v["model"]):  # the figure above says why (its refusal): nothing to list
        return {"list": ""}
    layers = _layers_at_context(v["model"])
    lines = []
    for k, r in enumerate(layer_reach(layers, context_length=_context(v["model"])), start=1):
        if r.rotates:
            lines.append(
                t(
                    "today.reach_line",
                    lang,
                    index=k,
                    kind=r.layer_type,
                    count=r.count,
                    span=f"{r.span:,}",
                    pairs=r.pairs,
                    turning=r.turning,
                    shortest=media.tokens(r.shortest),
                    longest=media.tokens(r.longest),
                )
            )
        else:
            lines.append(t("today.reach_nope", lang, index=k, count=r.count, span=f"{r.span:,}"))
    return {"list": "\n".join(f"- {line}" for line in lines)}


@uses("model")
def check_reach(v: Values) -> Check:
    r"""Every kind of layer that rotates turns with exactly the frequencies its config gives that kind of layer."""
    config = load_presets()[v["model"]].config()
    kinds = [kind for kind in distinct_layer_types(_layers_at_context(v["model"])) if kind.rotates]
    gap = 0.0
    for kind in kinds:
        alone = rope_frequencies_from_config(config, seq_len=_context(v["model"]), layer_type=kind.rope_entry).inv_freq
        gap = max(gap, float(np.max(np.abs(alone - kind.frequencies.inv_freq) / np.where(alone > 0, alone, 1.0))))
    return Check("today.check_reach", gap, tolerance=1e-12, fmt={"kinds": len(kinds)})


# --- 2. why NoPE works in a decoder ----------------------------------------------------------------------------------


@memo(budget=DEAR)  # seconds to draw, kilobytes to keep: a pool that the class's big tables cannot flush
def _probes_at(length: int, dim: int, seed: int):
    return nope_position_probes(length, dim, seed=seed)  # one draw for both (the draw is most of the cost)


def _probes(v: Values):
    r"""``(with the causal mask, without it)``: the probe of the page's settings."""
    return _probes_at(v["length"], v["dim"], v["seed"])


def _mask_names(lang: str) -> tuple[str, str]:
    return t("today.with_mask", lang), t("today.without_mask", lang)


@uses("length", "dim", "seed")
def norm_figure(v: Values, lang: str) -> go.Figure:
    masked, free = _probes(v)
    title = t("today.fig_norm", lang, dim=v["dim"], slope=f"{masked.slope:.3f}")
    names = _mask_names(lang)
    return figs.norm(
        masked.positions, masked.mean_square_norm, free.mean_square_norm, names=names, title=title, lang=lang
    )


@uses("length", "dim", "seed")
def probe_figure(v: Values, lang: str) -> go.Figure:
    masked, free = _probes(v)
    title = t("today.fig_probe", lang, masked=f"{masked.r2:.3f}", free=f"{free.r2:.1e}", seed=v["seed"])
    return figs.probe(
        masked.positions,
        (masked.median, masked.low, masked.high),
        (free.median, free.low, free.high),
        names=_mask_names(lang),
        title=title,
        lang=lang,
    )


@uses("length", "dim", "seed")
def check_norm(v: Values) -> Check:
    masked, _ = _probes(v)
    return Check("today.check_norm", abs(masked.slope + 1.0), tolerance=SLOPE_GAP, fmt={"slope": f"{masked.slope:.3f}"})


@uses("length", "dim", "seed")
def check_probe(v: Values) -> Check:
    masked, _ = _probes(v)
    return Check(
        "today.check_probe",
        1.0 - masked.r2,
        tolerance=1.0 - PROBE_R2,
        fmt={"r2": f"{masked.r2:.3f}", "bound": PROBE_R2, "seed": v["seed"]},
    )


@uses("length", "dim", "seed")
def check_no_mask(v: Values) -> Check:
    _, free = _probes(v)
    return Check("today.check_no_mask", abs(free.r2), tolerance=1e-9)


# --- 3. p-RoPE against partial RoPE ----------------------------------------------------------------------------------


@memo
def _proportional_layer() -> LayerPosition:
    return next(
        kind for kind in distinct_layer_types(preset_layers(PROPORTIONAL_MODEL)) if kind.rope_type == "proportional"
    )


@memo
def _spectra(proportion: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, float]:
    r"""Full RoPE, p-RoPE and partial RoPE over Gemma 4's global head (its head size and base), at p."""
    layer = _proportional_layer()
    head, base = layer.head_dim, float(layer.base)
    full = rope_frequencies(head, base=base).inv_freq
    proportional = rope_frequencies(
        head, base=base, rope_scaling={"rope_type": "proportional"}, partial_rotary_factor=proportion
    ).inv_freq
    partial = rope_frequencies(head, base=base, partial_rotary_factor=proportion).inv_freq
    return full, proportional, partial, head, base


@uses("proportion")
def prope_figure(v: Values, lang: str) -> go.Figure:
    full, proportional, partial, head, base = _spectra(v["proportion"])
    pairs = full.shape[0]
    curves = [pair_wavelengths(full), pair_wavelengths(proportional), pair_wavelengths(partial, pairs=pairs)]
    names = [t(f"today.spectrum.{name}", lang) for name in ("full", "proportional", "partial")]
    slow_p = np.nanmax(curves[1])
    slow_n = np.nanmax(curves[2])
    title = t(
        "today.fig_prope",
        lang,
        head=head,
        base=f"{base:,.0f}",
        p=f"{v['proportion']:g}",
        slow_p=media.tokens(slow_p),
        slow_n=media.tokens(slow_n),
    )
    return figs.wavelength_lines(
        curves,
        names,
        (figs.GREY, figs.GREEN, figs.ORANGE),
        context=_context(PROPORTIONAL_MODEL),
        title=title,
        lang=lang,
    )


@uses("proportion")
def check_prope(v: Values) -> Check:
    r"""p-RoPE's turning pairs are the full head's fastest ⌊p·d/2⌋, untouched; partial RoPE's are a whole spectrum
    over p·d dimensions: both measured against :func:`posenc_core.rope_inv_freq` of the head and of p·d."""
    full, proportional, partial, _head, base = _spectra(v["proportion"])
    turning = proportional[proportional > 0]
    kept = float(np.max(np.abs(turning / full[: turning.shape[0]] - 1.0)))
    squeezed = float(np.max(np.abs(partial / rope_inv_freq(2 * partial.shape[0], base=base) - 1.0)))
    return Check(
        "today.check_prope",
        max(kept, squeezed),
        tolerance=1e-12,
        fmt={"turning": turning.shape[0], "pairs": full.shape[0], "dims": 2 * partial.shape[0]},
    )


@uses("proportion")
def prope_words(v: Values, lang: str) -> dict[str, str]:
    r"""The numbers the p-RoPE paragraph quotes: the slowest turning wavelength of each, and the context length."""
    full, proportional, partial, head, _base = _spectra(v["proportion"])
    return {
        "slow_p": f"{rope_wavelengths(proportional[proportional > 0]).max():,.0f}",
        "slow_n": f"{rope_wavelengths(partial).max():,.0f}",
        "context": f"{_context(PROPORTIONAL_MODEL):,}",
        "p": f"{v['proportion']:g}",
        "head": str(head),
        "turning": str(int(np.count_nonzero(proportional))),
        "pairs": str(full.shape[0]),
    }


VIEW = View(
    page_id="today",
    params=PARAMS,
    figures={
        "layers": layers_figure,
        "reach": reach_figure,
        "norm": norm_figure,
        "probe": probe_figure,
        "prope": prope_figure,
        **media.FIGURES,
    },
    sweeps={"norm": "dim", "probe": "dim", "prope": "proportion", **media.SWEEPS},
    static={
        "layers": "one model's layers: its only input is the model picked",
        "reach": "one model's kinds of layer: its only input is the model picked",
        **media.STATIC,
    },
    checks={
        "reach": check_reach,
        "norm": check_norm,
        "probe": check_probe,
        "no_mask": check_no_mask,
        "prope": check_prope,
        **media.CHECKS,
    },
    explain=Explain(
        latex=(
            r"y_t = \frac{1}{t}\sum_{j \le t} x_j, \qquad \mathbb{E}\,\lVert y_t\rVert^2 = \frac{d}{t}",
            r"\widehat{\log t} = a + b\,\log\lVert y_t\rVert^2",
            r"\text{p-RoPE: } \theta_i = b^{-2i/d},\ i < \lfloor p\,d/2\rfloor; \quad \theta_i = 0 \text{ otherwise}",
            r"\text{partial: } \theta_i = b^{-2i/(p\,d)},\ i < p\,d/2",
            r"\phi_{p,i} = \mathrm{pos}_{a(i)}(p)\,\theta_i, \quad a(i) \in \{t, h, w\}",
            r"(R_m q_m)^\top R_n W^{UK} c_n = q_m^\top R_{n-m} W^{UK} c_n",
            r"s_{mn} = (W^{UK\top} q^C_m)^\top c_n + q^{R\top}_m k^R_n, \quad q^R_m = R_m W^{QR} c^Q_m,\ "
            r"k^R_n = R_n W^{KR} h_n",
        ),
        sources=(
            layer_reach,
            nope_position_probe,
            rope_frequencies,
            mrope_offset_scores,
            mla_fold_residuals,
        ),
        paper="Haviv et al. 2022, arXiv:2203.16634; Kazemnejad et al. 2023, arXiv:2305.19466, §5; Barbero et al. 2024, "
        "arXiv:2410.06205; Wang et al. 2024 (Qwen2-VL), arXiv:2409.12191, §2.1; Wei et al. 2025 (VideoRoPE), "
        "arXiv:2502.05173; DeepSeek-AI 2024 (DeepSeek-V2), arXiv:2405.04434, §2.1",
    ),
)

PAGE = PageEntry("pages/9_Todays_models.py", VIEW, preview="probe")
