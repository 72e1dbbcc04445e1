r"""Section 1 of the real-model page, "Relativity, for real": every position shifted by Δ (the logits stay equal, up to
a float error that grows with Δ), and the positions reversed or shuffled (the loss rises).

The numbers come from :mod:`posenc_real.relativity` (transformers' own forward with ``position_ids``); this module
keeps them in the app's memory per (text, settings) and hands them to the builders in :mod:`.figures`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import plotly.graph_objects as go

from posenc_real.relativity import (
    SHIFT_GRID,
    OrderLosses,
    ShiftCurve,
    angle_rounding,
    base_logits,
    order_losses,
    shift_change,
    shifted_logit_change,
)

from ...i18n import t
from ...lesson import Check, Values, reads, uses
from ...memo import MODEL, memo
from ...state import IntParam
from . import figures as figs
from .model import passage_ids, shared_model

#: A change of the logits below this share of their own span is float error, not a different prediction: a thousandth
#: of ±40 is 0.04, far below the gap between a likely token and the next.
RELATIVE_TOLERANCE = 1e-3

PARAMS = (
    IntParam("delta", 20_000, lo=1, hi=100_000, step=1),
    IntParam("seed", 0, lo=0, hi=99),
)


@memo(budget=MODEL)
def _curve(text: str) -> ShiftCurve:
    return shifted_logit_change(shared_model(), passage_ids(text), SHIFT_GRID)


@functools.lru_cache(maxsize=1)
def _base(text: str) -> Any:
    r"""The unshifted logits of the last text asked for (50–100 MB at 256–512 tokens: past what the memory pools keep
    of one result), so that a move of Δ costs one forward, not two."""
    return base_logits(shared_model(), passage_ids(text))


@memo(budget=MODEL)
def _change(text: str, delta: int) -> float:
    return shift_change(shared_model(), passage_ids(text), delta, base=_base(text))


@memo(budget=MODEL)
def _orders(text: str, seed: int) -> OrderLosses:
    return order_losses(shared_model(), passage_ids(text), seed=seed)


@reads("text", "delta", "seed")
def warm(v: Values) -> None:
    r"""Every forward the section's figures and checks need at these values, run once into the app's memory."""
    _curve(v["text"])
    _change(v["text"], v["delta"])
    _orders(v["text"], v["seed"])


@uses("text", "delta")
def shift_figure(v: Values, lang: str) -> go.Figure:
    curve = _curve(v["text"])
    delta = v["delta"]
    rounding = angle_rounding(curve.largest_position)
    return figs.shift(curve, rounding, delta, _change(v["text"], delta), lang=lang)


@uses("text", "seed")
def orders_figure(v: Values, lang: str) -> go.Figure:
    return figs.orders(_orders(v["text"], v["seed"]), lang=lang)


@uses("text", "delta")
def check_shift(v: Values) -> Check:
    r"""The logits at positions + Δ against those at the text's own positions: equal up to float error."""
    curve = _curve(v["text"])
    change = _change(v["text"], v["delta"])
    largest = curve.length - 1 + v["delta"]
    return Check(
        key="real.check_shift",
        residual=change / curve.logit_span,
        tolerance=RELATIVE_TOLERANCE,
        fmt={
            "delta": f"{v['delta']:,}",
            "change": f"{change:.2g}",
            "span": f"{curve.logit_span:.0f}",
            "largest": f"{largest:,}",
            "rounding": f"{float(angle_rounding(np.array([largest]))[0]):.1g}",
        },
    )


@uses("text", "seed")
def check_orders(v: Values) -> Check:
    r"""Reversed and shuffled positions each raise the loss above the text's own order: residual = the smaller rise."""
    losses = _orders(v["text"], v["seed"])
    in_order, reversed_, shuffled = losses.loss
    return Check(
        key="real.check_orders",
        residual=float(min(reversed_, shuffled) - in_order),
        expect_zero=False,
        tolerance=0.0,
        fmt={
            "in_order": f"{in_order:.2f}",
            "reversed": f"{reversed_:.2f}",
            "shuffled": f"{shuffled:.2f}",
            "rise": f"{min(reversed_, shuffled) - in_order:.2f}",
        },
    )


@uses("text", "delta")
def shift_words(v: Values, lang: str) -> dict[str, str]:
    r"""The numbers the section's paragraph quotes: the change at the smallest and largest shifts of the curve."""
    curve = _curve(v["text"])
    return {
        "first": f"{curve.max_change[0]:.1g}",
        "last": f"{curve.max_change[-1]:.1g}",
        "last_delta": f"{int(curve.deltas[-1]):,}",
        "tokens": f"{curve.length:,}",
        "model": t("real.model_name", lang),
    }


FIGURES = {"shift": shift_figure, "orders": orders_figure}
CHECKS = {"shift": check_shift, "orders": check_orders}
STATIC = {
    "shift": "each shift is two forwards of the real model: a slider of frames would run it dozens of times",
    "orders": "each seed is three forwards of the real model",
}
SOURCES = (shifted_logit_change, angle_rounding, order_losses)
