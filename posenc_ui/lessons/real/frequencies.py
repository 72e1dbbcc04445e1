r"""Section 4 of the real-model page, "Which frequencies the model uses": the size of each RoPE pair's part of the
queries and keys by layer (Barbero et al. 2024, arXiv:2410.06205, §5, measured Gemma 7B's; here SmolLM2's), and the
loss when the slowest pairs (p-RoPE, §6, without its training) or the fastest stop turning.

The numbers come from :mod:`posenc_real.frequencies` (hooks on transformers' ``q_proj`` / ``k_proj``; the rotary
embedding's ``inv_freq`` changed in a copy swapped in for one forward); this module keeps them in the app's memory
per text and hands them to the builders in :mod:`.figures_frequencies`.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_real.frequencies import (
    STOP_COUNTS,
    PairNorms,
    StoppedLosses,
    pair_norms,
    stopped_inv_freq,
    stopped_rotation_losses,
)

from ...i18n import t
from ...lesson import Check, Values, reads, uses
from ...state import ChoiceParam
from . import figures_frequencies as figs
from .model import facts, passage_ids, shared_model
from .shipped import model_result

PARAMS = (
    ChoiceParam("freq_part", "query", options=("query", "key")),
    ChoiceParam("stop_count", 8, options=STOP_COUNTS, widget="select_slider"),
)


@model_result()
def _norms(text: str) -> PairNorms:
    return pair_norms(shared_model(), passage_ids(text))


@model_result()
def _stopped(text: str) -> StoppedLosses:
    return stopped_rotation_losses(shared_model(), passage_ids(text))


@reads("text")
def warm(v: Values) -> None:
    r"""Every forward the section needs for this text (1 with hooks, 1 as trained, 8 with pairs stopped), run once."""
    _norms(v["text"])
    _stopped(v["text"])


def _slow(norms: PairNorms, training_length: int) -> slice:
    r"""The pairs whose wavelength is longer than the training length: they never turn once within it."""
    return slice(int(np.argmax(norms.wavelengths > training_length)), norms.wavelengths.size)


def _shares(norms: PairNorms) -> tuple[float, float, float, slice]:
    r"""The slow pairs' share of the query and key norm² (mean over layers), their share of the pairs, and them."""
    slow = _slow(norms, facts()["max_position_embeddings"])
    fair = (slow.stop - slow.start) / norms.wavelengths.size
    return float(norms.share("query", slow).mean()), float(norms.share("key", slow).mean()), fair, slow


@uses("text", "freq_part")
def norms_figure(v: Values, lang: str) -> go.Figure:
    norms = _norms(v["text"])
    part = v["freq_part"]
    values = getattr(norms, part)
    relative = values / values.mean(axis=1, keepdims=True)  # 1 = the layer's average pair
    query, key, fair, _ = _shares(norms)
    share = query if part == "query" else key
    point = "slow" if share > fair else "spread"
    title = t(f"real.freq.fig_norms_{point}", lang, part=t(f"real.freq.part_{part}", lang), tokens=norms.length)
    return figs.pair_norms(relative, norms.wavelengths, part=part, title=title, lang=lang)


@uses("text", "stop_count")
def stopped_figure(v: Values, lang: str) -> go.Figure:
    stopped = _stopped(v["text"])
    change = {side: stopped.change(side) for side in stopped.loss}
    index = stopped.counts.index(v["stop_count"])
    point = "fast" if change["fastest"][index] > change["slowest"][index] else "slow"
    title = t(f"real.freq.fig_stopped_{point}", lang, tokens=stopped.length)
    return figs.stopped_losses(stopped.counts, change, chosen=v["stop_count"], title=title, lang=lang)


@uses("text")
def check_norms(v: Values) -> Check:
    r"""The pairs slower than the training length hold more of the queries' and keys' squared norm (mean over
    layers) than their share of the pairs: residual = the smaller of the two margins."""
    norms = _norms(v["text"])
    query, key, fair, slow = _shares(norms)
    return Check(
        key="real.freq.check_norms",
        residual=min(query, key) - fair,
        expect_zero=False,
        tolerance=0.0,
        fmt={
            "pairs": slow.stop - slow.start,
            "first": slow.start,
            "wavelength": f"{norms.wavelengths[slow.start]:,.0f}",
            "fair": f"{fair:.0%}",
            "query": f"{query:.0%}",
            "key": f"{key:.0%}",
        },
    )


@uses("text", "stop_count")
def check_stopped(v: Values) -> Check:
    r"""Stopping the ``stop_count`` fastest pairs raises the loss more than stopping as many of the slowest:
    residual = the difference of the two changes (nats per token)."""
    stopped = _stopped(v["text"])
    index = stopped.counts.index(v["stop_count"])
    fast, slow = stopped.change("fastest")[index], stopped.change("slowest")[index]
    return Check(
        key="real.freq.check_stopped",
        residual=float(fast - slow),
        expect_zero=False,
        tolerance=0.0,
        fmt={"count": v["stop_count"], "fast": f"{fast:+.3f}", "slow": f"{slow:+.4f}", "base": f"{stopped.base:.3f}"},
    )


FIGURES = {"pair_norms": norms_figure, "stopped": stopped_figure}
CHECKS = {"pair_norms": check_norms, "stopped": check_stopped}
SWEEPS: dict[str, str] = {}
STATIC = {
    "pair_norms": "a forward of the real model with hooks on every layer",
    "stopped": "nine forwards of the real model",
}
SOURCES = (pair_norms, stopped_inv_freq, stopped_rotation_losses)
