r"""Page 10 — position at length: what today's models do about long contexts beyond the frequencies.

Four sections, each a :class:`~.base.Check` on numbers from :mod:`posenc_core`: the temperatures that grow with the
context (Llama 4's query scale read from its preset, YaRN's, Su's log n, SSMax) and what they do to attention entropy
(:func:`~posenc_core.length_temperatures`, :func:`~posenc_core.mean_entropy`); the smallest RoPE base for a context
length (Men et al. 2024: :func:`~posenc_core.rope_base_lower_bound`) beside the bases real models chose; positions
in a StreamingLLM cache and gpt-oss's sink logit (:mod:`.cache`); and position from data — FoX, CoPE,
stick-breaking — beside ALiBi and T5 (:mod:`.gates`).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    length_temperatures,
    log_length_scale,
    mean_entropy,
    model_layers,
    rope_base_lower_bound,
    rope_decay_all_ones,
    rope_inv_freq,
    rope_similarity_reach,
    ssmax_scale,
)

from ...i18n import t
from ...lesson import Check, Explain, PageEntry, Values, View, uses
from ...memo import memo
from ...presets import PRESET_IDS, load_presets
from ...state import ChoiceParam
from . import cache, gates
from . import figures as figs

#: The model whose query temperature the page draws: Llama 4 Scout, read from its preset (its NoPE layers).
TEMPERATURE_MODEL = "llama4_scout"
#: n = 1 … 2^20 keys, log-spaced, for the multipliers.
MULTIPLIER_LENGTHS = np.unique(np.geomspace(1, 2**20, 240).astype(np.int64))
#: Queries of the toy head (one draw, seed 0): its curves are the same draw for every scheme.
ENTROPY_QUERIES = 16
#: The bases the page tries, 40 per decade from 10² to 10⁹, and the context lengths it bounds (2^8 … 2^16).
BOUND_BASES = np.geomspace(1e2, 1e9, 281)
BOUND_LENGTHS = 2 ** np.arange(8, 17)
#: Men et al. 2024's table at d = 128, 1K … 64K, and Su's finer search of the same (kexue.fm/archives/10122).
PUBLISHED_LENGTHS = 1024 * 2 ** np.arange(7)
PUBLISHED = {
    "paper": np.array([4.3e3, 1.6e4, 2.7e4, 8.4e4, 3.1e5, 6.4e5, 2.1e6]),
    "su": np.array([4.3e3, 1.2e4, 2.7e4, 8.4e4, 2.3e5, 6.3e5, 2.1e6]),
}
PUBLISHED_HEAD_DIM = 128
#: The bases the issue names, each a preset's: Llama 2 (10⁴), Llama 3.1 (5·10⁵), Qwen2.5 (10⁶), Qwen3-VL (5·10⁶).
CHOSEN_BASES = ("llama2_7b", "llama3_1_8b", "qwen2_5_7b", "qwen3_vl_8b")
#: Points per curve on the B_m figure: each the lowest B in its bin of distances, so no dip below 0 is lost.
SIMILARITY_BINS = 800

PARAMS = (
    ChoiceParam("ssmax_s", 0.15, options=(0.1, 0.125, 0.15, 0.2, 0.25, 0.3), widget="select_slider"),
    ChoiceParam("head_dim", 128, options=(64, 128)),
    ChoiceParam("context", 32768, options=tuple(int(n) for n in 2 ** np.arange(10, 17)), widget="select_slider"),
    *cache.PARAMS,
    *gates.PARAMS,
)


# --- 1. temperatures against length --------------------------------------------------------------------------------


@memo
def llama4_temperature():
    r"""Llama 4 Scout's query temperature, as :func:`~posenc_core.model_layers` reads it from the preset."""
    layers = model_layers(load_presets()[TEMPERATURE_MODEL].config())
    return next(layer.temperature for layer in layers if layer.temperature is not None)


def _training_length() -> int:
    return int(llama4_temperature().length)  # floor_scale: 8 192


@memo
def _multipliers(s: float) -> dict[str, np.ndarray]:
    curves = length_temperatures(
        MULTIPLIER_LENGTHS, training_length=_training_length(), temperature=llama4_temperature(), ssmax_s=s
    )
    return curves._asdict()


def _entropy_lengths() -> np.ndarray:
    length = _training_length()
    return np.unique(np.geomspace(length // 16, 16 * length, 26).astype(np.int64))


@memo
def _fixed_entropy() -> dict[str, np.ndarray]:
    r"""The toy head's entropy, plain and under the three schemes that do not depend on s."""
    n = _entropy_lengths()
    curves = length_temperatures(n, training_length=_training_length(), temperature=llama4_temperature(), ssmax_s=0.0)
    out = {"plain": mean_entropy(n, np.ones(n.shape[0]), queries=ENTROPY_QUERIES)}
    for name in ("llama4", "yarn", "log_n"):
        out[name] = mean_entropy(n, getattr(curves, name), queries=ENTROPY_QUERIES)
    return out


@memo
def _entropy(s: float) -> dict[str, np.ndarray]:
    n = _entropy_lengths()
    return _fixed_entropy() | {"ssmax": mean_entropy(n, ssmax_scale(n, s=s), queries=ENTROPY_QUERIES)}


@uses("ssmax_s")
def multipliers_figure(v: Values, lang: str) -> go.Figure:
    title = t("length.fig_multipliers", lang, s=v["ssmax_s"])
    return figs.multipliers(
        MULTIPLIER_LENGTHS, _multipliers(v["ssmax_s"]), training_length=_training_length(), title=title, lang=lang
    )


@uses("ssmax_s")
def entropy_figure(v: Values, lang: str) -> go.Figure:
    title = t("length.fig_entropy", lang, s=v["ssmax_s"], queries=ENTROPY_QUERIES)
    return figs.entropy(
        _entropy_lengths(), _entropy(v["ssmax_s"]), training_length=_training_length(), title=title, lang=lang
    )


@uses()
def check_llama4_floor(v: Values) -> Check:
    r"""Llama 4's factor is exactly 1 for every query before position L − 1, then 1 + β ln 2."""
    length = _training_length()
    below = length_temperatures(
        np.arange(1, length), training_length=length, temperature=llama4_temperature(), ssmax_s=0.0
    ).llama4
    at = length_temperatures(
        np.array([length, 2**20]), training_length=length, temperature=llama4_temperature(), ssmax_s=0.0
    ).llama4
    fmt = {"length": f"{length:,}", "beta": llama4_temperature().beta, "at": f"{at[0]:.4f}", "far": f"{at[1]:.4f}"}
    return Check("length.check_llama4", float(np.max(np.abs(below - 1.0))), tolerance=0.0, fmt=fmt)


@uses()
def check_ssmax_su(v: Values) -> Check:
    r"""SSMax with s = 1/ln L is Su's log_L n at every n of the figure."""
    length = _training_length()
    s = 1.0 / math.log(length)
    gap = ssmax_scale(MULTIPLIER_LENGTHS, s=s) - log_length_scale(MULTIPLIER_LENGTHS, training_length=length)
    fmt = {"length": f"{length:,}", "s": f"{s:.4f}"}
    return Check("length.check_ssmax_su", float(np.max(np.abs(gap))), tolerance=1e-12, fmt=fmt)


@uses("ssmax_s")
def check_sharpen(v: Values) -> Check:
    r"""At n = 16·L every multiplier is above 1, and each lowers the toy head's entropy below the plain head's: the
    entropy of softmax(κx) falls as κ grows (its derivative is −κ·Var_p(x)), so this holds for every draw."""
    curves = _entropy(v["ssmax_s"])
    last = {name: float(values[-1]) for name, values in curves.items()}
    drop = min(last["plain"] - value for name, value in last.items() if name != "plain")
    fmt = {"n": f"{int(_entropy_lengths()[-1]):,}", **{name: f"{value:.2f}" for name, value in last.items()}}
    return Check("length.check_sharpen", drop, expect_zero=False, tolerance=0.0, fmt=fmt)


# --- 2. the smallest base for a context length ---------------------------------------------------------------------


def _base(base: float) -> str:
    r"""A base to three significant digits, written out with thousands separators: 10,000, not 1e+04."""
    return f"{float(f'{base:.3g}'):,.0f}"


@memo
def _bounds(head_dim: int) -> np.ndarray:
    return rope_base_lower_bound(BOUND_LENGTHS, head_dim=head_dim, bases=BOUND_BASES)


def bound_at(head_dim: int, context: int) -> float:
    r"""Our smallest grid base for ``context`` (one of :data:`BOUND_LENGTHS`)."""
    return float(_bounds(head_dim)[list(BOUND_LENGTHS).index(context)])


@memo
def model_points(head_dim: int) -> tuple[tuple[str, int, float, bool, int], ...]:
    r"""(name, context, base, holds, still) per preset whose layer with the largest base has this head size (its
    rotating dimensions): the context is its ``max_position_embeddings`` and "holds" says its own frequencies (scaled,
    partial) keep B ≥ 0 up to it.

    ``still`` is the number of dimensions of the same query–key score that never turn: multi-head latent attention
    (DeepSeek-V3: ``qk_rope_head_dim`` = 64 rotate, ``qk_nope_head_dim`` = 128 do not) adds them to each head's score,
    and they count as pairs at θ = 0 in B (Su's argument: 64 such pairs against 32 turning keep B ≥ 32 at any base).
    A config with ``qk_rope_head_dim`` but no ``qk_nope_head_dim`` is left out: its criterion cannot be computed."""
    out = []
    for model in PRESET_IDS:
        preset = load_presets()[model]
        config = preset.config()
        latent = "qk_rope_head_dim" in config
        if latent and "qk_nope_head_dim" not in config:
            continue
        still = int(config["qk_nope_head_dim"]) if latent else 0
        rotating = [layer for layer in model_layers(config) if layer.rotates]
        if not rotating:
            continue
        layer = max(rotating, key=lambda layer: layer.base)
        context = int(config["max_position_embeddings"])
        if layer.head_dim != head_dim:
            continue
        inv = layer.frequencies.inv_freq
        reach = rope_similarity_reach(inv, max_distance=context - 1, still_pairs=still // 2)
        out.append((preset.name, context, float(layer.base), reach >= context, still))
    return tuple(out)


@uses("head_dim")
def bounds_figure(v: Values, lang: str) -> go.Figure:
    shown = v["head_dim"] == PUBLISHED_HEAD_DIM  # the tables are for d = 128: empty markers otherwise
    published = {
        key: (PUBLISHED_LENGTHS[: len(values) * shown], values[: len(values) * shown])
        for key, values in PUBLISHED.items()
    }
    title = t("length.fig_bounds", lang, head_dim=v["head_dim"])
    return figs.bounds(
        BOUND_LENGTHS, _bounds(v["head_dim"]), published, model_points(v["head_dim"]), title=title, lang=lang
    )


@memo
def _similarity(head_dim: int, context: int) -> list[tuple[float, np.ndarray, np.ndarray]]:
    r"""(base, bin starts, lowest B per bin) for the chosen bases and our bound at ``context``."""
    bases = [float(load_presets()[m].config()["rope_theta"]) for m in CHOSEN_BASES]
    bases = sorted({*bases, bound_at(head_dim, context)})
    starts = np.unique(np.linspace(0, context, SIMILARITY_BINS, endpoint=False).astype(np.int64))
    out = []
    for base in bases:
        values = rope_decay_all_ones(np.arange(context), rope_inv_freq(head_dim, base=base))
        out.append((base, starts, np.minimum.reduceat(values, starts)))
    return out


@uses("head_dim", "context")
def similarity_figure(v: Values, lang: str) -> go.Figure:
    bound = bound_at(v["head_dim"], v["context"])
    curves = [
        (t("length.base_bound" if base == bound else "length.base_label", lang, base=_base(base)), values)
        for base, _, values in _similarity(v["head_dim"], v["context"])
    ]
    starts = _similarity(v["head_dim"], v["context"])[0][1]
    title = t("length.fig_similarity", lang, head_dim=v["head_dim"], context=f"{v['context']:,}")
    return figs.similarity(starts, curves, title=title, lang=lang)


@uses("head_dim", "context")
def check_bound(v: Values) -> Check:
    r"""At our bound b*, B_m ≥ 0 for every m < L (the residual is how far below 0 it goes, 0 if nowhere)."""
    base = bound_at(v["head_dim"], v["context"])
    values = rope_decay_all_ones(np.arange(v["context"]), rope_inv_freq(v["head_dim"], base=base))
    fmt = {"base": _base(base), "context": f"{v['context']:,}", "low": f"{values.min():.3f}"}
    return Check("length.check_bound", max(0.0, -float(values.min())), tolerance=0.0, fmt=fmt)


@uses("head_dim", "context")
def check_below(v: Values) -> Check:
    r"""One grid step below b*, B turns negative before L: that base is too small."""
    base = bound_at(v["head_dim"], v["context"])
    below = float(BOUND_BASES[np.searchsorted(BOUND_BASES, base) - 1])
    inv = rope_inv_freq(v["head_dim"], base=below)
    reach = rope_similarity_reach(inv, max_distance=v["context"] - 1)
    fmt = {"below": _base(below), "reach": f"{reach:,}", "context": f"{v['context']:,}"}
    return Check("length.check_below", float(v["context"] - reach), expect_zero=False, tolerance=0.0, fmt=fmt)


#: A preset whose global layers rotate only part of the head (p-RoPE), for the last check of the section.
PARTIAL_MODEL = "gemma4_26b"


@uses()
def check_pairs_at_zero(v: Values) -> Check:
    r"""Gemma 4's global layers turn a quarter of their pairs; with the other pairs at θ = 0, B_m never drops below 0
    over the model's whole context (the residual: how many positions short of the context the reach falls)."""
    preset = load_presets()[PARTIAL_MODEL]
    config = preset.config()
    layer = max((layer for layer in model_layers(config) if layer.rotates), key=lambda layer: layer.base)
    inv = layer.frequencies.inv_freq
    context = int(config["max_position_embeddings"])
    reach = rope_similarity_reach(inv, max_distance=context - 1)
    fmt = {
        "model": preset.name,
        "turning": int(np.count_nonzero(inv)),
        "pairs": int(inv.shape[0]),
        "context": f"{context:,}",
    }
    return Check("length.check_gemma4", float(context - reach), tolerance=0.0, fmt=fmt)


VIEW = View(
    page_id="length",
    params=PARAMS,
    figures={
        "multipliers": multipliers_figure,
        "entropy": entropy_figure,
        "similarity": similarity_figure,
        "bounds": bounds_figure,
        **cache.FIGURES,
        **gates.FIGURES,
    },
    sweeps={
        "multipliers": "ssmax_s",
        "entropy": "ssmax_s",
        "similarity": "context",
        "bounds": "head_dim",
        **cache.SWEEPS,
        **gates.SWEEPS,
    },
    checks={
        "llama4": check_llama4_floor,
        "ssmax_su": check_ssmax_su,
        "sharpen": check_sharpen,
        "bound": check_bound,
        "below": check_below,
        "gemma4": check_pairs_at_zero,
        **cache.CHECKS,
        **gates.CHECKS,
    },
    explain=Explain(
        latex=(
            r"\tau(p) = 1 + \beta \ln\!\big(1 + \lfloor (p + 1)/L_f \rfloor\big)",
            r"\mathrm{SSMax}(z)_j = \frac{n^{s z_j}}{\sum_k n^{s z_k}} = \operatorname{softmax}(s \ln n \cdot z)_j",
            r"B_{m,\theta} = \sum_{i=0}^{d/2-1} \cos(m\,\theta_i) \ge 0, \quad m = 0, \dots, L - 1",
            r"w_{ij} = \frac{e^{\ell_{ij}}}{e^{s_h} + \sum_k e^{\ell_{ik}}}",
            r"p_{ij} = \sum_{k=j}^{i} \sigma(q_i^\top k_k)",
            r"A_{ij} = \beta_{ij} \prod_{j<k<i} (1 - \beta_{ik}), \quad \beta_{ij} = \sigma(z_{ij})",
        ),
        sources=(
            length_temperatures,
            rope_base_lower_bound,
            *cache.SOURCES,
            *gates.SOURCES,
        ),
        paper=(
            "Men et al. 2024, *Base of RoPE Bounds Context Length*, arXiv:2405.14591; Xiao et al. 2023, "
            "*Efficient Streaming Language Models with Attention Sinks*, arXiv:2309.17453; Nakanishi 2025, "
            "*Scalable-Softmax Is Superior for Attention*, arXiv:2501.19399"
        ),
    ),
)

PAGE = PageEntry("pages/10_Position_at_length.py", VIEW, preview="multipliers")
