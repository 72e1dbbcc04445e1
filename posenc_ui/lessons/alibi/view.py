r"""Page 8 — ALiBi (Press, Smith & Lewis 2021, "Train Short, Test Long", arXiv:2108.12409).

No position vectors at all: head h adds :math:`-m_h (i - j)` to the logit of query i and key j. The page shows the
slopes for any head count (the geometric sequence and the rule for non-powers of two), the bias and its effect on
attention weights per head (built only for the heads shown), the distance at which each head's penalty reaches a
threshold, and — checked live — that the key-only form :math:`m_h j` of BLOOM and MPT gives the same causal weights.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    alibi_bias,
    alibi_closest_power_of_two,
    alibi_key_only_bias,
    alibi_receptive_field,
    alibi_slope_exponents,
    alibi_slopes,
    attention_weights,
    random_logits,
)

from ...figures import heatmap
from ...i18n import t
from ...lesson import Check, Explain, PageEntry, Values, View, uses
from ...memo import memo
from ...state import BoolParam, IntListParam, IntParam
from . import figures as figs

MAX_SHOWN_HEADS = 4

PARAMS = (
    IntParam("n_heads", 8, lo=1, hi=128),
    IntListParam("heads", (0, 3, 7), lo=0, hi=127, hi_from="n_heads", hi_offset=-1, max_items=MAX_SHOWN_HEADS),
    IntParam("length", 32, lo=4, hi=512, step=4),
    BoolParam("causal", True),
    IntParam("seed", 0, lo=0, hi=20),
    IntParam("threshold", 4, lo=1, hi=16),
)


def shown_heads(v: Values) -> tuple[int, ...]:
    r"""The picked heads, or head 0 when none is picked (an empty picker still shows something)."""
    return tuple(v["heads"]) or (0,)


def _sample(length: int, panels: int) -> np.ndarray:
    r"""Positions drawn in each of ``panels`` heatmaps, so that all of them together stay under the cell budget."""
    stride, _ = heatmap.strides(length, length, max_cells=heatmap.MAX_CELLS // panels)
    return np.arange(0, length, stride)


@memo
def _bias(n_heads: int, heads: tuple[int, ...], length: int, causal: bool) -> np.ndarray:
    return alibi_bias(n_heads, length, causal=causal, heads=list(heads))  # (shown, L, L)


@memo
def _logits(length: int, seed: int) -> np.ndarray:
    return random_logits(length, seed=seed)  # (L, L): the weights figure and the forms check draw the same matrix


@memo
def _weights(n_heads: int, heads: tuple[int, ...], length: int, causal: bool, seed: int) -> np.ndarray:
    r"""(1 + shown, L, L): softmax of one fixed random logit matrix, without a bias, then with each head's bias."""
    logits = _logits(length, seed)
    plain = attention_weights(logits, causal=causal)
    return np.concatenate([plain[None], attention_weights(logits, bias=_bias(n_heads, heads, length, causal))])


def _head_titles(n_heads: int, heads: tuple[int, ...], lang: str) -> list[str]:
    exponents = alibi_slope_exponents(n_heads)
    return [t("alibi.head_title", lang, h=h, slope=figs.exponent_label(exponents[h])) for h in heads]


@uses("n_heads")
def slopes_figure(v: Values, lang: str) -> go.Figure:
    n = v["n_heads"]
    return figs.slopes(alibi_slopes(n), alibi_slope_exponents(n), alibi_closest_power_of_two(n), lang=lang)


@uses("n_heads", "heads", "length", "causal")
def bias_figure(v: Values, lang: str) -> go.Figure:
    heads = shown_heads(v)
    bias = _bias(v["n_heads"], heads, v["length"], v["causal"])
    shown = _sample(v["length"], len(heads))
    panels = [figs.masked(b[np.ix_(shown, shown)]) for b in bias]
    mode = t("alibi.mode_causal" if v["causal"] else "alibi.mode_symmetric", lang)
    title = t("alibi.fig_bias", lang, mode=mode, length=v["length"])
    return figs.panel_heatmaps(
        panels,
        _head_titles(v["n_heads"], heads, lang),
        shown,
        title=title,
        value_name=t("alibi.bias_name", lang),
        lang=lang,
        zmin=float(min(np.nanmin(p) for p in panels)),
        zmax=0.0,
    )


@uses("n_heads", "heads", "length", "causal", "seed")
def weights_figure(v: Values, lang: str) -> go.Figure:
    heads = shown_heads(v)
    weights = _weights(v["n_heads"], heads, v["length"], v["causal"], v["seed"])
    shown = _sample(v["length"], len(weights))
    panels = [w[np.ix_(shown, shown)] for w in weights]
    titles = [t("alibi.no_bias", lang), *_head_titles(v["n_heads"], heads, lang)]
    return figs.panel_heatmaps(
        panels,
        titles,
        shown,
        title=t("alibi.fig_weights", lang, seed=v["seed"]),
        value_name=t("alibi.weight_name", lang),
        lang=lang,
        zmin=0.0,
        zmax=float(max(p.max() for p in panels)),
    )


@uses("n_heads", "heads", "length", "threshold")
def curves_figure(v: Values, lang: str) -> go.Figure:
    heads = shown_heads(v)
    slopes = alibi_slopes(v["n_heads"])[list(heads)]
    distances = np.arange(v["length"])
    curves = alibi_bias(v["n_heads"], v["length"], causal=True, heads=list(heads))[:, -1, ::-1]  # last query, by d
    fields = alibi_receptive_field(slopes, threshold=v["threshold"])
    return figs.bias_curves(distances, curves, heads, fields, v["threshold"], lang=lang)


@uses("n_heads", "heads", "length", "threshold")
def field_figure(v: Values, lang: str) -> go.Figure:
    fields = alibi_receptive_field(alibi_slopes(v["n_heads"]), threshold=v["threshold"])
    closest = alibi_closest_power_of_two(v["n_heads"])
    return figs.receptive_field(fields, closest, shown_heads(v), v["length"], v["threshold"], lang=lang)


@uses("n_heads", "heads", "length")
def forms_figure(v: Values, lang: str) -> go.Figure:
    head = shown_heads(v)[0]
    paper = alibi_bias(v["n_heads"], v["length"], causal=True, heads=[head])[0]
    key_only = alibi_key_only_bias(v["n_heads"], v["length"], heads=[head])[0]
    shown = _sample(v["length"], 3)
    past = np.isfinite(paper)
    gap = np.where(past, key_only - np.where(past, paper, 0.0), -np.inf)  # m_h·i: one value per row
    panels = [figs.masked(z[np.ix_(shown, shown)]) for z in (paper, key_only, gap)]
    titles = [t(f"alibi.form_{name}", lang) for name in ("paper", "key_only", "gap")]
    title = t("alibi.fig_forms", lang, head=head)
    return figs.panel_heatmaps(
        panels,
        titles,
        shown,
        title=title,
        value_name=t("alibi.bias_name", lang),
        lang=lang,
        shared_scale=False,
        columns=3,
    )


@uses("n_heads")
def check_slopes(v: Values) -> Check:
    n = v["n_heads"]
    slopes = alibi_slopes(n)
    residual = float(np.max(np.abs(slopes - 2.0 ** -alibi_slope_exponents(n)) / slopes))
    return Check("alibi.check_slopes", residual, tolerance=1e-12, fmt={"n_heads": n})


@uses("n_heads", "heads", "length", "seed")
def check_forms(v: Values) -> Check:
    heads = shown_heads(v)
    paper = _weights(v["n_heads"], heads, v["length"], True, v["seed"])[1:]  # what the causal weights figure draws
    logits = _logits(v["length"], v["seed"])
    key_only = attention_weights(logits, bias=alibi_key_only_bias(v["n_heads"], v["length"], heads=list(heads)))
    residual = float(np.max(np.abs(paper - key_only)))
    return Check("alibi.check_forms", residual, tolerance=1e-12, fmt={"heads": len(heads), "length": v["length"]})


VIEW = View(
    page_id="alibi",
    params=PARAMS,
    figures={
        "slopes": slopes_figure,
        "bias": bias_figure,
        "weights": weights_figure,
        "curves": curves_figure,
        "field": field_figure,
        "forms": forms_figure,
    },
    sweeps={
        "slopes": "n_heads",
        "bias": "length",
        "weights": "length",
        "curves": "threshold",
        "field": "threshold",
        "forms": "length",
    },
    checks={"slopes": check_slopes, "forms": check_forms},
    explain=Explain(
        latex=(
            r"\operatorname{softmax}\!\Big(\frac{q_i K^\top}{\sqrt d} - m_h\,[\,i - j\,]_{j \le i}\Big)",
            r"c = 2^{\lfloor \log_2 H \rfloor}",
            r"\begin{aligned} m_h &= 2^{-8(h+1)/c}, & h &< c \\ m_h &= 2^{-8(2(h-c)+1)/(2c)}, & h &\ge c \end{aligned}",
            r"-m_h(i - j) = m_h\,j - m_h\,i",
            r"\begin{aligned} &\operatorname{softmax}_j(\ell - m(i - j)) \\ ={} &\operatorname{softmax}_j(\ell + m\,j)"
            r"\end{aligned}",
            r"d_h = \tau / m_h",
        ),
        sources=(alibi_slopes, alibi_bias, alibi_key_only_bias, alibi_receptive_field),
        paper="Press, Smith & Lewis 2021, *Train Short, Test Long: Attention with Linear Biases*, arXiv:2108.12409, §3",
    ),
)

PAGE = PageEntry("pages/8_ALiBi.py", VIEW, preview="slopes")
