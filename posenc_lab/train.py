r"""The extrapolation lab: tiny Transformers that differ only in how they encode position, tested past their
training length, on three tasks and several seeds.

**The tasks** (lag-copy, passkey retrieval, byte-level text) and the settings are in :mod:`posenc_lab.tasks`,
which imports no torch. Every batch is made on the training device, in bulk, with no Python loop over positions.

**The models** are identical pre-LN decoders (same seed, same batches, same widths) whose position handling is one of
:data:`ENCODINGS`: none (NoPE), learned absolute (a table as long as the longest evaluation; a sequence of L tokens
feeds positions 0 … L − 2 to the model, so rows from L − 1 on are never trained — the hard wall of BERT-style tables),
sinusoidal, RoPE, ALiBi, T5's learned bucket bias, and three 2025 designs: p-RoPE (the slowest pairs stand
still), a RoPE / NoPE hybrid stack and FoX's forget gates (:mod:`posenc_lab.hooks`). Everything an encoding needs at
every step (the sinusoid table, RoPE's cos/sin, ALiBi's slopes) is a buffer made once, so a step copies nothing from
the host. After training at
``train_length`` each is scored per position out to ``eval_factor`` × that length (retrieval: per distance), and the
RoPE model is also run zero-shot at ``extension_factor`` × with PI, NTK-aware and YaRN frequencies taken from
:func:`posenc_core.rope_frequencies`.

Command line (deterministic for a seed on a given device; ``--preset gpu`` is the larger run for a CUDA machine)::

    python -m posenc_lab --task {lag,retrieval,text} --preset {tiny,cpu,gpu} --seeds N \
        --out results.json [--device cpu|cuda|mps] [--encodings none,rope,…] [--p-rope 0.5] \
        [--precision float32|tf32|bf16] [--eager]

On CUDA a training step is captured once as a CUDA graph and replayed (``--eager`` launches it op by op, as on a CPU):
on an H200 the CPU preset's whole run took 0.76 s replayed against 3.36 s op by op (``docs/benchmarks.md``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from posenc_core.errors import PosEncError
from posenc_core.rope_scaling import ROPE_REGISTRY
from posenc_core.torch_backend import pick_device

from .batches import Batches
from .model import TinyLM
from .stack import Stack
from .tasks import (
    ENCODINGS,
    EXTENSIONS,
    PRECISIONS,
    PRESETS,
    TASKS,
    LabConfig,
    batches_for,
    for_task,
    optimal_loss,
    scored_at,
)

__all__ = [
    "ENCODINGS",
    "EXTENSIONS",
    "PRECISIONS",
    "PRESETS",
    "TASKS",
    "LabCancelled",
    "LabConfig",
    "TinyLM",
    "main",
    "optimal_loss",
    "run_lab",
]


class LabCancelled(Exception):
    """Raised inside :func:`run_lab` when the progress callback asks to stop."""


# --- training and evaluation ------------------------------------------------------------------------------------

Progress = Callable[[float, str], bool]  # (fraction done, message) -> keep going?
FUSED_ADAM = ("cpu", "cuda", "mps")  # devices with PyTorch's fused Adam kernel


def run_lab(
    config: LabConfig,
    *,
    seeds: Sequence[int] | None = None,
    device: str | None = None,
    progress: Progress | None = None,
    graphed: bool | None = None,
) -> dict:
    r"""Train one model per encoding and seed, evaluate each, return everything as plain JSON-able data.

    ``runs.<encoding>.loss`` is the mean over seeds of the loss at each entry of ``positions`` (lag, text: the
    position of the predicted token; retrieval: the distance from the value to the query); ``loss_seeds`` holds each
    seed's curve. ``optimal_loss`` is aligned with ``positions`` (``None`` for text). ``graphed``: see
    :func:`_train`; every product (training and evaluation) runs at ``config.precision``.
    """
    seeds = [config.seed] if seeds is None else [int(s) for s in seeds]
    dev = pick_device(device)
    started = time.perf_counter()
    per_seed: dict[str, list[dict]] = {name: [] for name in config.encodings}
    for index, seed in enumerate(seeds):
        seeded = dataclasses.replace(config, seed=seed)
        source = batches_for(seeded, dev)
        done, total = index * config.steps, len(seeds) * config.steps
        models, trained = _train(seeded, source, progress, done=done, total=total, graphed=graphed)
        with products(config.precision, dev):
            for encoding, model in models.items():
                stats = trained[encoding] | _evaluate(model, source, seeded.eval_length)
                evaluate = functools.partial(_evaluate, model, source)  # (length, rope_type): a family's extra curves
                stats |= model.hooks.record(model, evaluate, seed == seeds[0])
                per_seed[encoding].append(stats)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    results = _results(config, seeds, dev, per_seed)
    results["graphed"] = _replayed(dev, graphed)
    results["seconds"] = time.perf_counter() - started
    return results


def _results(config: LabConfig, seeds: list[int], dev: torch.device, per_seed: dict[str, list[dict]]) -> dict:
    r"""The JSON-able results of :func:`run_lab` (all but ``seconds``): the runs merged over seeds, the axes."""
    positions = scored_at(config, config.eval_length)
    optimum = optimal_loss(config, positions)  # at each scored position or distance; None where unknown
    results: dict = {
        "task": config.task,
        "config": dataclasses.asdict(config) | {"seed": seeds[0]},
        "seeds": seeds,
        "device": str(dev),
        "torch": torch.__version__,
        "positions": positions.tolist(),
        "extension_positions": scored_at(config, config.extension_factor * config.train_length).tolist(),
        "optimal_loss": None if optimum is None else optimum.tolist(),
        "runs": {name: _merge(stats) for name, stats in per_seed.items()},
    }
    return results | dict(TASKS[config.task].record())


def _merge(stats: list[dict]) -> dict:
    r"""Per-seed results → the mean curve under each key and every seed's curve under ``<key>_seeds``."""
    merged: dict = {}
    for key in ("loss", "accuracy", "train_loss"):
        curves = np.asarray([s[key] for s in stats])
        merged[key], merged[f"{key}_seeds"] = curves.mean(axis=0).tolist(), curves.tolist()
    if "table" in stats[0]:
        merged["table"] = stats[0]["table"]  # (4 L, d) of the first seed
    merged["train_seconds"] = float(sum(s["train_seconds"] for s in stats))
    merged["tokens_per_second"] = float(np.mean([s["tokens_per_second"] for s in stats]))
    if "extension" in stats[0]:
        merged["extension"] = {}
        for kind in stats[0]["extension"]:
            runs = [s["extension"][kind] for s in stats]
            merged["extension"][kind] = {
                k: v for key in ("loss", "accuracy") for k, v in _mean_and_seeds([r[key] for r in runs], key).items()
            }
    return merged


def _mean_and_seeds(curves: list[list[float]], key: str) -> dict:
    array = np.asarray(curves)
    return {key: array.mean(axis=0).tolist(), f"{key}_seeds": array.tolist()}


def _learning_rate(config: LabConfig, step: int) -> float:
    return config.lr * min(1.0, (step + 1) / 30) * 0.5 * (1 + math.cos(math.pi * step / config.steps))


def _train(
    config: LabConfig, source: Batches, progress: Progress | None, *, done: int, total: int, graphed: bool | None = None
):
    r"""Every encoding's model for one seed, trained together as one :class:`Stack` on the same batches; returns the
    trained models by encoding and each one's training statistics. All train in the same wall time: each is credited
    an equal share of it.

    ``graphed`` (default: on CUDA) captures the training step once as a CUDA graph and replays it (:class:`_Graphed`);
    otherwise every step is launched op by op (:class:`_Eager`), the only way on a CPU or MPS."""
    device = source.device
    models = {}
    for encoding in config.encodings:
        torch.manual_seed(config.seed)  # equal shared initial weights across encodings
        models[encoding] = TinyLM(config, encoding).to(device)
    stack = Stack(list(models.values()))
    scored_by = TASKS[config.task].scored_by
    generator = torch.Generator(device=device).manual_seed(config.seed)
    graphed = _replayed(device, graphed)
    if graphed and device.type != "cuda":
        raise PosEncError(f"a training step is captured as a CUDA graph on a CUDA device only, not on {device.type}")
    losses = torch.zeros(config.steps, len(models), device=device)  # kept on the device: no wait on the host per step
    started = time.perf_counter()
    with products(config.precision, device):
        batch = source.batch(config.batch_size, config.train_length, generator)
        step = (_Graphed if graphed else _Eager)(stack, config, scored_by, batch)
        for index in range(config.steps):
            if index:
                batch = source.batch(config.batch_size, config.train_length, generator)
            losses[index] = step(batch, _learning_rate(config, index))  # 30-step warm-up, then cosine decay
            message = f"seed {config.seed}, {len(models)} models together: step {index + 1}/{config.steps}"
            if progress is not None and not progress((done + index + 1) / total, message):
                raise LabCancelled(f"cancelled at step {index + 1} of seed {config.seed}")
    stack.unstack()
    losses = losses.cpu()  # waits for the device once, at the end
    share = (time.perf_counter() - started) / len(models)
    tokens = config.steps * config.batch_size * (config.train_length - 1)
    return models, {
        member.encoding: {
            "train_loss": losses[:: max(1, config.steps // 100), e].tolist(),
            "train_seconds": share,
            "tokens_per_second": tokens / share,
        }
        for e, member in enumerate(stack.members)  # the stack's order: each loss is its member's
    }


def _replayed(device: torch.device, graphed: bool | None) -> bool:
    r"""Whether a run's step is a CUDA graph's replay: as asked, by default on CUDA."""
    return device.type == "cuda" if graphed is None else graphed


class _Eager:
    r"""One training step of the stack, op by op: returns (E,) each member's loss on ``batch`` before the step.

    No weight decay: untrained rows stay as they are. Fused Adam: one kernel for every weight (also on a CPU: twelve
    (6, 256, 64) weights took 0.6 ms a step against 2.6 ms for the default)."""

    def __init__(self, stack: Stack, config: LabConfig, scored_by: str, batch: torch.Tensor) -> None:
        self.stack, self.scored_by = stack, scored_by
        fused = batch.device.type in FUSED_ADAM
        self.optimizer = torch.optim.Adam(stack.parameters(), lr=config.lr, fused=fused)

    def __call__(self, batch: torch.Tensor, lr: float) -> torch.Tensor:
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        each = self.stack.losses(batch, self.scored_by)  # (E,)
        self.optimizer.zero_grad(set_to_none=True)
        each.sum().backward()  # the sum: each model's weights get their own loss's gradient
        self.optimizer.step()
        return each.detach()


class _Graphed:
    r"""The same step captured once as a CUDA graph and replayed: one launch a step instead of hundreds.

    A lab model is so small that a GPU spends a step launching kernels, not computing (see :mod:`posenc_lab.stack`).
    A replay runs the captured kernels on the captured tensors, so the batch is copied into a fixed input and the
    learning rate lives on the device, read by a capturable fused Adam. Capturing needs a few steps run first on a side
    stream (the allocator, cuBLAS and Adam's state settle there); those steps are undone before the capture: the
    weights are put back and Adam's moments and step count zeroed, so the run is the eager run's, up to the order of
    float sums (``tests/torch/test_lab_graph.py`` compares the two on the device)."""

    WARM_UP = 3

    def __init__(self, stack: Stack, config: LabConfig, scored_by: str, batch: torch.Tensor) -> None:
        params = list(stack.parameters())
        self.tokens = batch.clone()
        self.lr = torch.tensor(float(config.lr), device=batch.device)
        optimizer = torch.optim.Adam(params, lr=self.lr, fused=True, capturable=True)
        start = [p.detach().clone() for p in params]

        def step() -> torch.Tensor:
            each = stack.losses(self.tokens, scored_by)
            each.sum().backward()
            optimizer.step()
            return each.detach()

        side = torch.cuda.Stream(batch.device)
        side.wait_stream(torch.cuda.current_stream(batch.device))
        with torch.cuda.stream(side):
            for _ in range(self.WARM_UP):
                optimizer.zero_grad(set_to_none=True)
                step()
        torch.cuda.current_stream(batch.device).wait_stream(side)
        with torch.no_grad():
            for param, first in zip(params, start, strict=True):
                param.copy_(first)
            for state in optimizer.state.values():
                for value in state.values():
                    value.zero_()
        optimizer.zero_grad(set_to_none=True)  # the captured backward writes the gradients afresh each replay
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, capture_error_mode="thread_local"):  # other threads may use the GPU
            self.each = step()

    def __call__(self, batch: torch.Tensor, lr: float) -> torch.Tensor:
        self.tokens.copy_(batch)
        self.lr.fill_(lr)
        self.graph.replay()
        return self.each  # overwritten by the next replay: the caller copies it at once


@contextlib.contextmanager
def products(precision: str, device: torch.device) -> Iterator[None]:
    r"""The lab's float32 products run as ``precision`` says while the block runs, on CUDA
    (:data:`~posenc_lab.tasks.PRECISIONS`); elsewhere a no-op:

    - ``"float32"``: in full;
    - ``"tf32"``: matrix products on the tensor cores from TensorFloat-32 inputs (10-bit mantissas), float32 sums.
      PyTorch's switch for it is process-wide: every thread's products change while the block runs;
    - ``"bf16"``: autocast to bfloat16 (8-bit mantissas) where PyTorch's autocast lists allow it, float32 elsewhere
      (layer norms, softmax, the loss) and in the weights and Adam. Autocast is per thread. Its cache of cast weights is
      off: a weight cast once would go stale in a replayed step (PyTorch's CUDA-graph notes ask for this).
    """
    if device.type != "cuda" or precision == "float32":
        yield
    elif precision == "bf16":
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            yield
    else:
        before = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high")
        try:
            yield
        finally:
            torch.set_float32_matmul_precision(before)


@torch.no_grad()
def _evaluate(model: TinyLM, source: Batches, length: int, rope_type: str | None = None) -> dict:
    r"""Loss (nats) and accuracy at every evaluated position (retrieval: at every distance) up to ``length``."""
    model.eval()
    config = model.config
    rope = None
    if rope_type is not None:
        scaling = ROPE_REGISTRY[rope_type].scaling(
            factor=config.extension_factor, original_max_position_embeddings=config.train_length
        )
        rope = tuple(t.to(source.device) for t in model.rope_tables(length, scaling))
    if TASKS[config.task].scored_by == "distance":  # the answer alone, at each distance
        losses, hits = [], []
        for distance in scored_at(config, length):
            tokens = source.at_distance(int(distance))
            logits = _logits(model, tokens[:, :-1], rope)[:, -1]
            losses.append(F.cross_entropy(logits, tokens[:, -1]))
            hits.append((logits.argmax(-1) == tokens[:, -1]).float().mean())
        loss, accuracy = torch.stack(losses), torch.stack(hits)
    else:
        tokens = source.evaluation(length)
        logits = _logits(model, tokens[:, :-1], rope)
        target = tokens[:, 1:]
        loss = F.cross_entropy(logits.transpose(1, 2), target, reduction="none").mean(0)  # (L − 1,)
        accuracy = (logits.argmax(-1) == target).float().mean(0)
    model.train()
    return {"loss": loss.cpu().tolist(), "accuracy": accuracy.cpu().tolist()}


#: Attention scores an evaluation forward may hold at once (batch × heads × L²): 2²⁷ floats, 512 MB. The GPU preset
#: scores retrieval at 4096 tokens, where one batch of 32 sequences would need 17 GB of scores, and more for a mask.
EVAL_SCORES = 2**27


def _logits(model: TinyLM, tokens: torch.Tensor, rope: tuple | None) -> torch.Tensor:
    r"""``model(tokens)`` in chunks of sequences small enough that their attention scores fit :data:`EVAL_SCORES`."""
    n, length = tokens.shape
    rows = max(1, EVAL_SCORES // (model.config.n_heads * length * length))
    if rows >= n:
        return model(tokens, rope)
    return torch.cat([model(tokens[i : i + rows], rope) for i in range(0, n, rows)])


# --- command line -----------------------------------------------------------------------------------------------


class _Bar:
    """A text progress bar on stderr: redrawn in place on a terminal, one line per 10 % otherwise (CI logs)."""

    def __init__(self) -> None:
        self.shown = -1
        self.tty = sys.stderr.isatty()

    def __call__(self, fraction: float, message: str) -> bool:
        step = int(100 * fraction) if self.tty else 10 * int(10 * fraction)
        if step != self.shown:
            self.shown = step
            filled = int(30 * fraction)
            end = "" if self.tty else "\n"
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {step:3d}%  {message:<40}{end}")
            sys.stderr.flush()
        return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train tiny Transformers per position encoding; test past L_train.")
    parser.add_argument("--out", required=True, help="where to write the results (JSON)")
    parser.add_argument("--task", choices=tuple(TASKS), default=next(iter(TASKS)))
    parser.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    parser.add_argument("--seeds", type=int, default=1, help="how many seeds: --seed, --seed + 1, …")
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--steps", type=int, help="override the preset's training steps")
    parser.add_argument("--lag", type=int, help="the lag task's lag (default 2)")
    parser.add_argument("--encodings", help="comma-separated subset of " + ",".join(ENCODINGS))
    parser.add_argument("--p-rope", type=float, help="p-RoPE's fraction of turning pairs (default 0.75)")
    parser.add_argument(
        "--add-to", help="a results file of the same task, preset and seeds: write it with these runs added"
    )
    parser.add_argument("--device", choices=("cuda", "mps", "cpu"), help="default: CUDA, then MPS, then CPU")
    parser.add_argument("--precision", choices=PRECISIONS, help="float32 products on CUDA (default: the preset's)")
    parser.add_argument("--eager", action="store_true", help="on CUDA too, launch every op (no CUDA graph)")
    args = parser.parse_args(argv)
    overrides: dict = {"seed": args.seed}
    overrides |= {"steps": args.steps} if args.steps else {}
    overrides |= {"lag": args.lag} if args.lag else {}
    overrides |= {"p_rope": args.p_rope} if args.p_rope else {}
    overrides |= {"encodings": tuple(args.encodings.split(","))} if args.encodings else {}
    overrides |= {"precision": args.precision} if args.precision else {}
    config = dataclasses.replace(for_task(PRESETS[args.preset], args.task), **overrides)
    seeds = range(args.seed, args.seed + args.seeds)
    results = run_lab(config, seeds=seeds, device=args.device, progress=_Bar(), graphed=False if args.eager else None)
    results["command"] = "python -m posenc_lab " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.add_to:  # another run's encodings beside these (posenc_lab.runs.add_runs)
        from .runs import add_runs, read_results

        results = add_runs(read_results(args.add_to), results)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(results, f)
    sys.stderr.write(f"\nwrote {args.out} in {results['seconds']:.1f} s on {results['device']}\n")


if __name__ == "__main__":
    main()
