r"""Page 9 — the extrapolation lab: tiny Transformers that differ only in their position encoding, tested past the
length they were trained on.

The committed results (``assets/lab/``, made by the command stored inside them) show at once; a live run with the
reader's settings replaces them when it finishes (:mod:`posenc_ui.lab_runner`). This module imports no torch and no
Streamlit: it only reads result dicts, so the rest of the app stays fast.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

from posenc_core.lab_task import ENCODINGS, PRESETS, LabConfig, optimal_loss

from ..catalog import ROOT
from ..figures import lab as figs
from ..state import ChoiceParam, IntParam
from .base import Check, Explain, Values, View

COMMITTED = ROOT / "assets" / "lab" / "results_cpu_seed0.json"

#: Which encodings a live run trains: all of them, or a smaller set that still tells the story faster.
ENCODING_SETS: dict[str, tuple[str, ...]] = {
    "all": ENCODINGS,
    "absolute": ("none", "learned", "sinusoidal"),
    "relative": ("rope", "alibi", "t5"),
    "contrast": ("learned", "alibi"),
}

PARAMS = (
    ChoiceParam("source", "committed", options=("committed", "live")),
    ChoiceParam("metric", "loss", options=("loss", "accuracy")),
    ChoiceParam("set", "all", options=tuple(ENCODING_SETS), widget="radio"),
    ChoiceParam("train_length", 32, options=(16, 32, 64), widget="select_slider"),
    IntParam("steps", 300, lo=50, hi=600, step=50),
    IntParam("seed", 0, lo=0, hi=9),
)


# --- results: the committed file, and live runs kept per configuration ---------------------------------------


@functools.cache
def committed() -> Mapping[str, Any]:
    r"""The committed default run (``--preset cpu --seed 0``), read once."""
    with COMMITTED.open(encoding="utf-8") as fh:
        return json.load(fh)


def live_config(values: Values) -> LabConfig:
    r"""The :class:`LabConfig` a live run with these settings trains (the CPU preset otherwise)."""
    return dataclasses.replace(
        PRESETS["cpu"],
        encodings=ENCODING_SETS[values["set"]],
        train_length=int(values["train_length"]),
        steps=int(values["steps"]),
        seed=int(values["seed"]),
    )


class ResultStore:
    r"""Finished live runs, one per configuration, shared by every session of this server (at most ``size``)."""

    def __init__(self, size: int = 8) -> None:
        self._runs: OrderedDict[LabConfig, Mapping[str, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.size = size

    def get(self, config: LabConfig) -> Mapping[str, Any] | None:
        with self._lock:
            if config in self._runs:
                self._runs.move_to_end(config)
            return self._runs.get(config)

    def latest(self) -> Mapping[str, Any] | None:
        r"""The most recently used run, if any (its throughput predicts the next run's time)."""
        with self._lock:
            return next(reversed(self._runs.values()), None)

    def put(self, config: LabConfig, results: Mapping[str, Any]) -> None:
        with self._lock:
            self._runs[config] = results
            self._runs.move_to_end(config)
            while len(self._runs) > self.size:
                self._runs.popitem(last=False)


STORE = ResultStore()


def shown_results(values: Values) -> Mapping[str, Any]:
    r"""The live run of these settings when the reader asked for it and it exists; the committed run otherwise."""
    if values["source"] == "live":
        live = STORE.get(live_config(values))
        if live is not None:
            return live
    return committed()


# --- figures and checks -----------------------------------------------------------------------------------------


def _runs(values: Values) -> tuple[Mapping[str, Any], dict[str, np.ndarray]]:
    results = shown_results(values)
    key = "loss" if values["metric"] == "loss" else "accuracy"
    return results, {name: np.asarray(run[key]) for name, run in results["runs"].items()}


def by_position_figure(values: Values, lang: str) -> go.Figure:
    results, curves = _runs(values)
    optimum = np.asarray(results["optimal_loss"])[1:] if values["metric"] == "loss" else None
    return figs.by_position(curves, optimum, config=results["config"], metric=values["metric"], lang=lang)


def extension_figure(values: Values, lang: str) -> go.Figure:
    results = shown_results(values)
    rope = results["runs"].get("rope")
    key = "loss" if values["metric"] == "loss" else "accuracy"
    curves = {kind: np.asarray(run[key]) for kind, run in (rope or {}).get("extension", {}).items()}
    optimum = np.asarray(results["optimal_loss"])[1:] if values["metric"] == "loss" else None
    return figs.extension(curves, optimum, config=results["config"], metric=values["metric"], lang=lang)


def training_figure(values: Values, lang: str) -> go.Figure:
    results = shown_results(values)
    curves = {name: np.asarray(run["train_loss"]) for name, run in results["runs"].items()}
    optimum = float(results["optimal_loss"][-1])
    return figs.training(curves, optimum=optimum, steps=results["config"]["steps"], lang=lang)


def gaps(results: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    r"""Mean loss above the optimum per encoding: inside the training length, and in each doubling beyond it."""
    config = results["config"]
    length, lag = config["train_length"], config["lag"]
    optimum = np.asarray(results["optimal_loss"])[1:]  # the loss at position t predicts token t + 1
    bands = {"inside": (lag, length - 1)}
    start = length
    while start < len(optimum):
        bands[f"{start // length}-{2 * start // length}"] = (start, min(2 * start, len(optimum)))
        start *= 2
    out = {}
    for name, run in results["runs"].items():
        gap = np.asarray(run["loss"]) - optimum
        out[name] = {band: float(gap[lo:hi].mean()) for band, (lo, hi) in bands.items()}
    return out


def check_extrapolation(values: Values) -> Check:
    r"""Beyond the training length the learned table is far worse than ALiBi: the gap difference, in nats."""
    table = gaps(shown_results(values))
    if "learned" not in table or "alibi" not in table:
        table = gaps(committed())
    beyond = [band for band in table["alibi"] if band != "inside"]
    difference = float(np.mean([table["learned"][b] - table["alibi"][b] for b in beyond]))
    return Check("lab.check_extrapolation", difference, expect_zero=False, tolerance=0.5)


def check_inside(values: Values) -> Check:
    r"""Inside the training length every model with position information reaches the optimum: the worst gap."""
    table = gaps(shown_results(values))
    worst = max(gap["inside"] for name, gap in table.items() if name != "none")
    return Check("lab.check_inside", max(worst, 0.0), tolerance=0.25)


VIEW = View(
    page_id="lab",
    params=PARAMS,
    figures={"by_position": by_position_figure, "extension": extension_figure, "training": training_figure},
    checks={"extrapolation": check_extrapolation, "inside": check_inside},
    explain=Explain(
        latex=(
            r"x_t = \pi(x_{t-\ell}) \ \text{(prob. } 1-\varepsilon \text{), else uniform}",
            r"H^\ast = -p\ln p - (V-1)\tfrac{\varepsilon}{V}\ln\tfrac{\varepsilon}{V}",
            r"p = 1-\varepsilon+\tfrac{\varepsilon}{V}",
        ),
        sources=(optimal_loss,),
        paper="Press, Smith & Lewis 2021 (ALiBi, arXiv:2108.12409) §4; Peng et al. 2023 (YaRN, arXiv:2309.00071)",
        checks=("inside", "extrapolation"),
    ),
)
