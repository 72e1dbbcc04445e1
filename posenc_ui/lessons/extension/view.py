r"""Page 7 — context extension: what PI, NTK-aware, dynamic NTK, YaRN, Llama 3 and LongRoPE do to each RoPE pair.

A real model (a preset from ``assets/presets/``) gives the head size, base and training length L; a method and a
factor s give new frequencies, all from :func:`posenc_core.rope_frequencies_from_config`. The page draws the
wavelengths before and after, YaRN's regimes r = L/λ with its α/β thresholds and its ramp two ways, the temperature
each method applies, the arcs of angles each pair reaches at a target length, and any pasted ``config.json``.

The recipes of the last section (every preset's wavelengths, a pasted ``config.json``, the preset table) live in
:mod:`.models`; this module holds the rest and the view.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    ROPE_REGISTRY,
    PosEncError,
    angle_coverage,
    dynamic_ntk_alpha,
    implied_base,
    ntk_base,
    ntk_exponent,
    pair_regimes,
    regime_counts,
    rope_frequencies,
    rope_frequencies_from_config,
    rope_wavelengths,
    rotations_in_context,
    temperature_curves,
    unseen_angles,
    unseen_pair_count,
    yarn_dynamic_scale,
    yarn_ramp_by_turns,
    yarn_regimes,
)

from ...i18n import t
from ...lesson import Check, Explain, PageEntry, PageRefusal, Values, View, reads, uses
from ...memo import memo
from ...presets import (
    ConfigTextParam,
    load_presets,
    rotating_preset_ids,
    scaling_of,
    training_length,
    without_scaling,
)
from ...state import ChoiceParam, FollowingChoiceParam, IntParam
from . import figures as figs
from . import layers, reasons, temperature
from .layers import model_config
from .models import models_figure, pasted_figure

#: The model's own scaling, then every rope_type of the core's registry but plain RoPE.
METHODS = ("model", *(name for name, entry in ROPE_REGISTRY.items() if entry.extends and name != "default"))


def methods_of(state: Mapping[str, Any]) -> tuple[str, ...]:
    r"""The methods offered for the chosen model: its own scaling, every type a factor s defines, and a type with no
    formula (LongRoPE's searched per-pair factors) only where the model publishes its own (Phi-3-mini-128k)."""
    try:
        own = {layer.rope_type for layer in layers.preset_layers(state["model"]) if layer.rotates}
    except (PosEncError, KeyError):
        own = set()
    return tuple(name for name in METHODS if name == "model" or ROPE_REGISTRY[name].formula or name in own)


#: The turns axis of the paper's ramp: from well below α = 1 to well above β = 32.
PAPER_TURNS = np.geomspace(0.05, 1000.0, 240)
#: The example in the paste box: Llama 3.1 8B's RoPE fields, exactly as its preset holds them.
EXAMPLE_CONFIG = json.dumps(load_presets()["llama3_1_8b"].config(), indent=2)

PARAMS = (
    # the presets with a layer that rotates (16), in a select box: a radio filled a phone
    ChoiceParam("model", "llama2_7b", options=rotating_preset_ids(), widget="selectbox"),
    FollowingChoiceParam(
        "method", "yarn", options_of=methods_of, follows=("model",), labels="extension.method", widget="radio"
    ),
    IntParam("factor", 8, lo=2, hi=64),
    IntParam("stretch", 8, lo=1, hi=64),
    IntParam("beta_fast", 32, lo=8, hi=128),
    IntParam("beta_slow", 1, lo=1, hi=4),
    ConfigTextParam("config", EXAMPLE_CONFIG),
    *layers.PARAMS,  # after "model" and "config": the kinds of layer they offer follow them
    *reasons.PARAMS,
)


class Extension(NamedTuple):
    r"""One model under one method: frequencies before / after, the attention factor, L, the target T, s."""

    before: np.ndarray  # (n,) plain RoPE of the model
    after: np.ndarray  # (n,) with the method
    attention_factor: float
    length: int  # L: the training length
    target: int  # T = stretch · L
    factor: float  # s the method applies (the model's own for "model")
    rope_type: str

    @property
    def dim(self) -> int:
        return 2 * self.before.shape[0]

    @property
    def base(self) -> float:
        return implied_base(self.before)


def _method_config(model: str, layer: str, method: str, factor: int, beta_fast: int, beta_slow: int) -> dict:
    r"""The preset's config (its layers of kind ``layer``) with its scaling replaced by ``method`` at factor s (or
    kept, for "model")."""
    preset = load_presets()[model]
    config = model_config(model, layer)
    if method == "model":
        if preset.missing:
            raise PageRefusal("extension.missing_fields", model=preset.name, fields=", ".join(preset.missing))
        return config
    entry = ROPE_REGISTRY[method]
    if not entry.formula:  # LongRoPE: searched per-pair factors, offered only with the model's own (methods_of)
        if scaling_of(config)[0] != method:
            raise PageRefusal(f"extension.{method}_needs_factors")
        return config
    length = training_length(config)
    plain = without_scaling(config)
    plain.pop("original_max_position_embeddings", None)
    plain["max_position_embeddings"] = length  # dynamic NTK grows from here; the others read it as the original
    scaling = entry.scaling(
        factor=factor, original_max_position_embeddings=length, beta_fast=beta_fast, beta_slow=beta_slow
    )  # the sliders' β reach only the types that read them (YaRN)
    return plain | {"rope_scaling": scaling}


@memo
def _extension(
    model: str, layer: str, method: str, factor: int, stretch: int, beta_fast: int, beta_slow: int
) -> Extension:
    config = model_config(model, layer)
    length = training_length(config)
    before = rope_frequencies_from_config(without_scaling(config)).inv_freq
    scaled = _method_config(model, layer, method, factor, beta_fast, beta_slow)
    after = rope_frequencies_from_config(scaled, seq_len=stretch * length)
    rope_type, s = scaling_of(scaled)
    return Extension(before, after.inv_freq, after.attention_factor, length, stretch * length, s, rope_type)


def _of(v: Values) -> Extension:
    return _extension(v["model"], v["layer"], v["method"], v["factor"], v["stretch"], v["beta_fast"], v["beta_slow"])


def _name(v: Values) -> str:
    return load_presets()[v["model"]].name


# --- the master chart and the readouts beside it -------------------------------------------------------------------


@uses("model", "layer", "method", "factor", "stretch", "beta_fast", "beta_slow")
def wavelengths_figure(v: Values, lang: str) -> go.Figure:
    ext = _of(v)
    method = t(f"extension.method.{v['method']}", lang)
    title = t(
        "extension.fig_wavelengths", lang, model=_name(v), method=method, type=ext.rope_type, factor=f"{ext.factor:g}"
    )
    return figs.wavelengths(
        rope_wavelengths(ext.before),
        rope_wavelengths(ext.after),
        length=ext.length,
        target=ext.target,
        title=title,
        after_name=t("extension.after", lang, method=method),
        lang=lang,
    )


READOUT_FIELDS = (
    "base",
    "dim",
    "exponent",
    "factor",
    "ntk_base",
    "seq_len",
    "length",
    "alpha",
    "dynamic_base",
    "yarn_scale",
    "yarn_base",
)


@reads("model", "layer", "factor", "stretch")
def readouts(v: Values) -> dict[str, str]:
    r"""The numbers printed beside the sliders: NTK-aware base at s, dynamic NTK's α and base at ℓ = T in transformers'
    arithmetic, and the YaRN paper's §3.3 dynamic scale ℓ/L with its base, which differ from them."""
    try:
        config = model_config(v["model"], v["layer"])
    except PosEncError:  # the chart above says why in the reader's words; the sentence shows no number
        return dict.fromkeys(READOUT_FIELDS, "—")
    plain = rope_frequencies_from_config(without_scaling(config)).inv_freq
    base, dim, length = implied_base(plain), 2 * plain.shape[0], training_length(config)
    alpha = dynamic_ntk_alpha(v["factor"], v["stretch"] * length, length)
    yarn_scale = yarn_dynamic_scale(v["stretch"] * length, length)
    return {
        "base": f"{base:,.0f}",
        "dim": str(dim),
        "exponent": f"{ntk_exponent(dim):.4f}",
        "factor": str(v["factor"]),
        "ntk_base": f"{ntk_base(base, v['factor'], dim):,.0f}",
        "seq_len": f"{v['stretch'] * length:,}",
        "length": f"{length:,}",
        "alpha": f"{alpha:,.2f}",
        "dynamic_base": f"{ntk_base(base, alpha, dim):,.0f}",
        "yarn_scale": f"{yarn_scale:,.2f}",
        "yarn_base": f"{ntk_base(base, yarn_scale, dim):,.0f}",
    }


# --- regimes and the ramp ----------------------------------------------------------------------------------------


@uses("model", "layer", "method", "factor", "stretch", "beta_fast", "beta_slow")
def regimes_figure(v: Values, lang: str) -> go.Figure:
    ext = _of(v)
    regime = pair_regimes(ext.before, ext.after, factor=max(ext.factor, 1.0))
    counts = regime_counts(regime)
    title = t(
        "extension.fig_regimes",
        lang,
        model=_name(v),
        method=t(f"extension.method.{v['method']}", lang),
        kept=counts[0],
        blended=counts[1],
        interpolated=counts[2],
    )
    turns = rotations_in_context(ext.before, ext.length)
    return figs.regimes(turns, regime, beta_fast=v["beta_fast"], beta_slow=v["beta_slow"], title=title, lang=lang)


@memo
def _ramp(model: str, layer: str, beta_fast: int, beta_slow: int):
    config = model_config(model, layer)
    plain = rope_frequencies_from_config(without_scaling(config)).inv_freq
    length = training_length(config)
    split = yarn_regimes(
        2 * plain.shape[0],
        base=implied_base(plain),
        original_max_position_embeddings=length,
        beta_fast=beta_fast,
        beta_slow=beta_slow,
    )
    return split, rotations_in_context(plain, length)


@uses("model", "layer", "beta_fast", "beta_slow")
def ramp_figure(v: Values, lang: str) -> go.Figure:
    split, turns = _ramp(v["model"], v["layer"], v["beta_fast"], v["beta_slow"])
    paper = yarn_ramp_by_turns(PAPER_TURNS, beta_fast=v["beta_fast"], beta_slow=v["beta_slow"])
    return figs.ramp_two_ways(split.ramp, turns, PAPER_TURNS, paper, low=split.low, high=split.high, lang=lang)


# --- angles never seen in training ------------------------------------------------------------------------------


@uses("model", "layer", "method", "factor", "stretch", "beta_fast", "beta_slow")
def ood_figure(v: Values, lang: str) -> go.Figure:
    ext = _of(v)
    seen = angle_coverage(ext.before, ext.length)
    before = angle_coverage(ext.before, ext.target)
    after = angle_coverage(ext.after, ext.target)
    new_before = unseen_pair_count(ext.before, ext.length, ext.before, ext.target)
    new_after = unseen_pair_count(ext.before, ext.length, ext.after, ext.target)
    method = t(f"extension.method.{v['method']}", lang)
    panels = (
        (t("extension.panel_before", lang, count=new_before, pairs=ext.before.shape[0]), before),
        (t("extension.panel_after", lang, method=method, count=new_after, pairs=ext.before.shape[0]), after),
    )
    title = t("extension.fig_ood", lang, model=_name(v), target=f"{ext.target:,}", length=f"{ext.length:,}")
    return figs.angle_rings(seen, panels, title=title, lang=lang)


# --- checks -------------------------------------------------------------------------------------------------------


@uses("model", "layer", "factor")
def check_ntk(v: Values) -> Check:
    r"""The base implied by the core's NTK-aware frequencies equals :math:`b\,s^{d/(d-2)}`."""
    config = model_config(v["model"], v["layer"])
    plain = without_scaling(config)
    base = implied_base(rope_frequencies_from_config(plain).inv_freq)
    ntk = rope_frequencies_from_config(plain | {"rope_scaling": {"rope_type": "ntk", "factor": float(v["factor"])}})
    expected = ntk_base(base, v["factor"], 2 * ntk.inv_freq.shape[0])
    return Check(
        "extension.check_ntk",
        abs(implied_base(ntk.inv_freq) / expected - 1.0),
        tolerance=1e-9,
        fmt={"factor": v["factor"], "base": f"{expected:,.0f}"},
    )


@uses("model", "layer", "factor", "stretch")
def check_dynamic(v: Values) -> Check:
    r"""Dynamic NTK at ℓ = T: the core's base equals :math:`b\,\alpha^{d/(d-2)}`, α = s·ℓ/L − (s − 1)."""
    ext = _extension(v["model"], v["layer"], "dynamic", v["factor"], v["stretch"], 32, 1)
    alpha = dynamic_ntk_alpha(v["factor"], ext.target, ext.length)
    expected = ntk_base(ext.base, alpha, ext.dim)
    return Check(
        "extension.check_dynamic",
        abs(implied_base(ext.after) / expected - 1.0),
        tolerance=1e-9,
        fmt={"alpha": f"{alpha:,.2f}", "seq_len": f"{ext.target:,}"},
    )


@uses("model", "layer", "factor", "beta_fast", "beta_slow")
def check_regimes(v: Values) -> Check:
    r"""Classifying the core's YaRN frequencies pair by pair gives exactly ``yarn_regimes``' three bands."""
    ext = _extension(v["model"], v["layer"], "yarn", v["factor"], 1, v["beta_fast"], v["beta_slow"])
    generic = pair_regimes(ext.before, ext.after, factor=v["factor"])
    split, _ = _ramp(v["model"], v["layer"], v["beta_fast"], v["beta_slow"])
    counts = regime_counts(split.regime)
    return Check(
        "extension.check_regimes",
        float(np.count_nonzero(generic != split.regime)),
        fmt={"kept": counts[0], "blended": counts[1], "interpolated": counts[2], "factor": v["factor"]},
    )


@uses("model", "layer", "stretch")
def check_interpolation(v: Values) -> Check:
    r"""PI with s = T/L puts every pair's arc at T exactly on its training arc: no unseen angle."""
    ext = _extension(v["model"], v["layer"], "linear", v["stretch"], v["stretch"], 32, 1)  # s = T/L
    residual = float(np.max(unseen_angles(ext.before, ext.length, ext.after, ext.target)))
    return Check("extension.check_interpolation", residual, tolerance=1e-9, fmt={"stretch": v["stretch"]})


VIEW = View(
    page_id="extension",
    params=PARAMS,
    figures={
        "wavelengths": wavelengths_figure,
        "regimes": regimes_figure,
        "ramp": ramp_figure,
        **temperature.FIGURES,
        "ood": ood_figure,
        "models": models_figure,
        "pasted": pasted_figure,
        **layers.FIGURES,
        **reasons.FIGURES,
    },
    sweeps={
        "wavelengths": "factor",
        "ramp": "beta_fast",
        **temperature.SWEEPS,
        "ood": "factor",
        **reasons.SWEEPS,
    },
    static={
        "models": "reads no parameter",
        "pasted": "its one input is a pasted config, not a slider",
        "regimes": "a method's band edges (Llama 3's frequency factors, YaRN's β) decide the regimes, not s",
        **layers.STATIC,
    },
    checks={
        "ntk": check_ntk,
        "dynamic": check_dynamic,
        "regimes": check_regimes,
        **temperature.CHECKS,
        "interpolation": check_interpolation,
        **reasons.CHECKS,
    },
    explain=Explain(
        latex=(
            r"\theta_i = b^{-2i/d}, \qquad \lambda_i = \frac{2\pi}{\theta_i}, \qquad r_i = \frac{L}{\lambda_i}",
            r"\text{PI: } \theta'_i = \theta_i / s",
            r"\text{NTK: } b' = b\,s^{d/(d-2)}",
            r"\texttt{dynamic}\text{: } b' = b\,\alpha^{d/(d-2)}, \ \alpha = \tfrac{s\,\ell}{L} - (s-1)",
            r"\text{YaRN: } \theta'_i = \big(1-\gamma(r_i)\big)\tfrac{\theta_i}{s} + \gamma(r_i)\,\theta_i",
            r"\gamma(r) = \operatorname{clip}\Big(\tfrac{r-\alpha}{\beta-\alpha}, 0, 1\Big)",
            r"\text{YaRN: } \sqrt{1/t} = 0.1\ln s + 1",
            r"\text{LongRoPE: } \theta'_i = \theta_i / f_i, \quad \sqrt{1 + \ln s / \ln L}",
            *reasons.LATEX,
        ),
        sources=(rope_frequencies, pair_regimes, unseen_angles, temperature_curves, *reasons.SOURCES),
        paper="Chen et al. 2023 (PI), arXiv:2306.15595; bloc97 2023 (NTK-aware); Peng et al. 2023 (YaRN), "
        "arXiv:2309.00071, §3; Meta 2024 (Llama 3.1), arXiv:2407.21783; Ding et al. 2024 (LongRoPE), arXiv:2402.13753"
        + reasons.PAPER,
    ),
)

PAGE = PageEntry("pages/7_Context_extension.py", VIEW, preview="wavelengths")
