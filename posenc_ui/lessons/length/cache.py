r"""Page 10 (position at length): a StreamingLLM cache step by step, and gpt-oss's sink logit. Recipes only:
:mod:`.view` puts them into the page's view."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import attention_weights, causal_mask, random_logits, sink_softmax, streaming_cache

from ...i18n import t
from ...lesson import Check, Values, uses
from ...memo import memo
from ...state import IntParam
from ..alibi import figures as grid
from . import figures as figs

#: The sink figure's gap between its two panels, as a fraction of its width: it sits in a half-width column at 1280 px,
#: where the alibi grid's 0.08 let the left panel's "15" key tick crowd the right panel's query ticks.
SINK_GAP = 0.16
#: The sink figure's one fixed draw of causal logits (standard normal, seed 0), small enough to read cell by cell.
SINK_LENGTH = 16

PARAMS = (
    IntParam("sinks", 4, lo=0, hi=8),
    IntParam("window", 8, lo=2, hi=32, step=2),
    IntParam("stream", 48, lo=16, hi=96, step=8),
    IntParam("sink", 2, lo=-4, hi=8),
)


@memo
def _cache(stream: int, sinks: int, window: int):
    return streaming_cache(stream, sink_tokens=sinks, window=window)


def _cache_grid(stream: int, sinks: int, window: int) -> np.ndarray:
    r"""(T, T): row t, column = text position, value = the cache position that token holds at step t (nan if none)."""
    c = _cache(stream, sinks, window)
    out = np.full((stream, stream), np.nan)
    steps, slots = np.nonzero(c.tokens >= 0)
    out[steps, c.tokens[steps, slots]] = c.positions[steps, slots]
    return out


@uses("stream", "sinks", "window")
def cache_figure(v: Values, lang: str) -> go.Figure:
    title = t("length.fig_cache", lang, sinks=v["sinks"], window=v["window"])
    return figs.cache(_cache_grid(v["stream"], v["sinks"], v["window"]), title=title, lang=lang)


@uses("stream", "sinks", "window")
def check_cache(v: Values) -> Check:
    r"""Inside the recent window, the distance RoPE sees from the newest token to each key (their cache positions'
    difference) equals their distance in the text; only the sinks are brought closer. The residual is the largest
    mismatch over every step, so a cache that kept a gap inside its window, or renumbered it, fails. Shown beside it:
    the largest distance RoPE sees (sinks + window − 1) and the text distance the stream reaches (T − 1)."""
    c = _cache(v["stream"], v["sinks"], v["window"])
    size = v["sinks"] + v["window"]
    steps = np.arange(v["stream"])
    newest = np.minimum(steps, size - 1)  # the query's slot: the last one filled
    seen = c.positions[steps, newest][:, None] - c.positions  # distance RoPE sees, query to each slot
    text = c.tokens[steps, newest][:, None] - c.tokens  # the same pair's distance in the text
    window = (c.tokens >= 0) & (np.arange(size)[None, :] >= v["sinks"])
    residual = float(np.max(np.abs(seen - text)[window]))
    fmt = {"largest": int(seen[c.tokens >= 0].max()), "size": size, "text": int(text[c.tokens >= 0].max())}
    return Check("length.check_cache", residual, tolerance=0.0, fmt=fmt)


@memo
def _sink_weights(sink: int) -> tuple[np.ndarray, np.ndarray]:
    r"""(plain, with the sink): causal softmax of one fixed draw of logits, and the same rows with a sink logit."""
    logits = random_logits(SINK_LENGTH, seed=0)
    plain = attention_weights(logits, causal=True)
    mask = np.where(causal_mask(SINK_LENGTH), -np.inf, 0.0)  # the causal mask, added to the logits as gpt-oss does
    return plain, sink_softmax(logits + mask, float(sink))


@uses("sink")
def sink_weights_figure(v: Values, lang: str) -> go.Figure:
    plain, sunk = _sink_weights(v["sink"])
    shown = np.arange(SINK_LENGTH)
    masked = [np.where(causal_mask(SINK_LENGTH), np.nan, w) for w in (plain, sunk)]  # blank: keys after the query
    titles = [t("length.sums_plain", lang), t("length.sums_sink", lang)]
    return grid.panel_heatmaps(
        masked,
        titles,
        shown,
        title=t("length.fig_sink", lang, sink=v["sink"]),
        value_name=t("length.weight_name", lang),
        lang=lang,
        zmin=0.0,
        zmax=float(plain.max()),
        gap=SINK_GAP,
    )


@uses("sink")
def row_sums_figure(v: Values, lang: str) -> go.Figure:
    plain, sunk = _sink_weights(v["sink"])
    title = t("length.fig_row_sums", lang, sink=v["sink"])
    return figs.row_sums({"plain": plain.sum(-1), "sink": sunk.sum(-1)}, title=title, lang=lang)


@uses("sink")
def check_sink(v: Values) -> Check:
    r"""The sink only rescales each row: its weights are the plain weights times the row's sum, which is below 1."""
    plain, sunk = _sink_weights(v["sink"])
    sums = sunk.sum(-1)
    residual = float(np.max(np.abs(sunk - plain * sums[:, None])))
    fmt = {"low": f"{sums.min():.3f}", "high": f"{sums.max():.3f}"}
    return Check("length.check_sink", residual, tolerance=1e-12, fmt=fmt)


FIGURES = {"cache": cache_figure, "sink_weights": sink_weights_figure, "row_sums": row_sums_figure}
SWEEPS = {"cache": "window", "sink_weights": "sink", "row_sums": "sink"}
CHECKS = {"cache": check_cache, "sink": check_sink}
SOURCES = (streaming_cache, sink_softmax)
