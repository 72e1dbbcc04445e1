r"""``posenc_core`` stays a light NumPy library: no UI or torch imports, and its long curves stay in bounded memory.

docs/design.md: ``posenc_core`` never imports streamlit, plotly or torch (nor its own ``torch_backend``), and its RoPE
decay curves are computed in chunks, so 10⁶ distances stay in bounded memory. Both are checked in a fresh
interpreter, so nothing the test process already imported (pytest plugins, other tests) can hide or fake the result.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PEAK_LIMIT_MB = 100


def _run(code: str, timeout: float = 120.0) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"subprocess failed:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_importing_posenc_core_imports_no_streamlit_plotly_or_torch():
    result = _run(
        """
        import json, sys
        import posenc_core
        heavy = ("streamlit", "plotly", "torch")
        found = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
        print(json.dumps({"found": found}))
        """
    )
    assert result["found"] == []


def test_importing_posenc_core_does_not_load_its_torch_backend():
    result = _run(
        """
        import json, sys
        import posenc_core
        print(json.dumps({"found": sorted(m for m in sys.modules if m.startswith("posenc_core.torch_backend"))}))
        """
    )
    assert result["found"] == []


CURVES = {
    "rope_decay_bound": "pc.rope_decay_bound(distances, inv_freq)",
    "rope_decay_all_ones": "pc.rope_decay_all_ones(distances, inv_freq)",
    "rope_decay_random": "pc.rope_decay_random(distances, inv_freq, n_samples=4)",
    "rope_decay_random_same_vector": "pc.rope_decay_random(distances, inv_freq, n_samples=4, same_vector=True)",
    "rope_near_repeats": "pc.rope_near_repeats(inv_freq, max_distance=10**6)",
    "rope_near_repeats_tight": "pc.rope_near_repeats(inv_freq, tolerance=1e-6, max_distance=10**6)",
}


@pytest.mark.parametrize("curve", list(CURVES))
def test_curves_over_a_million_distances_stay_under_100_mb(curve):
    # d = 128 (64 pairs): the naive (10^6, 64) float64 angle table alone would be 512 MB, cos and sin twice that.
    result = _run(
        f"""
        import json, tracemalloc
        import numpy as np
        import posenc_core as pc
        inv_freq = pc.rope_inv_freq(128, base=10000.0)
        distances = np.arange(10**6)
        tracemalloc.start()
        tracemalloc.reset_peak()
        out = {CURVES[curve]}
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        if isinstance(out, tuple):
            shapes = [list(np.shape(o)) for o in out]
        elif out is None or isinstance(out, int):
            shapes = [out]
        else:
            shapes = [list(np.shape(out))]
        print(json.dumps({{"peak_mb": peak / 2**20, "shapes": shapes}}))
        """
    )
    assert result["peak_mb"] < PEAK_LIMIT_MB, f"{curve}: peak traced memory {result['peak_mb']:.0f} MB"
    if curve.startswith(("rope_decay_bound", "rope_decay_all_ones")):
        assert result["shapes"] == [[10**6]]
    elif curve.startswith("rope_decay_random"):
        assert result["shapes"] == [[10**6], [10**6]]
