r"""Page 7, the reasons behind the methods: NTK-aware as a change of base in RoPE's number system, YaRN's
temperature and the entropy argument (Su's log n scale beside it), and ReRoPE as the extreme case.

Every claim is a :class:`~posenc_ui.lesson.Check` on numbers from :mod:`posenc_core`:
:func:`~posenc_core.frequency_divisors` against :func:`~posenc_core.ntk_divisors`,
:func:`~posenc_core.entropy_by_length`, and :func:`~posenc_core.rerope_scores` against one rotation per clipped
distance. The extension View pulls these in through :data:`FIGURES`, :data:`CHECKS` and :data:`PARAMS`.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    ROPE_REGISTRY,
    attention_entropy,
    entropy_by_length,
    frequency_divisors,
    ntk_divisors,
    rerope_relative_positions,
    rerope_scores,
    rope_frequencies_from_config,
    rope_inv_freq,
    rope_scores,
    rotations_in_context,
    unseen_angles,
)

from ...i18n import t
from ...lesson import Check, Values, uses
from ...memo import memo
from ...presets import load_presets, training_length, without_scaling
from ...state import IntParam
from . import figures_reasons as figs
from .entropy_table import settings, stored_changes, stored_curves
from .layers import model_config

#: Su's entropy post writes its scale as log_512 n: the toy head's training length.
ENTROPY_LENGTH = 512
#: The toy head's context lengths: L/8 … 64·L, log-spaced (the factor slider reaches 64).
ENTROPY_LENGTHS = np.unique(np.geomspace(ENTROPY_LENGTH // 8, 64 * ENTROPY_LENGTH, 36).astype(np.int64))
#: Queries the figure averages (one draw: its curves move with the seed) and the entropy check averages: the mean
#: change over 256 queries estimates the expectation to a standard error of ≈ 0.04–0.08 nats (per-query spread
#: 0.7–1.3 nats at s = 2 … 64), far inside the check's margin at every factor the slider reaches.
FIGURE_QUERIES, CHECK_QUERIES = 16, 256
#: What the stored entropies (:mod:`.entropy_table`) must have been computed with to be used.
TABLE_SETTINGS = settings(ENTROPY_LENGTH, ENTROPY_LENGTHS, FIGURE_QUERIES, CHECK_QUERIES)
#: The two-pass check's example: a short text, a small head and a window much shorter than the text.
RE_TOKENS, RE_DIM, RE_WINDOW = 48, 16, 12
#: Points on the distance axis of the ReRoPE figure.
DISTANCE_POINTS = 200

PARAMS = (IntParam("window", 512, lo=16, hi=1024, step=16),)  # ReRoPE's w, in tokens: below every preset's L


# --- 1. NTK-aware as a change of base ------------------------------------------------------------------------------


@memo
def _divisors(model: str, layer: str, factor: int, beta_fast: int, beta_slow: int) -> dict[str, np.ndarray]:
    r"""Per pair θ/θ′ under PI, NTK-aware and YaRN at s, from the registry's frequencies for the preset (its layers
    of kind ``layer``)."""
    config = model_config(model, layer)
    length, plain = training_length(config), without_scaling(config)
    before = rope_frequencies_from_config(plain).inv_freq
    out = {}
    for method in ("linear", "ntk", "yarn"):
        scaling = ROPE_REGISTRY[method].scaling(
            factor=factor, original_max_position_embeddings=length, beta_fast=beta_fast, beta_slow=beta_slow
        )
        out[method] = frequency_divisors(
            before, rope_frequencies_from_config(plain | {"rope_scaling": scaling}).inv_freq
        )
    return out


@uses("model", "layer", "factor", "beta_fast", "beta_slow")
def divisors_figure(v: Values, lang: str) -> go.Figure:
    curves = _divisors(v["model"], v["layer"], v["factor"], v["beta_fast"], v["beta_slow"])
    model = load_presets()[v["model"]].name
    title = t("extension.fig_divisors", lang, model=model, factor=v["factor"])
    return figs.divisors(curves, factor=v["factor"], title=title, lang=lang)


@memo
def _slowest_turns(model: str, layer: str, factor: int, beta_fast: int, beta_slow: int) -> tuple[float, float, int]:
    r"""Turns of the slowest pair within L as trained, and within s·L under YaRN at s; and L."""
    config = model_config(model, layer)
    length, plain = training_length(config), without_scaling(config)
    scaling = ROPE_REGISTRY["yarn"].scaling(
        factor=factor, original_max_position_embeddings=length, beta_fast=beta_fast, beta_slow=beta_slow
    )
    before = rope_frequencies_from_config(plain).inv_freq
    after = rope_frequencies_from_config(plain | {"rope_scaling": scaling}).inv_freq
    trained = rotations_in_context(before, length)[-1]
    return float(trained), float(rotations_in_context(after, factor * length)[-1]), int(length)


@uses("model", "layer", "factor", "beta_fast", "beta_slow")
def check_errata_cycle(v: Values) -> Check:
    r"""YaRN's slowest pair turns as far within s·L as it did within L (less than one turn): no full cycle.

    The claim is about a pair YaRN interpolates, one under α = beta_slow turns in training. A model whose slowest pair
    already turns more (Gemma's sliding layers: base 10⁴ over 131,072 tokens) has none: the check then measures and
    says that instead."""
    trained, stretched, length = _slowest_turns(v["model"], v["layer"], v["factor"], v["beta_fast"], v["beta_slow"])
    fmt = {"trained": f"{trained:.3f}", "stretched": f"{stretched:.3f}", "s": v["factor"], "length": length}
    if trained >= v["beta_slow"]:  # no pair is interpolated: the slowest turns at least α times within L
        fmt = {"trained": f"{trained:.3f}", "length": length, "alpha": v["beta_slow"]}
        return Check("extension.check_errata_none", max(0.0, v["beta_slow"] - trained), tolerance=0.0, fmt=fmt)
    return Check("extension.check_errata_cycle", abs(stretched - trained), tolerance=1e-9, fmt=fmt)


@uses("model", "layer", "factor")
def check_base_change(v: Values) -> Check:
    r"""NTK-aware's divisors from the core's frequencies equal :math:`s^{2i/(d-2)}`: 1 for pair 0, s for the last."""
    measured = _divisors(v["model"], v["layer"], v["factor"], 32, 1)["ntk"]
    closed = ntk_divisors(2 * measured.shape[0], factor=v["factor"])
    fmt = {"factor": v["factor"], "first": f"{measured[0]:.6g}", "last": f"{measured[-1]:.6g}"}
    return Check("extension.check_base_change", float(np.max(np.abs(measured / closed - 1.0))), fmt=fmt)


# --- 3. entropy and the temperature --------------------------------------------------------------------------------


@memo
def _entropy():
    stored = stored_curves(TABLE_SETTINGS)  # the core's, computed once and stored (:mod:`.entropy_table`)
    return stored or entropy_by_length(ENTROPY_LENGTHS, training_length=ENTROPY_LENGTH, queries=FIGURE_QUERIES)


@memo
def entropy_changes(factor: int, *, seed: int = 0) -> dict[str, float]:
    r"""Curve → mean entropy change from n = L to n = s·L over :data:`CHECK_QUERIES` queries drawn with ``seed``."""
    c = entropy_by_length(
        [ENTROPY_LENGTH, factor * ENTROPY_LENGTH], training_length=ENTROPY_LENGTH, queries=CHECK_QUERIES, seed=seed
    )
    return {name: float(curve[1] - curve[0]) for name, curve in c._asdict().items()}


@uses("factor")
def entropy_figure(v: Values, lang: str) -> go.Figure:
    curves = _entropy()._asdict()
    current = v["factor"] * ENTROPY_LENGTH
    title = t("extension.fig_entropy", lang, length=ENTROPY_LENGTH, factor=v["factor"])
    return figs.entropy(
        ENTROPY_LENGTHS, curves, training_length=ENTROPY_LENGTH, current=current, title=title, lang=lang
    )


@uses("factor")
def check_entropy(v: Values) -> Check:
    r"""From n = L to s·L the plain entropy rises; Su's log-n factor keeps at most half of that rise, in the mean over
    :data:`CHECK_QUERIES` queries (not the figure's one draw of 16): its expected share is below 0.1 at every s.
    The means are the core's, computed once for every s and stored (:mod:`.entropy_table`): a move reads them."""
    rise = stored_changes(v["factor"], TABLE_SETTINGS) or entropy_changes(v["factor"])
    fmt = {"factor": v["factor"], "queries": CHECK_QUERIES, **{name: f"{value:+.2f}" for name, value in rise.items()}}
    return Check("extension.check_entropy", abs(rise["log_n"]) / rise["plain"], tolerance=0.5, fmt=fmt)


@uses("factor")
def check_uniform(v: Values) -> Check:
    r"""The entropy the figure measures gives exactly ln n for uniform attention over n = s·L keys."""
    n = v["factor"] * ENTROPY_LENGTH
    residual = abs(float(attention_entropy(np.zeros(n))) - math.log(n))
    return Check("extension.check_uniform", residual, tolerance=1e-12, fmt={"n": f"{n:,}", "ln": f"{math.log(n):.4f}"})


# --- 4. ReRoPE -----------------------------------------------------------------------------------------------------


@uses("model", "factor", "stretch", "window")
def rerope_figure(v: Values, lang: str) -> go.Figure:
    length = training_length(load_presets()[v["model"]].config())
    target = v["stretch"] * length
    distances = np.geomspace(1.0, target, DISTANCE_POINTS)  # log axes: w, L and T all visible
    curves = {
        "plain": distances,
        "linear": distances / v["factor"],
        "rerope": -rerope_relative_positions(-distances, window=v["window"]),  # a past key: r = −distance
    }
    title = t("extension.fig_seen", lang, window=v["window"], factor=v["factor"], target=f"{target:,}")
    return figs.seen_distance(distances, curves, length=length, title=title, lang=lang)


@uses("model", "layer", "stretch", "window")
def check_rerope_angles(v: Values) -> Check:
    r"""ReRoPE at T reaches, per pair, only the angles :math:`r\theta_i` with r ≤ w: all inside the training arc."""
    config = model_config(v["model"], v["layer"])
    before, length = rope_frequencies_from_config(without_scaling(config)).inv_freq, training_length(config)
    target = v["stretch"] * length
    reach = min(target, v["window"] + 1)  # relative positions 0 … w: an arc like w + 1 tokens of plain RoPE
    residual = float(np.max(unseen_angles(before, length, before, reach)))
    fmt = {"window": v["window"], "target": f"{target:,}", "length": f"{length:,}"}
    return Check("extension.check_rerope_angles", residual, tolerance=1e-9, fmt=fmt)


@memo
def _two_passes() -> float:
    r"""max |two-pass ReRoPE − one rotation per clipped distance| on a small causal example."""
    q, k = np.random.default_rng(7).standard_normal((2, RE_TOKENS, RE_DIM))
    inv_freq = rope_inv_freq(RE_DIM)
    two = rerope_scores(q, k, inv_freq, window=RE_WINDOW, scale=1.0)
    i, j = np.indices((RE_TOKENS, RE_TOKENS))
    clipped = rerope_relative_positions(j - i, window=RE_WINDOW)
    direct = np.full((RE_TOKENS, RE_TOKENS), -np.inf)
    zeros = np.zeros(RE_TOKENS)
    for r in range(-RE_WINDOW, 1):  # q_iᵀ R_r k_j, computed once per relative position r the clip leaves
        at_r = rope_scores(q, k, inv_freq, query_positions=zeros, key_positions=zeros + r, scale=1.0)
        chosen = (clipped == r) & (j <= i)
        direct[chosen] = at_r[chosen]
    causal = j <= i
    return float(np.max(np.abs(two[causal] - direct[causal])))


@uses()
def check_rerope_passes(v: Values) -> Check:
    r"""The two-pass ReRoPE logits equal :math:`q_i^\top R_{\operatorname{clip}(j-i)} k_j` computed directly."""
    fmt = {"tokens": RE_TOKENS, "window": RE_WINDOW}
    return Check("extension.check_rerope_passes", _two_passes(), tolerance=1e-9, fmt=fmt)


FIGURES = {"divisors": divisors_figure, "entropy": entropy_figure, "seen": rerope_figure}
SWEEPS = {"divisors": "factor", "entropy": "factor", "seen": "window"}
CHECKS = {
    "base_change": check_base_change,
    "entropy": check_entropy,
    "uniform": check_uniform,
    "rerope_angles": check_rerope_angles,
    "rerope_passes": check_rerope_passes,
    "errata_cycle": check_errata_cycle,
}
#: What the explain panel adds: formulas, the core functions computing them, the sources, the checks it lists.
LATEX = (  # one short formula a line: KaTeX clips a display formula wider than a phone, it does not wrap it
    r"\beta = b^{2/d}, \qquad \theta_i = \beta^{-i}",
    r"\theta_i / \theta'_i = s^{2i/(d-2)} \quad \text{(NTK-aware)}",
    r"H = -\sum_j p_j \ln p_j",
    r"\kappa_{\text{Su}} = \frac{\ln n}{\ln L}, \qquad \kappa_{\text{YaRN}} = (0.1\ln s + 1)^2",
    r"q_i^\top R_{\operatorname{clip}(j-i,\,-w,\,w)}\, k_j \quad \text{(ReRoPE)}",
)
SOURCES = (ntk_divisors, frequency_divisors, attention_entropy, entropy_by_length, rerope_scores)
PAPER = (
    "; Su 2023, 「Transformer升级之路：10、RoPE是一种β进制编码」 and 「12、无限外推的ReRoPE？」 (kexue.fm); "
    "Su 2021, 「从熵不变性看Attention的Scale操作」 (kexue.fm)"
)
