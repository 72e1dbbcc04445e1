r"""Benchmarks of posenc_core, each printed as a ratio measured side by side in one run.

    python bench/bench_core.py            # the figures in the README and docs/benchmarks.md
    python bench/bench_core.py --quick    # small sizes, a smoke run (used by the test suite)

Every timing is the best of several interleaved repetitions (``time.perf_counter``), so the two sides of a ratio
see the same machine state; the RoPE score matrix also prints the median of its per-round ratios. Peak memory is
tracemalloc's peak (NumPy reports its buffers to it).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

import posenc_core as pc


def syllabus_apply_rope(x: np.ndarray, pos: float, dim: int, theta_base: float = 10000.0) -> np.ndarray:
    """The baseline: the per-element loop of the article 「从零学习大模型--旋转位置编码」, one vector at one position
    (interleaved pairs)."""
    theta = pos / (theta_base ** (2 * np.arange(dim // 2) / dim))
    cos_t = np.cos(theta)
    sin_t = np.sin(theta)
    x_rot = np.zeros_like(x)
    for i in range(dim // 2):
        x_rot[2 * i] = cos_t[i] * x[2 * i] - sin_t[i] * x[2 * i + 1]
        x_rot[2 * i + 1] = sin_t[i] * x[2 * i] + cos_t[i] * x[2 * i + 1]
    return x_rot


def rounds(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """Wall time of each function in each of ``repeat`` rounds, the functions interleaved round by round."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def best_of(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best wall time of each function, the functions interleaved round by round."""
    return {name: min(times) for name, times in rounds(fns, repeat).items()}


def peak_mib(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def bench_apply_rope(length: int, dim: int, repeat: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((length, dim))
    positions = np.arange(length, dtype=np.float64)
    inv_freq = pc.rope_inv_freq(dim)
    loop = lambda: [syllabus_apply_rope(x[p], p, dim) for p in range(length)]  # noqa: E731
    t = best_of(
        {"loop": loop, "apply_rope": lambda: pc.apply_rope(x, positions, inv_freq, pairing="interleaved")},
        repeat,
    )
    # the same numbers: the loop is interleaved pairing at base 10^4
    got = pc.apply_rope(x, positions, inv_freq, pairing="interleaved")
    ref = np.stack(loop())
    return {**t, "ratio": t["loop"] / t["apply_rope"], "max_abs_diff": float(np.max(np.abs(got - ref)))}


def bench_scores(length: int, dim: int, repeat: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((length, dim)), rng.standard_normal((length, dim))
    inv_freq = pc.rope_inv_freq(dim)
    fns = {"matmul": lambda: q @ k.T, "rope_scores": lambda: pc.rope_scores(q, k, inv_freq, scale=1.0)}
    times = rounds(fns, repeat)
    # One round's two calls see the same machine state, so the ratio within a round cancels the drifts that move a
    # best-of-n on a shared machine (the plain product's best moved 66–91 ms between runs of one hour).
    paired = sorted(s / m for m, s in zip(times["matmul"], times["rope_scores"], strict=True))
    best = {name: min(ts) for name, ts in times.items()}
    return {
        **best,
        "ratio": best["rope_scores"] / best["matmul"],
        "ratio_paired_median": float(np.median(paired)),
        "ratio_paired_range": [paired[0], paired[-1]],
    }


def bench_far_positions(length: int, dim: int, start: float) -> dict[str, float]:
    """Agreement of the fast rotation with direct float64 cos/sin at positions beyond ``start``."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((length, dim))
    positions = start + np.arange(length, dtype=np.float64)
    inv_freq = pc.rope_inv_freq(dim)
    angles = np.multiply.outer(positions, inv_freq)
    half = dim // 2
    x1, x2 = x[:, :half], x[:, half:]
    direct = np.concatenate([x1 * np.cos(angles) - x2 * np.sin(angles), x1 * np.sin(angles) + x2 * np.cos(angles)], 1)
    return {"start": start, "max_abs_diff": float(np.max(np.abs(pc.apply_rope(x, positions, inv_freq) - direct)))}


def bench_decay(n_distances: int, dim: int, repeat: int) -> dict[str, float]:
    distances = np.arange(n_distances, dtype=np.float64)
    inv_freq = pc.rope_inv_freq(dim)
    t = best_of(
        {
            "bound": lambda: pc.rope_decay_bound(distances, inv_freq),
            "all_ones": lambda: pc.rope_decay_all_ones(distances, inv_freq),
        },
        repeat,
    )
    return {**t, "peak_mib_bound": peak_mib(lambda: pc.rope_decay_bound(distances, inv_freq))}


def bench_sinusoidal(length: int, dim: int, repeat: int) -> dict[str, float]:
    omega = pc.sinusoidal_inv_freq(dim)
    angles = np.multiply.outer(np.arange(length, dtype=np.float64), omega)
    angles32 = angles.astype(np.float32)
    t = best_of(
        {
            "sinusoidal": lambda: pc.sinusoidal(length, dim),
            "sin+cos float64": lambda: (np.sin(angles), np.cos(angles)),
            "sin+cos float32": lambda: (np.sin(angles32), np.cos(angles32)),
        },
        repeat,
    )
    return {**t, "ratio_vs_sincos64": t["sinusoidal"] / t["sin+cos float64"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    q = args.quick
    results = {
        "machine": f"{platform.machine()}, {platform.python_version()}, numpy {np.__version__}",
        "apply_rope_vs_loop (L=4096, d=128)": bench_apply_rope(256 if q else 4096, 128, 2 if q else 5),
        "rope_scores_vs_matmul (L=4096, d=128)": bench_scores(256 if q else 4096, 128, 2 if q else 15),
        "far_positions (L=4096, d=128)": [bench_far_positions(256 if q else 4096, 128, s) for s in (1e5, 1e6)],
        "decay_curve (10^6 distances, d=128)": bench_decay(10_000 if q else 10**6, 128, 1 if q else 3),
        "sinusoidal_table (65536 x 1024)": bench_sinusoidal(512 if q else 65536, 64 if q else 1024, 1 if q else 3),
    }
    for name, value in results.items():
        print(f"{name}: {json.dumps(value, default=float)}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2, default=float)


if __name__ == "__main__":
    main()
