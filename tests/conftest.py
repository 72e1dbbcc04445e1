"""Test-suite settings shared by every directory.

The suite runs on one worker per core (pytest-xdist, ``-n auto`` in ``pyproject.toml``), a test file at a time to
each, except that every file that runs torch (the lab's models, the real model, transformers' own modules) goes to one
worker, one after another: two workers running torch at once on two cores ran the real model's tests five times
slower (each torch took both cores). Under the workers every library runs its maths on one thread, one per core.

Under CI (``CI=true``) hypothesis runs derandomized: the same examples on every run, so a red CI always means a
change broke something, never that a new random draw found an old rare case. Locally it keeps exploring new
examples (and ``POSENC_FUZZ_EXAMPLES`` raises the fuzz budget) — that is where new bugs are meant to be found.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

if os.environ.get("PYTEST_XDIST_WORKER"):  # before numpy's BLAS or torch is loaded: a thread per worker, not per core
    for threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(threads, "1")

TESTS = Path(__file__).resolve().parent
#: The files that run torch, beside tests/real and tests/torch: all run on one worker, in turn.
TORCH_FILES = frozenset(
    {
        "app/test_lab.py",
        "app/test_lab_queue.py",
        "core/test_model_layers_transformers.py",
        "core/test_model_layers_windows.py",
        "core/test_transformers_families.py",
        "core/test_transformers_parity.py",
    }
)

# The lab's run cache (posenc_lab.queue) is per test session: no result left by an earlier run, or by a reader of
# this machine's app, can stand in for a run a test expects to happen. Servers the tests start inherit it.
os.environ["POSENC_LAB_CACHE"] = tempfile.mkdtemp(prefix="posenc-lab-cache-")

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    r"""The workers' units (``--dist loadgroup``): a test file each, and every file that runs torch as one unit."""
    for item in items:
        name = item.path.relative_to(TESTS).as_posix()
        torch = name.startswith(("real/", "torch/")) or name in TORCH_FILES
        item.add_marker(pytest.mark.xdist_group("torch" if torch else name))
