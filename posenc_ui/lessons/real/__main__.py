r"""``python -m posenc_ui.lessons.real [--out FILE]``: compute the shipped passage's results with the model, every
recipe at every setting the page offers, and write them (:mod:`.shipped`; about five minutes on two cores)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import model, shipped, view  # noqa: F401  (view imports every section, which registers its recipes)


def main(argv: list[str] | None = None) -> int:
    r"""Write the shipped passage's results (default: the committed file) and print where."""
    parser = argparse.ArgumentParser(prog="python -m posenc_ui.lessons.real", description=__doc__)
    parser.add_argument("--out", type=Path, default=shipped.RESULTS_FILE, help="default: the committed file")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    shipped.write(model.shared_model(), args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
