r"""Training throughput of the extrapolation lab, per position encoding, on the CPU and (when present) the GPU.

    python bench/bench_lab.py                 # the CPU preset's model, 60 steps per encoding
    python bench/bench_lab.py --preset gpu    # the larger configuration, on CUDA when there is one

Prints tokens/s per encoding and device, and the GPU / CPU speed-up when both ran. Throughput excludes the first
steps (allocator and kernel warm-up).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import torch

from posenc_core.torch_backend import pick_device
from posenc_core.torch_backend.lab import PRESETS, TinyLM, sample_batch


def tokens_per_second(config, encoding: str, device: torch.device, steps: int, warmup: int = 5) -> float:
    torch.manual_seed(config.seed)
    model = TinyLM(config, encoding).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    generator = torch.Generator().manual_seed(config.seed)
    batches = [sample_batch(config, config.train_length, config.batch_size, generator) for _ in range(steps + warmup)]
    for n, tokens in enumerate(batches):
        if n == warmup:
            if device.type == "cuda":
                torch.cuda.synchronize()
            started = time.perf_counter()
        tokens = tokens.to(device)
        logits = model(tokens[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, config.vocab_size), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps * config.batch_size * (config.train_length - 1) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    config = PRESETS[args.preset]
    devices = [torch.device("cpu")] + ([pick_device()] if pick_device().type != "cpu" else [])
    results = {}
    for device in devices:
        for encoding in config.encodings:
            results[f"{device.type}/{encoding}"] = tokens_per_second(config, encoding, device, args.steps)
            print(f"{device.type:5s} {encoding:11s} {results[f'{device.type}/{encoding}']:12,.0f} tokens/s", flush=True)
    if len(devices) == 2:
        for encoding in config.encodings:
            speedup = results[f"{devices[1].type}/{encoding}"] / results[f"cpu/{encoding}"]
            print(f"speed-up {encoding:11s} {speedup:8.1f}x")
    print(json.dumps({"preset": args.preset, "config": dataclasses.asdict(config), "tokens_per_second": results}))


if __name__ == "__main__":
    main()
