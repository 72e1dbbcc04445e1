r"""Section 6 of the real-model page, "Past the training length": the model's loss by position beyond the 8,192
positions it was trained at, as trained and under each rescaling of section 5, none fine-tuned.

A forward of ten thousand tokens takes the CPU minutes, so the section draws a committed run
(:data:`posenc_real.beyond.COMMITTED`, made by ``python -m posenc_real beyond``, its command stored inside, as the
lab's runs are); a GPU runs the same command far faster. The run reads two windows of one long text, far apart: the
band around each line spans them. Nothing here depends on the reader's text or runs the model.
"""

from __future__ import annotations

import functools

import numpy as np
import plotly.graph_objects as go

from posenc_core import rope_inv_freq, rope_wavelengths
from posenc_real.beyond import METHODS, BeyondRun, read_run, run_beyond

from ...i18n import t
from ...lesson import Check, Values, uses
from . import figures_frequencies as figs

PARAMS = ()
#: The rescalings, each drawn against the model as trained.
RESCALED = tuple(method for method in METHODS if method != "plain")
#: SmolLM2's RoPE as its config gives it (``rope_theta``, ``head_dim``; tests/real/test_beyond.py reads them off the
#: loaded model): the section's words say how far its slowest pair turns, without loading it.
THETA, HEAD_DIM = 100_000.0, 64


@functools.cache
def committed() -> BeyondRun:
    r"""The committed run, read once per process (a few kB)."""
    return read_run()


def _names(lang: str) -> dict[str, str]:
    return {method: t(f"real.rescale.method_{method}", lang) for method in RESCALED}


def _gains() -> dict[str, np.ndarray]:
    r"""Per rescaling, (windows,) how far its gain on the model as trained past L exceeds the noise of that gain."""
    run = committed()
    return {method: np.subtract(*run.shift(method)) for method in RESCALED}


def _holds() -> bool:
    r"""Whether no rescaling gains on the model as trained past L beyond noise in every window of the text."""
    return all(float(np.min(excess)) <= 0 for excess in _gains().values())


@uses()
def beyond_figure(v: Values, lang: str) -> go.Figure:
    run = committed()
    point = "holds" if _holds() else "loses"
    end = int(run.bin_start[-1] + run.bin_width)
    title = t(
        f"real.beyond.fig_{point}",
        lang,
        factor=f"{run.factor:g}",
        length=f"{run.training_length:,}",
        end=f"{end:,}",
    )
    return figs.beyond(run, names=_names(lang), colours=figs.METHOD_COLOURS, hidden=("linear",), title=title, lang=lang)


@uses()
def check_beyond(v: Values) -> Check:
    r"""Past the training length no rescaling gains on the model as trained by more than the noise of that gain in
    every window of the text (:meth:`~posenc_real.beyond.BeyondRun.shift`): residual = the largest, over rescalings,
    of the smaller excess over noise of its two windows (nats per token); at most 0 when the model holds."""
    run = committed()
    words = {}
    for method in RESCALED:
        shift, noise = run.shift(method)
        words[method] = " / ".join(f"{s:+.3f} (±{n:.3f})" for s, n in zip(shift, noise, strict=True))
    return Check(
        key="real.beyond.check",
        residual=float(max(np.min(excess) for excess in _gains().values())),
        tolerance=0.0,
        fmt={"length": f"{run.training_length:,}", "factor": f"{run.factor:g}"} | words,
    )


def measured(lang: str) -> dict[str, str]:
    r"""What the words under the figure say, from the run: YaRN's gain and its noise per window, how far the run
    reaches, and how far the slowest pair turns (λ = 2π/θ from :func:`posenc_core.rope_wavelengths`)."""
    run = committed()
    shift, noise = run.shift("yarn")
    slowest = float(rope_wavelengths(rope_inv_freq(HEAD_DIM, base=THETA)).max())
    end = int(run.bin_start[-1] + run.bin_width)
    return {
        "gain": " / ".join(f"{value:+.3f}" for value in shift),
        "noise": " / ".join(f"{value:.3f}" for value in noise),
        "beyond_noise": str(int(np.sum(shift > noise))),
        "windows": str(shift.size),
        "end": f"{end:,}",
        "length": f"{run.training_length:,}",
        "slowest": f"{slowest:,.0f}",
        "turn_trained": f"{run.training_length / slowest:.3f}",
        "turn_end": f"{end / slowest:.3f}",
    }


def shown(lang: str) -> dict[str, object]:
    r"""What made the committed run, for the words under its figure."""
    run = committed()
    meta = run.meta
    return {
        "windows": len(meta["text"]["starts"]),
        "bin": run.bin_width,
        "factor": f"{run.factor:g}",
        "command": meta["command"],
        "seconds": f"{meta['seconds']:,.0f}",
        "device": meta["device"],
        "torch": meta["torch"],
        "transformers": meta["transformers"],
        "python": meta["text"]["python"],
        "tokens": f"{meta['text']['tokens']:,}",
        "starts": ", ".join(f"{start:,}" for start in meta["text"]["starts"]),
    }


FIGURES = {"beyond": beyond_figure}
CHECKS = {"beyond": check_beyond}
SWEEPS: dict[str, str] = {}
STATIC = {"beyond": "a committed run (the same for every reader)"}
SOURCES = (run_beyond, BeyondRun.shift)
