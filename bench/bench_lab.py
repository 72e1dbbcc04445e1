r"""The extrapolation lab's whole run, timed per preset and device, side by side in one process.

    python bench/bench_lab.py                        # the CPU preset (the page's live default) on every device here
    python bench/bench_lab.py --preset gpu           # the larger run, on CUDA (add --devices cpu,cuda to compare)
    python bench/bench_lab.py --task text --steps 50 # any task; fewer steps for a quick look

For each device it runs :func:`posenc_core.torch_backend.lab.run_lab` once, exactly as the page's *Run* button does
(data made on the device, every encoding trained and evaluated), and prints the whole run's wall time, the training
throughput per encoding, and the GPU / CPU ratio when both ran. The first run on a device pays for its warm-up
(allocator, kernels); ``--repeat 2`` reports the better of two. torch's import is timed once, as the page pays it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

started = time.perf_counter()
import torch  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - started

from posenc_core.lab_task import PRESETS, TASKS, for_task  # noqa: E402
from posenc_core.torch_backend.lab import run_lab  # noqa: E402


def available_devices() -> list[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        devices.append("mps")
    return devices


def timed_run(config, device: str, repeat: int) -> dict:
    r"""The best of ``repeat`` whole runs on ``device``: wall seconds, training seconds, tokens/s per encoding."""
    best: dict | None = None
    for _ in range(repeat):
        start = time.perf_counter()
        results = run_lab(config, device=device)
        wall = time.perf_counter() - start
        row = {
            "device": results["device"],
            "wall_seconds": wall,
            "train_seconds": sum(run["train_seconds"] for run in results["runs"].values()),
            "tokens_per_second": {name: run["tokens_per_second"] for name, run in results["runs"].items()},
        }
        if best is None or wall < best["wall_seconds"]:
            best = row
    assert best is not None
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Time the extrapolation lab's whole run per preset and device.")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    ap.add_argument("--task", choices=TASKS, default="lag")
    ap.add_argument("--steps", type=int, help="override the preset's steps")
    ap.add_argument("--devices", help="comma-separated (default: every device here; the GPU preset: CUDA only)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    config = for_task(PRESETS[args.preset], args.task)
    if args.steps:
        config = dataclasses.replace(config, steps=args.steps)
    devices = args.devices.split(",") if args.devices else available_devices()
    if args.preset == "gpu" and not args.devices:
        devices = [d for d in devices if d != "cpu"] or ["cpu"]
    print(f"torch {torch.__version__}: import {IMPORT_SECONDS:.2f} s; preset {args.preset}, task {args.task}, "
          f"{len(config.encodings)} encodings × {config.steps} steps, threads {torch.get_num_threads()}")  # fmt: skip
    rows = {device: timed_run(config, device, args.repeat) for device in devices}
    for device, row in rows.items():
        speeds = ", ".join(f"{name} {tps / 1e3:.0f}k" for name, tps in row["tokens_per_second"].items())
        print(f"{device:5s} whole run {row['wall_seconds']:7.2f} s (training {row['train_seconds']:.2f} s); "
              f"tokens/s: {speeds}")  # fmt: skip
        if device != "cpu" and "cpu" in rows:
            ratio = rows["cpu"]["wall_seconds"] / row["wall_seconds"]
            print(f"      {device} / cpu: {ratio:.1f}× faster, whole run, same process")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"import_seconds": IMPORT_SECONDS, "preset": args.preset, "task": args.task, "runs": rows}, fh)


if __name__ == "__main__":
    main(sys.argv[1:])
