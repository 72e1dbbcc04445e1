r"""The extrapolation lab's whole run, timed per preset and device, side by side in one process.

    python bench/bench_lab.py                        # the CPU preset's six (the page's live default), every device here
    python bench/bench_lab.py --all                  # all nine encodings, the 2025 designs included
    python bench/bench_lab.py --preset gpu           # the larger run, on CUDA (add --devices cpu,cuda to compare)
    python bench/bench_lab.py --task text --steps 50 # any task; fewer steps for a quick look

For each device it runs :func:`posenc_lab.train.run_lab` once, exactly as the page's *Run* button does
(data made on the device, every encoding trained and evaluated), and prints the whole run's wall time, the training
throughput per encoding, and the GPU / CPU ratio when both ran. The first run on a device pays for its warm-up
(allocator, kernels); ``--repeat 2`` reports the better of two. torch's import is timed once, as the page pays it.

``--baseline`` also times the training alone both ways, taking turns in the same process on the same batches: every
encoding stacked into one model (:class:`posenc_lab.stack.Stack`, what the lab does) against the
models trained one after another, as the lab did before (each with its own Adam), and prints the ratio.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's packages, not an installed copy

started = time.perf_counter()
import torch  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - started

import torch.nn.functional as F  # noqa: E402

from posenc_core.torch_backend import pick_device  # noqa: E402
from posenc_lab.tasks import ENCODINGS, LIVE_DEFAULT, PRESETS, TASKS, LabConfig, batches_for, for_task  # noqa: E402
from posenc_lab.train import PRECISIONS, TinyLM, _learning_rate, _train, run_lab  # noqa: E402


def available_devices() -> list[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        devices.append("mps")
    return devices


def timed_run(config, device: str, repeat: int, graphed: bool | None = None) -> dict:
    r"""The best of ``repeat`` whole runs on ``device``: wall seconds, training seconds, tokens/s per encoding."""
    best: dict | None = None
    for _ in range(repeat):
        start = time.perf_counter()
        results = run_lab(config, device=device, graphed=graphed)
        wall = time.perf_counter() - start
        row = {
            "device": results["device"],
            "device_name": device_name(device),
            "graphed": results["graphed"],
            "wall_seconds": wall,
            "train_seconds": sum(run["train_seconds"] for run in results["runs"].values()),
            "tokens_per_second": {name: run["tokens_per_second"] for name, run in results["runs"].items()},
        }
        if best is None or wall < best["wall_seconds"]:
            best = row
    assert best is not None
    return best


def device_name(device: str) -> str:
    r"""The card's own name on CUDA (the figures depend on it); the device's kind elsewhere."""
    return torch.cuda.get_device_name() if device == "cuda" else device


def variants(devices: list[str], eager: bool) -> dict[str, tuple[str, bool | None]]:
    r"""What to time, by label: each device as the lab runs it; with ``eager``, CUDA op by op as well (no graph)."""
    rows: dict[str, tuple[str, bool | None]] = {device: (device, None) for device in devices}
    if eager and "cuda" in devices:
        rows["cuda-eager"] = ("cuda", False)
    return rows


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def train_stacked(config: LabConfig, device: torch.device) -> float:
    r"""Seconds to train every encoding of ``config`` as the lab does: stacked, one step for all."""
    source = batches_for(config, device)
    _synchronize(device)
    start = time.perf_counter()
    _train(config, source, None, done=0, total=config.steps)
    _synchronize(device)
    return time.perf_counter() - start


def train_one_by_one(config: LabConfig, device: torch.device) -> float:
    r"""Seconds to train the same models on the same batches one after another, each with its own Adam: the lab's
    trainer before stacking, kept here as the baseline."""
    source = batches_for(config, device)
    _synchronize(device)
    start = time.perf_counter()
    for encoding in config.encodings:
        torch.manual_seed(config.seed)
        model = TinyLM(config, encoding).to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
        generator = torch.Generator(device=device).manual_seed(config.seed)
        for step in range(config.steps):
            for group in optimizer.param_groups:
                group["lr"] = _learning_rate(config, step)
            tokens = source.batch(config.batch_size, config.train_length, generator)
            logits = model(tokens[:, :-1])
            if TASKS[config.task].scored_by == "distance":
                loss = F.cross_entropy(logits[:, -1], tokens[:, -1])
            else:
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    _synchronize(device)
    return time.perf_counter() - start


def compare_trainers(config: LabConfig, device: str, repeat: int) -> dict:
    r"""The best of ``repeat`` turns of each trainer, alternating, on ``device``."""
    dev = pick_device(device)
    stacked, alone = [], []
    for _ in range(repeat):
        stacked.append(train_stacked(config, dev))
        alone.append(train_one_by_one(config, dev))
    return {"stacked_seconds": min(stacked), "one_by_one_seconds": min(alone)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Time the extrapolation lab's whole run per preset and device.")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    ap.add_argument("--task", choices=tuple(TASKS), default="lag")
    ap.add_argument("--steps", type=int, help="override the preset's steps")
    ap.add_argument("--devices", help="comma-separated (default: every device here; the GPU preset: CUDA only)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--baseline", action="store_true", help="also time training stacked against one by one")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--all", action="store_true", help="every lab encoding, not the live run's default six")
    ap.add_argument("--precision", choices=PRECISIONS, help="float32 products on CUDA (default: the preset's)")
    ap.add_argument("--eager", action="store_true", help="on CUDA, also time the run launched op by op (no graph)")
    args = ap.parse_args(argv)
    # the page's live default trains the families not marked lab_opt_in; --all adds the 2025 designs
    config = dataclasses.replace(
        for_task(PRESETS[args.preset], args.task), encodings=ENCODINGS if args.all else LIVE_DEFAULT
    )
    if args.steps:
        config = dataclasses.replace(config, steps=args.steps)
    if args.precision:
        config = dataclasses.replace(config, precision=args.precision)
    devices = args.devices.split(",") if args.devices else available_devices()
    if args.preset == "gpu" and not args.devices:
        devices = [d for d in devices if d != "cpu"] or ["cpu"]
    print(
        f"torch {torch.__version__}: import {IMPORT_SECONDS:.2f} s; preset {args.preset}, task {args.task}, "
        f"{len(config.encodings)} encodings × {config.steps} steps, products {config.precision}, "
        f"threads {torch.get_num_threads()}"
    )
    rows = {
        label: timed_run(config, device, args.repeat, graphed)
        for label, (device, graphed) in variants(devices, args.eager).items()
    }
    for label, row in rows.items():
        tokens = len(config.encodings) * config.steps * config.batch_size * (config.train_length - 1)
        how = "CUDA graph" if row["graphed"] else "op by op"
        print(
            f"{label:10s} whole run {row['wall_seconds']:7.2f} s (training {row['train_seconds']:.2f} s, "
            f"{tokens / row['train_seconds'] / 1e3:.0f}k tokens/s over all encodings; {row['device_name']}, {how})"
        )
        if label != "cpu" and "cpu" in rows:
            ratio = rows["cpu"]["wall_seconds"] / row["wall_seconds"]
            print(f"           {label} / cpu: {ratio:.1f}× faster, whole run, same process")
    if "cuda-eager" in rows:
        ratio = rows["cuda-eager"]["wall_seconds"] / rows["cuda"]["wall_seconds"]
        print(f"           cuda graph / op by op: {ratio:.2f}× faster, whole run, same process")
    if args.baseline:
        for label, row in rows.items():
            row["trainers"] = compare_trainers(config, variants(devices, args.eager)[label][0], max(args.repeat, 1))
            both = row["trainers"]
            print(
                f"{label:10s} training: stacked {both['stacked_seconds']:.2f} s, one by one "
                f"{both['one_by_one_seconds']:.2f} s: "
                f"{both['one_by_one_seconds'] / both['stacked_seconds']:.2f}× faster stacked"
            )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"import_seconds": IMPORT_SECONDS, "preset": args.preset, "task": args.task, "runs": rows}, fh)


if __name__ == "__main__":
    main(sys.argv[1:])
