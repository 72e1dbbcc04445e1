r"""The lab's live run: a button that trains the models with the reader's settings, with progress, cancel and a
time estimate; the results go to the server-wide :data:`posenc_ui.views.lab.STORE`, one entry per configuration.

torch is imported here, inside :func:`_train`, and nowhere else in the app: opening the lab costs nothing until the
reader asks for a live run. Cancelling needs no code: pressing *Cancel* (or leaving the page) makes Streamlit rerun
the script, which stops this run at its next progress update; nothing half-trained is stored. Runs are serialised
by one lock, so a class pressing *Run* together trains one configuration at a time instead of thrashing the CPU;
while it trains (or waits to), the page gives up its turn (:mod:`posenc_ui.turns`) so other students' pages go on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import streamlit as st

from .frame import Page
from .turns import TURNS
from .views.lab import STORE, committed, gaps, live_config, shown_results

_RUN_LOCK = threading.Lock()
_SWITCH_TO_LIVE = "_posenc_lab_switch_to_live"


def apply_pending(page: Page) -> None:
    r"""After a finished run, show its results: flip the *source* widget to "live" before it is drawn."""
    if st.session_state.pop(_SWITCH_TO_LIVE, False):
        page.set("source", "live")


def source_notice(page: Page) -> None:
    r"""Say which results are on screen when "live" is chosen but these settings have not been run yet."""
    if page.values["source"] == "live" and STORE.get(live_config(page.values)) is None:
        st.info(page.t("lab.no_live_run"), icon=":material/info:")


def gap_table(page: Page, results: Mapping[str, Any] | None = None) -> None:
    r"""Mean loss above the optimum per encoding, inside the training length and in each doubling beyond it."""
    table = gaps(results or shown_results(page.values))
    rows = {page.t(f"enc.{name}"): {page.t(f"lab.band.{band}") if band == "inside" else f"{band} L": value
                                    for band, value in bands.items()} for name, bands in table.items()}  # fmt: skip
    st.dataframe(rows, width="stretch", column_config={"_index": page.t("axis.encoding")}, key="lab.gaps")
    st.caption(page.t("lab.gap_caption"))


def estimate_seconds(page: Page) -> float:
    r"""Training time of the chosen run, from the throughput of the last run on this server (or the committed one)."""
    config = live_config(page.values)
    measured = _last_throughput()
    tokens = config.steps * config.batch_size * (config.train_length - 1)
    return sum(tokens / measured.get(name, min(measured.values())) for name in config.encodings)


def _last_throughput() -> dict[str, float]:
    latest = STORE.latest() or committed()
    return {name: run["tokens_per_second"] for name, run in latest["runs"].items()}


def live_panel(page: Page) -> None:
    r"""Settings are the page's controls; this draws the estimate, the *Run* button and, while it runs, progress."""
    if page.embedded:  # an embedded page shows results only: no class-wide training from an iframe
        return
    config = live_config(page.values)
    if STORE.get(config) is not None:
        st.success(page.t("lab.live_ready"), icon=":material/check_circle:")
        return
    st.caption(page.t("lab.estimate", seconds=f"{estimate_seconds(page):.0f}", count=len(config.encodings)))
    if st.button(page.t("lab.run"), type="primary", icon=":material/play_arrow:", key="lab.run"):
        _train(page, config)


def _train(page: Page, config) -> None:
    st.button(page.t("lab.cancel"), icon=":material/stop:", key="lab.cancel")  # a click reruns, which stops us
    bar = st.progress(0.0, text=page.t("lab.starting"))
    started = time.perf_counter()

    def progress(fraction: float, message: str) -> bool:
        elapsed = time.perf_counter() - started
        remaining = elapsed / max(fraction, 1e-6) * (1.0 - fraction)
        bar.progress(min(fraction, 1.0), text=page.t("lab.progress", message=message, remaining=f"{remaining:.0f}"))
        return True

    with TURNS.aside():  # seconds to import torch, minutes to train: other students' pages go on meanwhile
        from posenc_core.torch_backend.lab import run_lab  # torch: only now

        while not _RUN_LOCK.acquire(timeout=0.5):
            bar.progress(0.0, text=page.t("lab.waiting"))
        try:
            results = run_lab(config, progress=progress)
        finally:
            _RUN_LOCK.release()
    STORE.put(config, results)
    st.session_state[_SWITCH_TO_LIVE] = True
    st.rerun()
