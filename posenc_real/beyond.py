r"""Past the training length: the real model's loss by position on a long text, beyond its 8,192 trained positions,
as trained and under each rescaling of :data:`posenc_real.rescale.RESCALINGS` (base × k, PI, dynamic NTK, YaRN), none
fine-tuned. The groundwork of the page's section 6: ``python -m posenc_real beyond`` runs it and writes a committed-run
JSON (its command stored inside, as the lab's runs are, :mod:`posenc_lab.runs`).

The long text is the Python documentation's topics as every Python ships them (``pydoc_data.topics``, under the
Python Software Foundation License), joined in the order of their names: prose and code, ~110,000 tokens in all, of
which the run reads the first ``tokens``. Every number comes from transformers' own forward, with the rotary
embedding transformers builds for each method's ``rope_parameters`` swapped in (:mod:`.intervene`); at these lengths
the attention runs through PyTorch's scaled-dot-product kernel (``sdpa``: no L × L weights kept), switched on for the
run and back to eager after it.

What it costs: a forward's attention is ~4·L²·(9·64) multiply-adds per layer, 7.4·10¹³ for 30 layers at L = 32,768;
at the ~50 GFLOP/s two shared CPU cores give, ~25 min a forward, ~2 h for the five methods (estimated). Measured on
the 2-core machine, shared meanwhile: two windows of 10,240 tokens, all five methods, 1,708 s. A GPU is far faster
(not measured here): run it where there is one (``--device cuda``).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .intervene import MODEL_LOCK, rotary_swapped, token_losses
from .load import RealModel, load_model, tokenize
from .rescale import RESCALINGS, rescaled_rotary

__all__ = [
    "COMMITTED",
    "METHODS",
    "TEXT_SOURCE",
    "BeyondRun",
    "long_text_ids",
    "loss_by_position",
    "main",
    "read_run",
    "run_beyond",
]

#: Where the long text comes from (shipped with Python itself).
TEXT_SOURCE = "Python's pydoc_data.topics (the documentation topics every Python ships; PSF License), joined by name"
#: The methods of a run: the model as trained, then every rescaling at the run's factor.
METHODS = ("plain", *RESCALINGS)
#: The committed run the page draws (made on a CPU; its command is stored inside).
COMMITTED = Path(__file__).resolve().parents[1] / "assets" / "real" / "beyond_cpu.json"


@dataclass(frozen=True)
class BeyondRun:
    r"""A run read back: ``loss[method]`` is (windows, bins), the mean loss (nats per token) of each bin of
    ``bin_width`` positions starting at ``bin_start``; ``meta`` is the rest of the JSON (command, device, text…)."""

    training_length: int
    factor: float
    bin_width: int
    bin_start: np.ndarray  # (bins,)
    loss: dict[str, np.ndarray]  # method → (windows, bins)
    meta: dict[str, Any]

    @property
    def past(self) -> np.ndarray:
        r"""(bins,) whether each bin starts at or past the training length."""
        return self.bin_start >= self.training_length

    def gap(self, method: str) -> np.ndarray:
        r"""(windows, bins) ``method``'s loss less the model's as trained, bin by bin (nats per token)."""
        return self.loss[method] - self.loss["plain"]

    def shift(self, method: str) -> tuple[np.ndarray, np.ndarray]:
        r"""Per window, how much further below the model as trained ``method``'s loss sits past the training length
        than inside it, and the noise of that number (nats per token).

        With :math:`d_b` its :meth:`gap` in bin b: shift = mean of :math:`d_b` over the bins inside L less their mean
        over the bins past L, so a positive shift is ground the model as trained lost past L. The noise is two
        standard errors of that difference of means, :math:`2 s \sqrt{1/n_{<L} + 1/n_{\ge L}}`, with s the standard
        deviation of :math:`d_b` over the bins inside L (bins treated as independent, which neighbouring bins of one
        text are not quite). A model that broke down past L would let every rescaling that holds shift by far more."""
        gap = self.gap(method)
        inside, past = gap[:, ~self.past], gap[:, self.past]
        shift = inside.mean(axis=1) - past.mean(axis=1)
        noise = 2 * inside.std(axis=1, ddof=1) * np.sqrt(1 / inside.shape[1] + 1 / past.shape[1])
        return shift, noise


def read_run(path: Path = COMMITTED) -> BeyondRun:
    r"""The run written by :func:`main` at ``path``; ``ValueError`` if it has no bin past the training length."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    run = BeyondRun(
        training_length=int(data["training_length"]),
        factor=float(data["factor"]),
        bin_width=int(data["bin_width"]),
        bin_start=np.asarray(data["bin_start"], dtype=np.int64),
        loss={method: np.asarray(data["methods"][method]["loss"], dtype=np.float64) for method in METHODS},
        meta={key: value for key, value in data.items() if key != "methods"},
    )
    past = int(run.past.sum())
    if past == 0 or run.bin_start.size - past < 2:
        raise ValueError(f"{path}: {past} bins past the training length; the run needs some, and two before it")
    return run


def long_text_ids(real: RealModel, tokens: int, *, start: int = 0) -> np.ndarray:
    r"""(tokens,) the token ids of the long text (:data:`TEXT_SOURCE`) from token ``start``; an error if it is
    shorter."""
    import pydoc_data.topics as topics

    text = "\n\n".join(topics.topics[name] for name in sorted(topics.topics))
    ids = tokenize(real, text)
    if ids.size < start + tokens:
        raise ValueError(f"the long text has {ids.size} tokens, fewer than the {start + tokens} asked for")
    return ids[start : start + tokens]


def loss_by_position(real: RealModel, ids: np.ndarray, method: str, factor: float) -> np.ndarray:
    r"""(L − 1,) −log p(next token) at each position, as trained (``"plain"``) or under ``method`` at ``factor``."""
    if method == "plain":
        return token_losses(real, ids)
    with rotary_swapped(real, rescaled_rotary(real, method, factor)):
        return token_losses(real, ids)


def _bins(losses: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean loss per bin of ``width`` positions, and each bin's first position (a partial last bin is dropped)."""
    count = losses.size // width
    return losses[: count * width].reshape(count, width).mean(axis=1), np.arange(count) * width


def run_beyond(
    real: RealModel, *, tokens: int, factor: float, bin_width: int, starts: tuple[int, ...] = (0,)
) -> dict[str, Any]:
    r"""The run's results: per method and per window of the long text (one from each of ``starts``) the mean loss in
    each bin of positions, with the settings that made it. Two windows far apart are two texts on other topics: the
    spread between them is what one text alone cannot show."""
    import torch
    import transformers

    windows = [long_text_ids(real, tokens, start=start) for start in starts]
    began = time.perf_counter()
    methods: dict[str, Any] = {}
    with MODEL_LOCK:
        real.model.set_attn_implementation("sdpa")
        try:
            for method in METHODS:
                binned = []
                for ids in windows:
                    loss, first = _bins(loss_by_position(real, ids, method, factor), bin_width)
                    binned.append(loss.tolist())
                settings = None
                if method != "plain":
                    settings = RESCALINGS[method].parameters(real.rope_theta, factor, real.max_position_embeddings)
                methods[method] = {"rope_parameters": settings, "loss": binned}
                print(f"[{time.perf_counter() - began:7.0f} s] {method}", file=sys.stderr, flush=True)
        finally:
            real.model.set_attn_implementation("eager")
    return {
        "model": real.name,
        "quantization": real.quantization,
        "training_length": real.max_position_embeddings,
        "text": {"source": TEXT_SOURCE, "python": platform.python_version(), "tokens": tokens, "starts": list(starts)},
        "factor": factor,
        "bin_width": bin_width,
        "bin_start": first.tolist(),
        "methods": methods,
        "device": real.device,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "seconds": time.perf_counter() - began,
    }


def main(argv: list[str] | None = None) -> int:
    r"""``python -m posenc_real beyond``: the loss by position past 8,192 tokens, as trained and under each rescaling,
    written as a committed-run JSON with the command that made it."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m posenc_real beyond", description=main.__doc__)
    parser.add_argument("--tokens", type=int, default=32_768, help="how many tokens of the long text (default 32768)")
    parser.add_argument("--factor", type=float, default=4.0, help="every rescaling's factor k (default 4)")
    parser.add_argument("--bin", type=int, default=512, dest="bin_width", help="positions per bin (default 512)")
    parser.add_argument("--starts", type=int, nargs="+", default=[0], help="first token of each window (default 0)")
    parser.add_argument("--device", default=None, help="cuda, mps or cpu (default: the first there is)")
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    args = parser.parse_args(argv)
    if args.tokens < 2 * args.bin_width or args.factor < 1:
        parser.error("--tokens must be at least two bins, --factor at least 1")
    real = load_model(name="", device=args.device)
    results = run_beyond(
        real, tokens=args.tokens, factor=args.factor, bin_width=args.bin_width, starts=tuple(args.starts)
    )
    results["command"] = " ".join(["python -m posenc_real beyond", *argv])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(
        f"{args.out}: {len(METHODS)} methods, {len(args.starts)} windows of {args.tokens} tokens, "
        f"{results['seconds']:.0f} s on {real.device}"
    )
    return 0
