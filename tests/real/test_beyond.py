r"""Section 6's committed run (:mod:`posenc_real.beyond`): read back as written, its rise past the training length
computed as defined, and its first bins equal to what the model computes now on the same tokens.

Re-running it past 8,192 tokens takes a CPU half an hour, so the test checks what a short forward can: the loss at a
position depends only on the tokens up to it, so the first bins of a 10,240-token window are the first bins of its
first 1,024 tokens, for every method whose frequencies do not depend on the length (all but dynamic NTK).
"""

from __future__ import annotations

import json
import math
import platform
from pathlib import Path

import numpy as np
import pytest

from posenc_real import RealModel
from posenc_real.beyond import COMMITTED, METHODS, long_text_ids, loss_by_position, read_run


def _write(path: Path, bin_start: list[int], loss: dict[str, list[list[float]]]) -> Path:
    path.write_text(
        json.dumps(
            {
                "training_length": 8,
                "factor": 2.0,
                "bin_width": 2,
                "bin_start": bin_start,
                "methods": {method: {"rope_parameters": None, "loss": loss[method]} for method in METHODS},
                "command": "by hand",
            }
        )
    )
    return path


def test_the_shift_is_the_gap_inside_less_the_gap_past_with_two_standard_errors(tmp_path: Path) -> None:
    # bins start at 0, 2, 4, 6 (inside L = 8) and 8, 10 (past it); the model as trained at 2 everywhere
    plain = [2.0] * 6
    other = [2.5, 2.7, 2.5, 2.3, 2.0, 2.2]  # 0.5 above inside on average, 0.1 above past: it gained 0.4
    losses = {method: [plain if method == "plain" else other] for method in METHODS}
    run = read_run(_write(tmp_path / "run.json", [0, 2, 4, 6, 8, 10], losses))
    shift, noise = run.shift("yarn")
    inside = np.array([0.5, 0.7, 0.5, 0.3])
    s = math.sqrt(((inside - 0.5) ** 2).sum() / 3)  # the sample standard deviation, written out
    assert shift == pytest.approx([0.4]) and noise == pytest.approx([2 * s * math.sqrt(1 / 4 + 1 / 2)])
    assert run.gap("plain").tolist() == [[0.0] * 6]


def test_a_run_without_bins_past_the_training_length_is_refused(tmp_path: Path) -> None:
    losses = {method: [[1.0, 1.0]] for method in METHODS}
    with pytest.raises(ValueError, match="past the training length"):
        read_run(_write(tmp_path / "short.json", [0, 2], losses))
    with pytest.raises(ValueError, match="past the training length"):  # one bin inside L: no spread to measure
        read_run(_write(tmp_path / "late.json", [6, 8, 10], {m: [[1.0, 1.0, 1.0]] for m in METHODS}))


def test_the_models_rope_is_what_the_sections_words_assume(real: RealModel) -> None:
    from posenc_ui.lessons.real import beyond

    assert (real.rope_theta, real.head_dim) == (beyond.THETA, beyond.HEAD_DIM)


def test_the_committed_run_is_past_the_training_length_with_every_method() -> None:
    run = read_run()
    assert run.training_length == 8_192 and run.bin_start[-1] >= run.training_length
    assert set(run.loss) == set(METHODS) and {run.loss[m].shape for m in METHODS} == {run.loss["plain"].shape}
    assert run.loss["plain"].shape[0] >= 2  # windows of the text: a spread to draw
    assert run.meta["command"].startswith("python -m posenc_real beyond")


@pytest.mark.skipif(
    platform.python_version() != json.loads(COMMITTED.read_text())["text"]["python"],
    reason="the long text is the documentation this Python ships; the committed run read another Python's",
)
def test_the_first_bins_of_the_committed_run_are_what_the_model_computes_now(real: RealModel) -> None:
    run = read_run()
    tokens = 4 * run.bin_width  # 1,023 losses: three full bins
    ids = long_text_ids(real, tokens, start=run.meta["text"]["starts"][0])
    for method in ("plain", "base", "linear", "yarn"):  # dynamic NTK's θ depend on the whole window's length
        losses = loss_by_position(real, ids, method, run.factor)  # eager attention here, SDPA in the run
        bins = losses[: 3 * run.bin_width].reshape(3, run.bin_width).mean(axis=1)
        np.testing.assert_allclose(bins, run.loss[method][0, :3], atol=1e-3, err_msg=method)
