r"""The lab's Streamlit parts: what the shown run is, what its numbers say, and a live run with a measured estimate,
an honest progress bar and a place in the queue.

torch is imported here and nowhere else in the app, in a background thread that :func:`warm_up` starts the first
time the lab page opens (importing it and starting the device take seconds; doing it before the reader presses *Run*
hides them). The same thread then pays a first run's one-time costs and times a few steps of the default run, so that
the first estimate is measured on this server.

Runs go through :class:`posenc_lab.queue.LabQueue`: each configuration trains once across every session and
server process, identical requests wait for the first and share its result, trainings per device are capped, and
every waiting reader sees their place. Cancelling needs no code: pressing *Cancel* (or leaving the page)
makes Streamlit rerun the script, which raises inside the next progress update and unwinds the run; nothing
half-trained is stored. While it trains or waits, the page gives up its turn (:mod:`posenc_ui.turns`).
"""

from __future__ import annotations

import dataclasses
import itertools
import statistics
import threading
import time
from collections.abc import Mapping
from typing import Any

import streamlit as st

from posenc_lab.queue import LabQueue, config_key
from posenc_lab.tasks import PRESETS, TASKS, LabConfig

from ...frame import Page
from ...frame.process import freeze_heap
from ...i18n import t
from ...turns import TURNS
from . import view as lab

_SWITCH_TO_LIVE = "_posenc_lab_switch_to_live"
_WARM: dict[str, Any] = {}  # "device" and "import_seconds", once the background import has finished
_WARM_STARTED = threading.Lock()
_WARM_DONE = threading.Event()
EVALUATION = "eval_seconds_per_token"  # the timings' entry for evaluation, beside each encoding's training throughput
ESTIMATING_FRACTION = 0.03  # the remaining time is shown once 3 % of the steps have been timed
CALIBRATION_STEPS = 12  # the warm-up times this many steps of the default run (~1.5 s on 2 cores)
#: Seconds between two progress updates. Drawn at every step, the bar cost the server a message per step and Chromium
#: a redraw: learned vs ALiBi (L = 16, 50 steps, 2 cores, in Chromium) trained in 2.85 s, and in 1.75 s with this.
PROGRESS_INTERVAL = 0.25


# --- torch, warmed up in the background --------------------------------------------------------------------------


def warm_up() -> None:
    r"""Start importing torch and picking the device, once per process, without waiting for it."""
    if _WARM_STARTED.acquire(blocking=False):  # never released: the first caller starts the one thread
        # Not a daemon: an interpreter that exits mid-import would print the import's traceback; it waits seconds.
        threading.Thread(target=_warm, name="posenc-torch-warm-up", daemon=False).start()


def _warm() -> None:
    started = time.perf_counter()
    try:
        for attempt in range(3):
            try:
                import torch

                from posenc_core.torch_backend import pick_device

                break
            except ImportError:
                # Streamlit takes the script's folder off the front of sys.path after each run; an import that is
                # walking sys.path in another thread at that moment skips the next entry (seen: "No module named
                # 'torch'" one time in three under AppTest). The next walk finds it.
                if attempt == 2:
                    raise
                time.sleep(0.2)
        device = pick_device()
        torch.zeros(1, device=device)  # the device's context starts on first use
        # torch's import leaves ~225 000 objects that live as long as the server: out of every full collection.
        # Under class load they had made each one take 160–330 ms; frozen, 40–180 ms. What sessions hold at this
        # moment is frozen too, once per process: class-load runs ended ~20 MB higher (docs/benchmarks.md).
        freeze_heap()
        _WARM["device"] = device.type
        _WARM["import_seconds"] = time.perf_counter() - started
        lab.queue().record_import_seconds(device.type, _WARM["import_seconds"])
        _calibrate(device.type)
    finally:
        _WARM_DONE.set()


def _calibrate(device: str) -> None:
    r"""Pay what a process's first run pays once, then time :data:`CALIBRATION_STEPS` steps of the default run and
    record them for :func:`estimate`.

    Measured on 2 cores: a first run of learned and ALiBi (L = 16, 50 steps) took 3.8 s, of which 2.6 s evaluating;
    the same run again took 1.4 s (0.3 s evaluating). After a two-step run of every encoding at L = 8, the first
    run takes 1.5 s too. A training step is timed as the median interval between steps after the first two (which
    also pay for memory of the new shapes), so a page drawing meanwhile moves it little.
    """
    from posenc_lab.train import run_lab

    small = LabConfig(train_length=8, eval_factor=2, extension_factor=2, steps=2, batch_size=2, eval_sequences=2)
    run_lab(small, device=device)
    config = dataclasses.replace(PRESETS["cpu"], steps=CALIBRATION_STEPS)
    stamps: list[float] = []
    run_lab(config, device=device, progress=lambda *_: stamps.append(time.perf_counter()) or True)
    evaluated = time.perf_counter() - stamps[-1]
    step = statistics.median(later - earlier for earlier, later in itertools.pairwise(stamps[2:]))
    share = step / len(config.encodings)  # each model's share of a step of them all
    _store(
        lab.queue(), device, config, {name: _tokens_per_step(config) / share for name in config.encodings}, evaluated
    )


# --- what is shown ---------------------------------------------------------------------------------------------


def apply_pending(page: Page) -> None:
    r"""After a finished run, show its results: flip the *source* widget to "live" before it is drawn."""
    if st.session_state.pop(_SWITCH_TO_LIVE, False):
        page.set("source", "live")


def about_task(page: Page) -> None:
    r"""What the chosen task asks of a position encoding (the text task names its corpus and size)."""
    task = page.values["task"]
    page.text(f"about.{task}", **TASKS[task].about())


def source_notice(page: Page) -> None:
    r"""Say which results are on screen when they are not the ones the controls name."""
    values = page.values
    if values["source"] == "live" and lab.live_results(values) is None:
        st.info(page.t("lab.no_live_run"), icon=":material/info:")
    elif values["source"] == "committed" and lab.committed_lag_missing(values):
        st.info(page.t("lab.no_committed_lag", lag=values["lag"]), icon=":material/info:")


def shown_caption(page: Page) -> None:
    r"""Which run the figure shows: the committed one (its command, seeds and time) or the reader's live run."""
    results = lab.shown_results(page.values)
    config = results["config"]
    common = {"seconds": f"{results['seconds']:.0f}", "device": results["device"], "steps": config["steps"]}
    if "command" in results:
        st.caption(
            page.t(
                "lab.shown_committed",
                count=len(results["runs"]),
                seeds=len(results["seeds"]),
                command=results["command"],
                **common,
            )
        )
    else:
        names = ", ".join(page.t(f"enc.{name}") for name in results["runs"])
        st.caption(
            page.t("lab.shown_live", encodings=names, seed=config["seed"], length=config["train_length"], **common)
        )


def findings(page: Page) -> None:
    r"""One line per trained encoding: what its own numbers say inside L and past it, then why, per task."""
    if page.embedded:
        return
    results = lab.shown_results(page.values)
    st.markdown(f"**{page.t('lab.h_findings')}**")
    kind = "gap" if results.get("optimal_loss") is not None else "loss"
    words = {"unit": page.t(f"lab.unit.{kind}"), "reference": page.t(f"lab.reference.{kind}")}
    lines = [
        page.t(f"lab.verdict.{state}", encoding=page.t(f"enc.{name}"), **numbers, **words)
        for name, (state, numbers) in lab.findings(page.values).items()
    ]
    st.markdown("\n".join(f"- {line}" for line in lines) + f"\n\n{page.t('lab.verdict_rule')}")
    if "command" not in results:  # a live run: the lines above are its own, the paragraph below was written for ours
        page.text("why_live")
    page.text(f"why.{results['task']}")


def band_table(page: Page) -> None:
    r"""Encodings as rows, length bands as columns: mean over seeds [lowest – highest seed], one precision."""
    values = page.values
    table = lab.table(values)
    bands = list(next(iter(table.values())))
    labels = {
        band: page.t("lab.band.inside") if band == "inside" else page.t("lab.band.beyond", band=band) for band in bands
    }
    several = len(lab.shown_results(values)["seeds"]) > 1
    # A markdown table: st.dataframe would make the browser fetch 1.2 MB of grid and Arrow code for six rows.
    rows = [[page.t("axis.encoding"), *(labels[band] for band in bands)], ["---", *("---:" for _ in bands)]]
    for name, row in table.items():
        rows.append([page.t(f"enc.{name}"), *(_cell(row[band], several) if band in row else "" for band in bands)])
    st.markdown("\n".join("| " + " | ".join(cells) + " |" for cells in rows))
    results = lab.shown_results(values)
    metric = values["metric"]
    caption = "accuracy" if metric == "accuracy" else ("gap" if results.get("optimal_loss") is not None else "loss")
    notes = [page.t(f"lab.table_caption.{caption}" + ("" if several else "_one"))]
    if caption == "gap" and any(s.mean < 0 for row in table.values() for s in row.values()):
        notes.append(page.t("lab.below_optimum", n=results["config"]["eval_sequences"]))
    st.caption(" ".join(notes))


def _cell(spread: Any, several: bool) -> str:
    return f"{spread.mean:.2f} \\[{spread.low:.2f}, {spread.high:.2f}\\]" if several else f"{spread.mean:.2f}"


# --- the live run ------------------------------------------------------------------------------------------------


def estimate(page: Page) -> str:
    r"""The run's time on this server, from throughput measured here on this device (and torch's import), or why
    there is no estimate yet."""
    config = lab.live_config(page.values)
    device = _WARM.get("device")
    if device is None:
        return page.t("lab.estimate_pending")
    seconds = expected_seconds(config, lab.queue().timing(device, config.task))
    if seconds is None:
        committed = lab.committed(page.values)
        per_seed = committed["seconds"] / len(committed["seeds"])
        count = len(committed["config"]["encodings"])
        return page.t("lab.estimate_unmeasured", device=device, seconds=f"{per_seed:.0f}", count=count)
    import_note = ""
    if not _WARM_DONE.is_set():
        imported = lab.queue().import_seconds(device)
        import_note = page.t("lab.estimate_import", seconds=f"{imported:.0f}") if imported else ""
    return page.t(
        "lab.estimate", count=len(config.encodings), device=device, seconds=f"{seconds:.0f}", import_note=import_note
    )


def expected_seconds(config: LabConfig, measured: Mapping[str, float]) -> float | None:
    r"""Training (tokens × each encoding's measured seconds per token) plus evaluation (its measured seconds per
    evaluated token and model); ``None`` until a run on this device and task has been measured.

    The two are added, not scaled together: evaluation does not grow with the training steps. Measured in Chromium:
    from a 100-step run of six models, 74 s for a 300-step run that took 51 s (scaling both together: 80 s). The
    first estimate comes from the warm-up (:func:`_calibrate`), which also pays a process's one-time costs before
    any run: 36 s for a six-model run that then took 43 s on the server.
    """
    per_token = {name: 1.0 / measured[name] for name in config.encodings if name in measured}
    if not per_token or EVALUATION not in measured:
        return None
    typical = sum(per_token.values()) / len(per_token)  # for an encoding not yet timed here
    tokens = config.steps * _tokens_per_step(config)
    training = tokens * sum(per_token.get(name, typical) for name in config.encodings)
    return training + measured[EVALUATION] * len(config.encodings) * config.eval_sequences * config.eval_length


def live_panel(page: Page) -> None:
    r"""The estimate, the *Run* button and, while it runs, progress; embedded pages show results only."""
    if page.embedded:
        st.caption(page.t("lab.embedded"))
        return
    warm_up()
    if lab.live_results(page.values) is not None:
        st.success(page.t("lab.live_ready"), icon=":material/check_circle:")
        return
    if _WARM_DONE.is_set():
        st.caption(estimate(page))
    else:
        _estimate_when_warm(page.lang)
    if st.button(page.t("lab.run"), type="primary", icon=":material/play_arrow:", key="lab.run"):
        _train(page)


@st.fragment(run_every=1.0)
def _estimate_when_warm(lang: str) -> None:
    r"""Until torch is loaded (a few seconds, once per process), say so and look again every second; then rerun the
    page once, which draws the estimate and stops this polling."""
    if _WARM_DONE.is_set():
        st.rerun()
    st.caption(t("lab.estimate_pending", lang))


def _train(page: Page) -> None:
    config = lab.live_config(page.values)
    st.button(page.t("lab.cancel"), icon=":material/stop:", key="lab.cancel")  # a click reruns, which stops us
    bar = st.progress(0.0, text=page.t("lab.starting"))
    lang = page.lang  # the callbacks below hold no page (it keeps every figure of the rerun alive)
    clock: dict[str, float] = {}

    def progress(fraction: float, message: str) -> bool:  # the core's message is English: say it in the page's words
        now = time.perf_counter()
        first = clock.setdefault("time", now), clock.setdefault("fraction", fraction)
        done, elapsed = fraction - first[1], now - first[0]
        if now - clock.get("shown", -PROGRESS_INTERVAL) < PROGRESS_INTERVAL and fraction < 1.0:
            return True  # not drawn: a click on Cancel is seen at the next update, at most this interval later
        clock["shown"] = now
        step = {"count": len(config.encodings), "step": round(fraction * config.steps), "steps": config.steps}
        if done < ESTIMATING_FRACTION:
            text = t("lab.progress_estimating", lang, **step)
        else:
            text = t("lab.progress", lang, **step, remaining=f"{elapsed / done * (1.0 - fraction):.0f}")
        bar.progress(min(fraction, 1.0), text=text)
        return True

    key = config_key(config)

    def on_wait(position: int) -> bool:
        same = lab.queue().training(key)  # someone is training exactly these settings: we will share their result
        bar.progress(0.0, text=t("lab.queued_same" if same else "lab.queued", lang, position=position))
        return True

    def train() -> Mapping[str, Any]:
        from posenc_lab.train import run_lab

        results = run_lab(config, device=device, progress=progress)
        record(lab.queue(), device, results)
        return results

    with TURNS.aside():  # seconds to import torch, minutes to train: other students' pages go on meanwhile
        warm_up()
        _WARM_DONE.wait()
        device = _WARM.get("device") or _pick_device_here()
        lab.queue().run(key, device, train, on_wait=on_wait)
    st.session_state[_SWITCH_TO_LIVE] = True
    st.rerun()


def _pick_device_here() -> str:
    r"""The device, found in this thread: the background warm-up failed (its traceback is in the server's log)."""
    from posenc_core.torch_backend import pick_device

    return pick_device().type


def record(store: LabQueue, device: str, results: Mapping[str, Any]) -> None:
    r"""Training throughput per encoding, and evaluation seconds per evaluated token and model, for the next
    estimate on this device (:func:`expected_seconds`)."""
    trained = sum(run["train_seconds"] for run in results["runs"].values())
    config = LabConfig(**{**results["config"], "encodings": tuple(results["config"]["encodings"])})
    throughput = {name: run["tokens_per_second"] for name, run in results["runs"].items()}
    _store(store, device, config, throughput, max(results["seconds"] - trained, 0.0))


def _store(store: LabQueue, device: str, config: LabConfig, throughput: Mapping[str, float], evaluated: float) -> None:
    for name, tokens_per_second in throughput.items():
        store.record_timing(device, config.task, name, tokens_per_second)
    per_token = evaluated / (len(throughput) * config.eval_sequences * config.eval_length)
    store.record_timing(device, config.task, EVALUATION, per_token)


def _tokens_per_step(config: LabConfig) -> int:
    return config.batch_size * (config.train_length - 1)
