r"""Section 5 of the real-model page, "Changing RoPE after training": the loss each context-extension method costs
a model that was not fine-tuned for it (base × k, PI, dynamic NTK, YaRN, set through transformers' own
``rope_parameters``), the frequencies transformers builds for each checked against :func:`posenc_core.rope_frequencies`,
and the loss with one layer at a time made NoPE.

The numbers come from :mod:`posenc_real.rescale`; every (method, factor) and every layer is computed once per text
and kept in the app's memory, so that choosing a factor only picks among them.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_real.rescale import (
    FACTORS,
    RESCALINGS,
    LayerScan,
    RescaleTable,
    core_frequencies,
    nope_layer_losses,
    rescaled_frequencies,
    rescaling_losses,
)

from ...i18n import t
from ...lesson import Check, Values, reads, uses
from ...state import ChoiceParam
from . import figures_frequencies as figs
from .model import passage_ids, shared_model
from .shipped import model_result

PARAMS = (ChoiceParam("factor", 4, options=FACTORS, widget="select_slider"),)
#: The rescalings that keep the fastest pairs as trained (YaRN) or nearly (base × k slows pair i by k^(2i/d)).
KEEP_FAST = ("base", "yarn")
#: How many layers the NoPE figure and its words name: the largest changes.
NAMED_LAYERS = 3
#: transformers builds θ_i in float32, the core in float64: they agree to float32's rounding (2⁻²⁴ ≈ 6e-8), with room.
CORE_TOLERANCE = 1e-6


@model_result()
def _table(text: str) -> RescaleTable:
    return rescaling_losses(shared_model(), passage_ids(text))


@model_result()
def _layers(text: str) -> LayerScan:
    return nope_layer_losses(shared_model(), passage_ids(text))


@model_result()
def core_gap(text: str) -> tuple[float, float]:
    r"""The largest relative gap between transformers' θ_i and the core's, and between their attention factors, over
    every method and factor at the length of ``text`` (no forward: the rotary embeddings are only built)."""
    real, length = shared_model(), int(passage_ids(text).size)
    freq_gap = factor_gap = 0.0
    for method in RESCALINGS:
        for factor in FACTORS:
            theirs = rescaled_frequencies(real, method, factor, seq_len=length)
            ours = core_frequencies(real, method, factor, seq_len=length)
            freq_gap = max(freq_gap, float(np.max(np.abs(theirs.inv_freq / ours.inv_freq - 1.0))))
            factor_gap = max(factor_gap, abs(theirs.attention_factor / ours.attention_factor - 1.0))
    return freq_gap, factor_gap


@reads("text")
def warm(v: Values) -> None:
    r"""Every forward the section needs for this text (16 rescaled, 32 for the NoPE layers), run once."""
    _table(v["text"])
    _layers(v["text"])


def _largest(scan: LayerScan) -> list[int]:
    return [int(i) for i in np.argsort(scan.change)[::-1][:NAMED_LAYERS]]


@uses("text", "factor")
def rescaled_figure(v: Values, lang: str) -> go.Figure:
    table = _table(v["text"])
    change = {method: table.change[m] for m, method in enumerate(table.methods)}
    others = np.max([change[m] for m in KEEP_FAST], axis=0)
    point = "pi" if bool(np.all(change["linear"] > others)) else "mixed"
    title = t(f"real.rescale.fig_methods_{point}", lang, tokens=table.length)
    return figs.rescaled_losses(table.factors, change, chosen=float(v["factor"]), title=title, lang=lang)


@uses("text")
def layers_figure(v: Values, lang: str) -> go.Figure:
    scan = _layers(v["text"])
    named = _largest(scan)
    title = t("real.rescale.fig_layers", lang, layers=", ".join(str(i) for i in sorted(named)), tokens=scan.length)
    return figs.nope_layers(scan.change, highlight=named, title=title, lang=lang)


@uses("text")
def check_core(v: Values) -> Check:
    r"""transformers' θ_i and attention factor for every method and factor equal the core's for the same settings."""
    freq_gap, factor_gap = core_gap(v["text"])
    return Check(
        key="real.rescale.check_core",
        residual=max(freq_gap, factor_gap),
        tolerance=CORE_TOLERANCE,
        fmt={"settings": len(RESCALINGS) * len(FACTORS), "freq": f"{freq_gap:.1g}", "factor": f"{factor_gap:.1g}"},
    )


@uses("text", "factor")
def check_rescaled(v: Values) -> Check:
    r"""At the chosen factor, PI (every θ_i divided by k) raises the loss more than base × k and YaRN, which keep the
    fastest pairs (nearly) as trained: residual = PI's change less the larger of theirs (nats per token)."""
    table = _table(v["text"])
    j = table.factors.index(float(v["factor"]))
    change = dict(zip(table.methods, table.change[:, j], strict=True))
    return Check(
        key="real.rescale.check_methods",
        residual=float(change["linear"] - max(change[m] for m in KEEP_FAST)),
        expect_zero=False,
        tolerance=0.0,
        fmt={"factor": f"{v['factor']:g}", "trained": f"{table.base:.3f}"}
        | {method: f"{value:+.3f}" for method, value in change.items()},
    )


@uses("text")
def check_layers(v: Values) -> Check:
    r"""Every layer made NoPE at once raises the loss more than any one layer alone: residual = the difference."""
    scan = _layers(v["text"])
    top = _largest(scan)[0]
    return Check(
        key="real.rescale.check_layers",
        residual=float(scan.all_layers - scan.loss.max()),
        expect_zero=False,
        tolerance=0.0,
        fmt={
            "top": top,
            "top_change": f"{scan.change[top]:+.3f}",
            "all": f"{scan.all_layers - scan.base:+.2f}",
            "median": f"{np.median(scan.change):+.4f}",
        },
    )


FIGURES = {"rescaled": rescaled_figure, "nope_layers": layers_figure}
CHECKS = {"core": check_core, "rescaled": check_rescaled, "nope_layers": check_layers}
SWEEPS: dict[str, str] = {}
STATIC = {
    "rescaled": "sixteen forwards of the real model, one per method and factor",
    "nope_layers": "thirty-two forwards of the real model, one per layer",
}
SOURCES = (rescaling_losses, nope_layer_losses)
