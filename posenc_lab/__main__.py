r"""``python -m posenc_lab --task … --preset … --seeds N --out results.json``: train and evaluate, write JSON."""

from .train import main

main()
