r"""Section 1 of the real-model page, "Relativity, for real": every position shifted by Δ (the logits stay equal, up to
a float error that grows with Δ), and the positions reversed or shuffled (the loss rises).

The numbers come from :mod:`posenc_real.relativity` (transformers' own forward with ``position_ids``); this module
keeps them in the app's memory per (text, settings) and hands them to the builders in :mod:`.figures`.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_real.relativity import (
    ORDERS,
    SHIFT_GRID,
    OrderLosses,
    ShiftCurve,
    angle_rounding,
    order_losses,
    shifted_logit_change,
)

from ...i18n import t
from ...lesson import Check, Values, reads, uses
from ...state import ChoiceParam, IntParam
from . import figures as figs
from .model import passage_ids, shared_model
from .shipped import model_result

#: A change of the logits below this share of their own span is float error, not a different prediction: a thousandth
#: of ±40 is 0.04, far below the gap between a likely token and the next.
RELATIVE_TOLERANCE = 1e-3

PARAMS = (
    # the shifts the curve is measured at: a move of Δ picks one of its points and runs no forward
    ChoiceParam("delta", 16_384, options=SHIFT_GRID, widget="select_slider"),
    IntParam("seed", 0, lo=0, hi=99),
)
#: Every seed the slider offers (the shipped passage's losses are shipped for each).
SEEDS = tuple(range(PARAMS[1].lo, PARAMS[1].hi + 1))


@model_result()
def _curve(text: str) -> ShiftCurve:
    return shifted_logit_change(shared_model(), passage_ids(text), SHIFT_GRID)


@model_result()
def _unshuffled(text: str) -> OrderLosses:
    r"""The loss in order and reversed: the same for every seed, two forwards once per text."""
    return order_losses(shared_model(), passage_ids(text), orders=ORDERS[:2])


@model_result(SEEDS)
def _shuffled(text: str, seed: int) -> OrderLosses:
    r"""The loss with the positions shuffled by ``seed``: a move of the seed is one forward."""
    return order_losses(shared_model(), passage_ids(text), seed=seed, orders=ORDERS[2:])


def _orders(text: str, seed: int) -> OrderLosses:
    fixed, shuffled = _unshuffled(text), _shuffled(text, seed)
    loss = np.concatenate([fixed.loss, shuffled.loss])
    return OrderLosses(orders=ORDERS, loss=loss, length=fixed.length, seed=seed)


@reads("text", "seed")
def warm(v: Values) -> None:
    r"""Every forward the section's figures and checks need at these values, run once into the app's memory (a
    move of Δ picks a point of the curve: no forward)."""
    _curve(v["text"])
    _orders(v["text"], v["seed"])


def _change(curve: ShiftCurve, delta: int) -> float:
    return float(curve.max_change[list(curve.deltas).index(delta)])


@uses("text", "delta")
def shift_figure(v: Values, lang: str) -> go.Figure:
    curve = _curve(v["text"])
    delta = v["delta"]
    rounding = angle_rounding(curve.largest_position)
    return figs.shift(curve, rounding, delta, _change(curve, delta), lang=lang)


@uses("text", "seed")
def orders_figure(v: Values, lang: str) -> go.Figure:
    return figs.orders(_orders(v["text"], v["seed"]), lang=lang)


@uses("text", "delta")
def check_shift(v: Values) -> Check:
    r"""The logits at positions + Δ against those at the text's own positions: equal up to float error."""
    curve = _curve(v["text"])
    change = _change(curve, v["delta"])
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
SWEEPS = {"shift": "delta"}  # every Δ is a point of the one measured curve
STATIC = {"orders": "each seed is a forward of the real model on a reader's own text"}
SOURCES = (shifted_logit_change, angle_rounding, order_losses)
