r"""Section 3 of the real-model page, "Attention sinks": the share of attention on the first token by layer and head,
then StreamingLLM on the real model, a sliding window of keys with and without the first tokens kept, positions
counted inside the cache (page 10's layout), and the loss on the reader's text.

The first token's share comes from section 2's one forward (:func:`.distance.profile`); the streaming losses from
:func:`posenc_real.streaming.streaming_losses` (transformers' own forward and KV cache, one forward per token for
every cache at once), computed once per text for every window the page offers. A run is tens of seconds of forwards,
so the page offers a few windows, not a slider.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_real.attention import uniform_weight_per_key
from posenc_real.streaming import WINDOW_CHOICES, StreamingLoss, streaming_losses, whole_text_loss

from ...i18n import t
from ...lesson import Check, Values, reads, uses
from ...state import ChoiceParam
from . import figures_attention as figs
from .distance import profile
from .model import passage_ids, shared_model
from .shipped import model_result

#: The first tokens StreamingLLM keeps (the paper's four, Xiao et al. 2023, §3.2).
SINK_TOKENS = 4
#: The per-token losses are averaged over this many tokens in the figure (one token's loss jumps by nats).
SMOOTHING = 16

#: A run that never evicts is the plain forward: their losses agree to float32 rounding (nats).
WHOLE_TOLERANCE = 1e-3

PARAMS = (ChoiceParam("window", 32, options=WINDOW_CHOICES),)


#: Every StreamingLLM cache the section offers: each window, with the first tokens kept and without.
CACHES = tuple((sinks, window) for window in WINDOW_CHOICES for sinks in (SINK_TOKENS, 0))


@model_result()
def _streams(text: str) -> tuple[StreamingLoss, ...]:
    r"""Every cache of :data:`CACHES`, decoded side by side (one batch: about what two runs one by one cost), once per
    text: a move of the window then picks a result."""
    return streaming_losses(shared_model(), passage_ids(text), CACHES)


def _stream(text: str, window: int, sinks: int) -> StreamingLoss:
    return _streams(text)[CACHES.index((sinks, window))]


@model_result()
def _full(text: str) -> StreamingLoss:
    r"""The whole text in view: a cache that never evicts is the plain forward (``tests/real/test_attention.py``
    checks the two agree), so it is one forward."""
    return whole_text_loss(shared_model(), passage_ids(text))


@reads("text")
def warm(v: Values) -> None:
    r"""Every forward the section needs for this text, every window's included, run once into the app's memory."""
    profile(v["text"])
    _full(v["text"])
    _streams(v["text"])


def _later_layers(share: np.ndarray) -> int:
    r"""The first layer of the model's second half: the layers the section's sentence is about."""
    return share.shape[0] // 2


def _runs(text: str, window: int) -> tuple[StreamingLoss, StreamingLoss, StreamingLoss]:
    r"""(the window with the first tokens kept, the window alone, the whole text in view)."""
    return _stream(text, window, SINK_TOKENS), _stream(text, window, 0), _full(text)


@uses("text")
def first_token_figure(v: Values, lang: str) -> go.Figure:
    share = profile(v["text"]).first_token
    later = share[_later_layers(share) :]
    title = t(
        "real.fig_first_token",
        lang,
        start=_later_layers(share),
        last=share.shape[0] - 1,
        low=f"{np.percentile(later, 25):.0%}",
        high=f"{np.percentile(later, 75):.0%}",
    )
    return figs.first_token_share(share, title=title, lang=lang)


def _smoothed(run: StreamingLoss) -> np.ndarray:
    r"""The per-token loss averaged over the :data:`SMOOTHING` tokens ending at each position (fewer at the start)."""
    cumulative = np.concatenate([[0.0], np.cumsum(run.nll)])
    end = np.arange(1, run.nll.size + 1)
    start = np.maximum(end - SMOOTHING, 0)
    return (cumulative[end] - cumulative[start]) / (end - start)


@uses("text", "window")
def streaming_figure(v: Values, lang: str) -> go.Figure:
    kept, dropped, full = (
        _stream(v["text"], v["window"], SINK_TOKENS),
        _stream(v["text"], v["window"], 0),
        _full(v["text"]),
    )
    positions = np.arange(1, full.length)  # the token predicted
    curves = {
        "full": _smoothed(full),
        "with": _smoothed(kept),
        "without": _smoothed(dropped),
    }
    losses = {"full": full.loss, "with": kept.loss, "without": dropped.loss}
    title = t(
        "real.fig_streaming",
        lang,
        window=v["window"],
        sinks=SINK_TOKENS,
        without=f"{dropped.loss:.2f}",
        **{"with": f"{kept.loss:.2f}"},
    )
    return figs.streaming_curves(
        positions, curves, losses, window=v["window"], sinks=SINK_TOKENS, smoothing=SMOOTHING, title=title, lang=lang
    )


@uses("text")
def check_first_token(v: Values) -> Check:
    r"""The first token's share in the later layers against what uniform causal attention gives it (the mean of
    1/(i + 1) over the rows): the claim is that trained heads give it far more (the median head of those layers)."""
    p = profile(v["text"])
    uniform = float(uniform_weight_per_key(p.length)[0])  # the mean over rows i ≥ 1 of 1/(i + 1)
    later = p.first_token[_later_layers(p.first_token) :]
    median = float(np.median(later))
    return Check(
        "real.check_first_token",
        median / uniform,
        expect_zero=False,
        tolerance=2.0,
        fmt={"median": f"{median:.0%}", "uniform": f"{uniform:.1%}", "times": f"{median / uniform:.0f}"},
    )


@uses("text", "window")
def check_streaming(v: Values) -> Check:
    r"""Keeping the first tokens lowers the sliding window's loss: residual = loss without − loss with them. A text
    that fits in the window is never evicted from: then the claim is that every run is the plain forward's loss."""
    kept, dropped, full = _runs(v["text"], v["window"])
    fmt = {
        "with": f"{kept.loss:.2f}",
        "without": f"{dropped.loss:.2f}",
        "full": f"{full.loss:.2f}",
        "sinks": SINK_TOKENS,
        "window": v["window"],
        "tokens": full.length,
    }
    if full.length <= v["window"]:  # the window alone holds the text: no run ever evicts a key
        residual = max(abs(kept.loss - full.loss), abs(dropped.loss - full.loss))
        return Check("real.check_streaming_whole", residual, tolerance=WHOLE_TOLERANCE, fmt=fmt)
    gap = dropped.loss - kept.loss
    return Check("real.check_streaming", gap, expect_zero=False, tolerance=0.0, fmt={**fmt, "gap": f"{gap:.2f}"})


FIGURES = {"first_token": first_token_figure, "streaming": streaming_figure}
CHECKS = {"first_token": check_first_token, "streaming": check_streaming}
SWEEPS: dict[str, str] = {}
STATIC = {
    "first_token": "one forward of the real model with its attention weights, on the reader's text",
    "streaming": "the streaming runs are a forward of the real model per token, for every window at once",
}
SOURCES = (streaming_losses, whole_text_loss, uniform_weight_per_key)
