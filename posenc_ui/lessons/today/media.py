r"""Page 9 (position in today's models), two of its sections: multimodal RoPE and MLA's decoupled RoPE key.

M-RoPE: the (t, h, w) position ids of a text | image | video | text sequence (:func:`posenc_core.mrope_position_ids`),
which pair reads which axis in Qwen2-VL's and Qwen3-VL's layouts (the core's family registry holds both), and the
score along each axis (:func:`posenc_core.mrope_offset_scores`). MLA: the fold that RoPE blocks
(:func:`posenc_core.mla_fold_residuals`) and the cache per token of the DeepSeek-V3 preset
(:func:`posenc_core.mla_kv_cache`). Recipes only: :mod:`.view` puts them into the page's view.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    mla_fold_residuals,
    mla_kv_cache,
    mrope_axis_wavelengths,
    mrope_grid_scores,
    mrope_offset_scores,
    mrope_pair_axes,
    mrope_position_ids,
    rope_decay_all_ones,
    rope_inv_freq,
)
from posenc_core.rope_scaling.families import FAMILY_CONVENTIONS

from ...i18n import t
from ...lesson import Check, Values, uses
from ...memo import memo
from ...presets import load_presets
from ...state import ChoiceParam, IntParam
from . import figures as figs

#: The two M-RoPE layouts, as the core's family registry holds them (section, interleaved).
LAYOUTS = ("qwen2_vl_text", "qwen3_vl_text")
#: One head for both layouts, so that only the layout differs: 128 dimensions (both families' head) and base 10⁶
#: (transformers' Qwen2VLTextConfig default; Qwen3-VL 8B ships 5·10⁶).
MROPE_HEAD, MROPE_BASE = 128, 1e6
TEXT_TOKENS = 3  # text before and after the image and the video
MLA_MODEL = "deepseek_v3"
MLA_DIMS = {"latent_dim": 8, "head_dim": 8, "rope_dim": 4, "base": 10000.0}  # a toy head: the fold fits in a second
FOLD_GAP = 0.1  # the line between "exact" and "O(1)": measured ≥ 0.285 over every length and seed (L = 16, seed 12)

PARAMS = (
    IntParam("image_rows", 3, lo=1, hi=8),
    IntParam("image_cols", 4, lo=1, hi=8),
    IntParam("frames", 3, lo=1, hi=6),
    ChoiceParam("layout", "qwen2_vl_text", options=LAYOUTS, labels="today.layout", widget="segmented"),
    IntParam("span", 2048, lo=64, hi=16384, step=64),
    IntParam("dt", 0, lo=0, hi=256),
    IntParam("extent", 32, lo=4, hi=128, step=4),
    IntParam("mla_length", 32, lo=16, hi=64, step=8),
    IntParam("mla_seed", 0, lo=0, hi=99),
)


def tokens(value: float) -> str:
    r"""A wavelength in tokens: three significant digits below 1,000, whole tokens with separators above."""
    return f"{value:,.3g}" if value < 1000 else f"{value:,.0f}"


def _layout(name: str) -> tuple[tuple[int, int, int], bool]:
    section, interleaved = FAMILY_CONVENTIONS[name].mrope
    return tuple(section), bool(interleaved)


# --- multimodal RoPE ------------------------------------------------------------------------------------------------


def _segments(v: Values) -> list[tuple[str, object]]:
    grid = (v["image_rows"], v["image_cols"])
    return [
        ("text", TEXT_TOKENS),
        ("image", grid),
        ("video", (v["frames"], *grid)),
        ("text", TEXT_TOKENS),
    ]


@uses("image_rows", "image_cols", "frames")
def ids_figure(v: Values, lang: str) -> go.Figure:
    segments = _segments(v)
    ids = mrope_position_ids(segments)
    bounds, start = [], 0
    for kind, size in segments:
        count = size if kind == "text" else int(np.prod(size))
        bounds.append((start, start + count))
        start += count
    title = t("today.fig_ids", lang, rows=v["image_rows"], cols=v["image_cols"], frames=v["frames"])
    return figs.position_ids(ids, [kind for kind, _ in segments], bounds, title=title, lang=lang)


@uses()
def axes_figure(v: Values, lang: str) -> go.Figure:
    rows = np.stack([mrope_pair_axes(_layout(name)[0], interleaved=_layout(name)[1]) for name in LAYOUTS])
    names = [t(f"today.layout_row.{name}", lang) for name in LAYOUTS]
    return figs.pair_axes(rows, names, title=t("today.fig_axes", lang), lang=lang)


def _offsets(span: int) -> np.ndarray:
    return np.unique(np.linspace(0, span, 513).astype(np.int64))


@uses("layout", "span")
def scores_figure(v: Values, lang: str) -> go.Figure:
    section, interleaved = _layout(v["layout"])
    offsets = _offsets(v["span"])
    inv_freq = rope_inv_freq(MROPE_HEAD, base=MROPE_BASE)
    curves = np.stack(
        [
            mrope_offset_scores(
                np.eye(3, dtype=np.int64)[:, [axis]] * offsets, inv_freq, section, interleaved=interleaved
            )
            for axis in range(3)
        ]
    )
    title = t("today.fig_scores", lang, layout=t(f"today.layout.{v['layout']}", lang), base=f"{MROPE_BASE:,.0f}")
    return figs.axis_scores(offsets, curves, title=title, lang=lang)


@uses("layout", "dt", "extent")
def grid_figure(v: Values, lang: str) -> go.Figure:
    section, interleaved = _layout(v["layout"])
    steps = np.arange(-v["extent"], v["extent"] + 1)
    inv_freq = rope_inv_freq(MROPE_HEAD, base=MROPE_BASE)
    score = mrope_grid_scores(v["dt"], steps, steps, inv_freq, section, interleaved=interleaved)  # rows Δh, cols Δw
    title = t("today.fig_grid", lang, layout=t(f"today.layout.{v['layout']}", lang), dt=v["dt"])
    return figs.score_grid(steps, score, title=title, lang=lang)


@uses()
def grid_words(v: Values, lang: str) -> dict[str, str]:
    r"""The all-ones score four patches away along h and along w, in each layout (Δt = 0)."""
    inv_freq = rope_inv_freq(MROPE_HEAD, base=MROPE_BASE)
    near = np.array([[0, 0], [4, 0], [0, 4]])  # (Δt, Δh, Δw) rows: 4 patches down, 4 patches right
    out = {}
    for name in LAYOUTS:
        section, interleaved = _layout(name)
        h, w = mrope_offset_scores(near, inv_freq, section, interleaved=interleaved)
        key = name.split("_")[0]
        out[f"{key}_h"], out[f"{key}_w"] = f"{h:.4f}", f"{w:.4f}"
    return out


@uses()
def axis_words(v: Values, lang: str) -> dict[str, str]:
    r"""Each layout's wavelength range for time, from the core: what VideoRoPE's argument is about."""
    inv_freq = rope_inv_freq(MROPE_HEAD, base=MROPE_BASE)
    out = {}
    for name in LAYOUTS:
        section, interleaved = _layout(name)
        table = mrope_axis_wavelengths(inv_freq, section, interleaved=interleaved)
        key = name.split("_")[0]
        out[f"{key}_t_low"], out[f"{key}_t_high"] = tokens(table[0, 0]), tokens(table[0, 1])
        out[f"{key}_w_low"], out[f"{key}_w_high"] = tokens(table[2, 0]), tokens(table[2, 1])
    return out


@uses("span")
def check_text(v: Values) -> Check:
    r"""Text has t = h = w: equal offsets on the three axes give plain RoPE's all-ones curve, in both layouts."""
    offsets = _offsets(v["span"])
    inv_freq = rope_inv_freq(MROPE_HEAD, base=MROPE_BASE)
    plain = rope_decay_all_ones(offsets, inv_freq) / inv_freq.shape[0]
    gap = 0.0
    for name in LAYOUTS:
        section, interleaved = _layout(name)
        score = mrope_offset_scores(np.tile(offsets, (3, 1)), inv_freq, section, interleaved=interleaved)
        gap = max(gap, float(np.max(np.abs(score - plain))))
    return Check("today.check_text", gap, tolerance=1e-12, fmt={"span": f"{v['span']:,}"})


# --- MLA ------------------------------------------------------------------------------------------------------------


@memo
def _fold(length: int, seed: int):
    return mla_fold_residuals(length, seed=seed, **MLA_DIMS)


@uses("mla_length", "mla_seed")
def fold_figure(v: Values, lang: str) -> go.Figure:
    fold = _fold(v["mla_length"], v["mla_seed"])
    names = [t(f"today.fold.{name}", lang) for name in fold._fields]
    title = t("today.fig_fold", lang, length=v["mla_length"], seed=v["mla_seed"])
    return figs.fold_bars(list(fold), names, threshold=FOLD_GAP, title=title, lang=lang)


def _cache():
    return mla_kv_cache(load_presets()[MLA_MODEL].config())


@uses()
def cache_figure(v: Values, lang: str) -> go.Figure:
    cache = _cache()
    config = load_presets()[MLA_MODEL].config()
    heads, nope, rope = config["num_attention_heads"], config["qk_nope_head_dim"], config["qk_rope_head_dim"]
    labels = [t(f"today.cache.{name}", lang) for name in ("mla", "mha", "same_heads")]
    parts = (
        (t("today.part.latent", lang), (cache.latent, 0, 0), figs.BLUE),
        (t("today.part.rope_key", lang), (cache.rope_key, 0, 0), figs.VERMILION),
        (t("today.part.keys", lang), (0, cache.mha // 2, heads * (nope + rope)), figs.ORANGE),
        (t("today.part.values", lang), (0, cache.mha // 2, cache.mha_same_heads - heads * (nope + rope)), figs.GREEN),
    )
    title = t("today.fig_cache", lang, mla=f"{cache.mla:,}", mha=f"{cache.mha:,}", ratio=f"{cache.ratio:.1f}")
    totals = (cache.mla, cache.mha, cache.mha_same_heads)
    return figs.cache_bars(labels, parts, totals=[f"{n:,}" for n in totals], title=title, lang=lang)


@uses()
def cache_words(v: Values, lang: str) -> dict[str, str]:
    cache = _cache()
    config = load_presets()[MLA_MODEL].config()
    return {
        "latent": str(cache.latent),
        "rope": str(cache.rope_key),
        "mla": f"{cache.mla:,}",
        "heads": str(config["num_attention_heads"]),
        "head": str(config["qk_nope_head_dim"]),
        "mha": f"{cache.mha:,}",
        "ratio": f"{cache.ratio:.1f}",
        "same": f"{cache.mha_same_heads:,}",
        "same_ratio": f"{cache.mha_same_heads / cache.mla:.1f}",
    }


@uses("mla_length", "mla_seed")
def check_plain(v: Values) -> Check:
    return Check("today.check_plain", _fold(v["mla_length"], v["mla_seed"]).plain, tolerance=1e-12)


@uses("mla_length", "mla_seed")
def check_rotated(v: Values) -> Check:
    fold = _fold(v["mla_length"], v["mla_seed"])
    return Check(
        "today.check_rotated",
        fold.rotated,
        expect_zero=False,
        tolerance=FOLD_GAP,
        fmt={"value": f"{fold.rotated:.2f}", "bound": FOLD_GAP, "seed": v["mla_seed"]},
    )


@uses("mla_length", "mla_seed")
def check_decoupled(v: Values) -> Check:
    return Check("today.check_decoupled", _fold(v["mla_length"], v["mla_seed"]).decoupled, tolerance=1e-12)


@uses()
def check_cache(v: Values) -> Check:
    r"""DeepSeek-V2's Table 1 puts MLA's cache at about (9/2)·d_h values per token per layer (d_c = 4·d_h,
    d_h^R = d_h/2): the V3 preset's own numbers give exactly that."""
    cache = _cache()
    head = load_presets()[MLA_MODEL].config()["qk_nope_head_dim"]
    paper = 4.5 * head  # (9/2)·d_h
    return Check(
        "today.check_cache",
        abs(cache.mla - paper),
        tolerance=0.0,
        fmt={"mla": cache.mla, "head": head, "paper": f"{paper:g}"},
    )


FIGURES = {
    "ids": ids_figure,
    "axes": axes_figure,
    "scores": scores_figure,
    "grid": grid_figure,
    "fold": fold_figure,
    "cache": cache_figure,
}
SWEEPS = {"ids": "frames", "scores": "span", "grid": "dt", "fold": "mla_length"}
STATIC = {
    "axes": "two fixed layouts: it reads no parameter",
    "cache": "one preset's numbers: it reads no parameter",
}
CHECKS = {
    "text": check_text,
    "plain": check_plain,
    "rotated": check_rotated,
    "decoupled": check_decoupled,
    "cache": check_cache,
}
