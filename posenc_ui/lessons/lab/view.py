r"""Page 12 — the extrapolation lab: tiny Transformers that differ only in their position encoding, trained on one of
the lab's tasks (:data:`posenc_lab.tasks.TASKS`) and tested past the length they were trained on.

The committed runs (:func:`posenc_lab.runs.committed_runs`, three seeds each, made by the command stored inside them)
show at once; a live run with the reader's settings is read from the lab's disk cache (:mod:`posenc_lab.queue`) once
it has finished (:mod:`posenc_ui.lessons.lab.runner` trains it). This module imports no torch and no Streamlit: it only
reads result dicts, and every number it shows comes from :func:`posenc_lab.runs.band_table`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import plotly.graph_objects as go

from posenc_core import FAMILIES, forget_gate_bias, hybrid_rope_layers
from posenc_core.families import RELATIVE_KINDS, p_rope_inv_freq
from posenc_lab import runs
from posenc_lab.queue import LabQueue, cache_dir, config_key
from posenc_lab.runs import (
    LEARNED_TOLERANCE,
    Spread,
    Verdict,
    band_edges,
    band_table,
    extrapolation_rises,
    extrapolation_verdicts,
    length_bands,
    verdict_tolerance,
)
from posenc_lab.tasks import ENCODINGS, LIVE_DEFAULT, PRESETS, TASKS, LabConfig, for_task, optimal_loss

from ...lesson import Check, Explain, PageEntry, Values, View, reads
from ...memo import RESULTS, memo
from ...state import ChoiceParam, IntParam
from . import designs
from . import figures as figs

#: Which encodings a live run trains: the six of the default run (the families not marked ``lab_opt_in``, about half a
#: minute on 2 cores), the 2025 designs beside NoPE and RoPE, all of them, or a smaller set that still tells the story
#: faster. "today", "absolute" and "relative" are read from the family registry (:data:`posenc_core.FAMILIES`): the
#: opt-in families with the two they build on (no position, the rotation); NoPE and the added codes; the pairwise
#: biases and the rotations.
ENCODING_SETS: dict[str, tuple[str, ...]] = {
    "classic": LIVE_DEFAULT,
    "today": tuple(e for e in ENCODINGS if FAMILIES[e].lab_opt_in or FAMILIES[e].kind in ("none", "rotation")),
    "all": ENCODINGS,
    "absolute": tuple(e for e in ENCODINGS if FAMILIES[e].kind in ("none", "added")),
    "relative": tuple(e for e in ENCODINGS if FAMILIES[e].kind in RELATIVE_KINDS),
    "contrast": ("learned", "alibi"),
}

PARAMS = (
    ChoiceParam("task", next(iter(TASKS)), options=tuple(TASKS)),
    ChoiceParam("source", "committed", options=("committed", "live")),
    ChoiceParam("metric", "loss", options=("loss", "accuracy")),
    ChoiceParam("lag", 2, options=(1, 2, 4, 8), widget="select_slider"),
    ChoiceParam("set", "classic", options=tuple(ENCODING_SETS), widget="radio"),
    ChoiceParam("train_length", 32, options=(16, 32, 64), widget="select_slider"),
    IntParam("steps", 300, lo=50, hi=600, step=50),
    IntParam("seed", 0, lo=0, hi=9),
)

# --- results: the committed files, and live runs from the disk cache --------------------------------------------


@memo(budget=RESULTS)
def read_results(path: Path) -> Mapping[str, Any]:
    r"""A results file (:func:`posenc_lab.runs.read_results`), read once while the app's memory keeps it (a finished
    run never changes)."""
    return runs.read_results(path)


def _own(values: Values) -> dict[str, Any]:
    r"""The chosen task's own settings (:attr:`posenc_lab.tasks.Task.own`: the lag task's lag)."""
    return {name: int(values[name]) for name in TASKS[values["task"]].own}


def own_settings(values: Values) -> tuple[str, ...]:
    r"""The controls of the chosen task's own settings, shown for that task alone."""
    return TASKS[values["task"]].own


def committed_path(values: Values) -> Path:
    r"""The committed run for the chosen task and its own settings (where none was committed: the CPU preset's)."""
    return runs.committed_run(values["task"], **_own(values)).path


def committed(values: Values) -> Mapping[str, Any]:
    return read_results(committed_path(values))


def committed_lag_missing(values: Values) -> bool:
    r"""True when no run was committed with the chosen task's own settings (the lag task at lag 4: lag 2's is shown)."""
    return runs.committed_run(values["task"], **_own(values)).own != _own(values)


def live_config(values: Values) -> LabConfig:
    r"""The :class:`LabConfig` a live run with these settings trains: the CPU preset, one seed."""
    return dataclasses.replace(
        for_task(PRESETS["cpu"], values["task"]),
        encodings=ENCODING_SETS[values["set"]],
        train_length=int(values["train_length"]),
        steps=int(values["steps"]),
        seed=int(values["seed"]),
        **_own(values),
    )


def queue() -> LabQueue:
    r"""The lab's run queue and result cache (one per cache directory, shared by every session)."""
    return LabQueue(cache_dir())  # all its state is on disk: a new handle per rerun costs three mkdir calls


def live_path(values: Values) -> Path:
    r"""Where the cache every server process shares keeps the live run of these settings (a file once it finished)."""
    return queue().result_path(config_key(live_config(values)))


def live_results(values: Values) -> Mapping[str, Any] | None:
    r"""The finished live run of these settings, or ``None``."""
    path = live_path(values)
    return read_results(path) if path.is_file() else None


#: What :func:`shown_results` reads: the committed run's task and lag, and a live run's settings.
LIVE_READS = ("task", "source", "lag", "set", "train_length", "steps", "seed")


def shown_path(values: Values) -> Path:
    r"""The file of the live run of these settings when the reader asked for it and it exists; the committed run's
    otherwise."""
    if values["source"] == "live":
        path = live_path(values)
        if path.is_file():
            return path
    return committed_path(values)


def shown_results(values: Values) -> Mapping[str, Any]:
    r"""The run :func:`shown_path` names, read once while memory keeps it."""
    return read_results(shown_path(values))


@memo(budget=RESULTS)
def bands(path: Path, key: str) -> Mapping[str, Mapping[str, Spread]]:
    r"""``band_table`` of a results file, made once while memory keeps it (a finished run never changes)."""
    return MappingProxyType(
        {name: MappingProxyType(row) for name, row in band_table(dict(read_results(path)), key).items()}
    )


@memo(budget=RESULTS)
def verdicts(path: Path) -> Mapping[str, Verdict]:
    r"""``extrapolation_verdicts`` of a results file, made once while memory keeps it."""
    return MappingProxyType(extrapolation_verdicts(dict(read_results(path))))


def has_rope(values: Values) -> bool:
    return "rope" in shown_results(values)["runs"]


# --- figures ------------------------------------------------------------------------------------------------


def _curves(runs: Mapping[str, Any], metric: str) -> dict[str, np.ndarray]:
    return {name: np.asarray(run[f"{metric}_seeds"]) for name, run in runs.items()}


def _optimum(results: Mapping[str, Any], metric: str) -> np.ndarray | None:
    optimum = results.get("optimal_loss")
    if optimum is None:
        return None
    return np.asarray(optimum) if metric == "loss" else np.ones(len(optimum))  # a determined token: accuracy 1


# What the lab's figures show is chosen by these; a live run's own settings (set, train_length, steps, seed) are the
# page's, kept in the link, and not offered again beside a single figure.
@reads("task", "source", "metric", "lag")
def by_position_figure(values: Values, lang: str) -> go.Figure:
    results = shown_results(values)
    metric = values["metric"]
    return figs.by_position(
        np.asarray(results["positions"]),
        _curves(results["runs"], metric),
        _optimum(results, metric),
        task=results["task"],
        scored_by=TASKS[results["task"]].scored_by,
        train_length=results["config"]["train_length"],
        metric=metric,
        lang=lang,
    )


@reads("task", "source", "metric", "lag")
def extension_figure(values: Values, lang: str) -> go.Figure:
    results = shown_results(values)
    metric = values["metric"]
    positions = np.asarray(results["extension_positions"])
    extension = results["runs"].get("rope", {}).get("extension", {})
    optimum = optimal_loss(LabConfig(**results["config"]), positions)  # the task's own, at these positions
    if optimum is not None and metric != "loss":
        optimum = np.ones(positions.size)  # a determined token: accuracy 1
    return figs.extension(
        positions,
        _curves(extension, metric),
        optimum,
        scored_by=TASKS[results["task"]].scored_by,
        train_length=results["config"]["train_length"],
        factor=results["config"]["extension_factor"],
        metric=metric,
        lang=lang,
    )


@reads("task", "source", "lag")
def training_figure(values: Values, lang: str) -> go.Figure:
    results = shown_results(values)
    curves = {name: np.asarray(run["train_loss_seeds"]) for name, run in results["runs"].items()}
    return figs.training(curves, steps=results["config"]["steps"], lang=lang)


# --- the table and the findings, from the core's band summary -----------------------------------------------


def table(values: Values) -> Mapping[str, Mapping[str, Spread]]:
    r"""Encodings × bands: ``band_table`` of the shown run, loss above the optimum where it is known (else loss)."""
    return bands(shown_path(values), "accuracy" if values["metric"] == "accuracy" else "loss")


def findings(values: Values) -> dict[str, tuple[str, dict[str, str]]]:
    r"""Per trained encoding, the verdict Compare uses too (:func:`posenc_lab.runs.extrapolation_verdicts`),
    as an i18n key (``lab.verdict.<state>``) and the numbers that decided it."""
    path = shown_path(values)
    results = read_results(path)
    tolerance = verdict_tolerance(results)
    last = band_edges(length_bands(results["config"]["train_length"], max(results["positions"]))[-1].name)[1]
    out = {}
    for name, verdict in verdicts(path).items():
        band = "inside" if verdict.band == "inside" else "{}–{}·L".format(*band_edges(verdict.band))
        out[name] = (
            verdict.state,
            {
                "value": f"{verdict.value:.2f}",
                "band": band,
                "held": _times_l(verdict.until),
                "last": _times_l(last),
                "tolerance": f"{tolerance:g}",
            },
        )
    return out


def _times_l(multiple: int) -> str:
    return "L" if multiple == 1 else f"{multiple}·L"


# --- checks -------------------------------------------------------------------------------------------------


@reads(*LIVE_READS)
def check_inside(values: Values) -> Check:
    r"""Inside L, every model with position information reaches the optimum, its worst seed within the tolerance
    that Compare's verdicts use (tasks with an optimum); text names the highest loss inside L instead."""
    path = shown_path(values)
    results, rows = read_results(path), bands(path, "loss")
    positional = {name: row["inside"].high for name, row in rows.items() if FAMILIES[name].kind != "none"} or {
        name: row["inside"].high for name, row in rows.items()
    }
    worst = max(positional, key=positional.get)
    gap = max(positional[worst], 0.0)
    if results.get("optimal_loss") is None:
        return Check(
            "lab.check_inside_text",
            0.0,
            fmt={"loss": f"{positional[worst]:.2f}"},
            fmt_keys={"encoding": f"enc.{worst}"},
        )
    key = "lab.check_inside" if gap <= LEARNED_TOLERANCE else "lab.check_inside_failed"
    return Check(
        key, gap, tolerance=LEARNED_TOLERANCE, fmt={"gap": f"{gap:.2f}"}, fmt_keys={"encoding": f"enc.{worst}"}
    )


@reads(*LIVE_READS)
def check_extrapolation(values: Values) -> Check:
    r"""Past L the encodings part ways: the best and worst rise over their own inside-L loss differ by > 0.5 nats."""
    rise = extrapolation_rises(bands(shown_path(values), "loss"))
    best, worst = min(rise, key=rise.get), max(rise, key=rise.get)
    spread = rise[worst] - rise[best]
    key = "lab.check_extrapolation" if len(rise) > 1 else "lab.check_extrapolation_one"
    return Check(
        key,
        spread,
        expect_zero=False,
        tolerance=0.5,
        fmt={"best_rise": f"{rise[best]:+.2f}", "worst_rise": f"{rise[worst]:+.2f}"},
        fmt_keys={"best": f"enc.{best}", "worst": f"enc.{worst}"},
    )


VIEW = View(
    page_id="lab",
    params=PARAMS,
    figures={"by_position": by_position_figure, "extension": extension_figure, "training": training_figure},
    # Trained results read from committed files (or a live run): nothing for the core to compute at export time.
    static={
        name: "committed training results, not a core computation" for name in ("by_position", "extension", "training")
    },
    checks={
        "extrapolation": check_extrapolation,
        "inside": check_inside,
        "hybrid": designs.check_hybrid,
        "p_rope": designs.check_p_rope,
        "fox": designs.check_fox,
    },
    explain=Explain(
        latex=(
            r"x_t = \pi(x_{t-\ell}) \ \text{(prob. } 1-\varepsilon \text{), else uniform}",
            r"H^\ast = -p\ln p - (V-1)\tfrac{\varepsilon}{V}\ln\tfrac{\varepsilon}{V}",
            r"p = 1-\varepsilon+\tfrac{\varepsilon}{V}",
            r"\text{p-RoPE: } \theta_i = b^{-2i/d} \ (i < \lfloor p\,d/2 \rfloor), \ \text{else } 0",
            r"\text{FoX: } D_{ij} = \textstyle\sum_{l=j+1}^{i} \log \sigma(w^\top x_l + b), \quad j \le i",
        ),
        sources=(optimal_loss, band_table, p_rope_inv_freq, hybrid_rope_layers, forget_gate_bias),
        paper="Press, Smith & Lewis 2022 (ALiBi, arXiv:2108.12409) §4, Fig. 1; Peng et al. 2023 (YaRN, "
        "arXiv:2309.00071); Mohtashami & Jaggi 2023 (passkey retrieval, arXiv:2305.16300); Barbero et al. 2024 "
        "(p-RoPE, arXiv:2410.06205); Yang et al. 2025 (RoPE/NoPE hybrid, arXiv:2501.18795); Lin et al. 2025 (FoX, "
        "arXiv:2503.02130)",
    ),
)

PAGE = PageEntry("pages/12_Extrapolation_lab.py", VIEW, preview="by_position")
