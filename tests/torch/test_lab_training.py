"""The extrapolation lab: its data source, its optimum, and the robust claim it exists to show."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from posenc_core import PosEncError  # noqa: E402
from posenc_core.torch_backend.lab import PRESETS, LabCancelled, LabConfig, optimal_loss, run_lab, sample_batch  # noqa: E402


def test_sampled_tokens_follow_the_copy_rule_at_the_stated_rate():
    config = LabConfig(lag=3, noise=0.2)
    tokens = sample_batch(config, 400, 256, torch.Generator().manual_seed(1)).numpy()
    perm = torch.randperm(config.vocab_size, generator=torch.Generator().manual_seed(config.seed)).numpy()
    copied = tokens[:, 3:] == perm[tokens[:, :-3]]
    # a token copies unless noise struck, and noise lands on the copy value with probability 1/V
    expected = 1 - config.noise + config.noise / config.vocab_size
    assert abs(copied.mean() - expected) < 0.01


def test_optimal_loss_equals_the_empirical_conditional_entropy():
    """An independent estimate: the entropy of x_t given x_{t−lag}, counted from samples."""
    config = LabConfig()
    tokens = sample_batch(config, 200, 512, torch.Generator().manual_seed(2)).numpy()
    pairs = np.zeros((config.vocab_size, config.vocab_size))
    np.add.at(pairs, (tokens[:, : -config.lag].ravel(), tokens[:, config.lag :].ravel()), 1)
    conditional = pairs / pairs.sum(axis=1, keepdims=True)
    entropy = -np.sum(pairs / pairs.sum() * np.log(np.where(conditional > 0, conditional, 1)))
    optimum = optimal_loss(config, 10)
    assert optimum[0] == pytest.approx(math.log(config.vocab_size))
    assert entropy == pytest.approx(optimum[-1], abs=0.01)


def test_bad_configurations_are_refused():
    with pytest.raises(PosEncError, match="encodings"):
        LabConfig(encodings=("rope", "xpos"))
    with pytest.raises(PosEncError, match="even"):
        LabConfig(d_model=40, n_heads=8)  # head width 5: RoPE needs pairs


def test_a_cancelled_run_stops_with_lab_cancelled():
    with pytest.raises(LabCancelled):
        run_lab(PRESETS["tiny"], device="cpu", progress=lambda fraction, message: fraction < 0.1)


@pytest.mark.slow
def test_learned_absolute_fails_past_the_training_length_where_alibi_does_not():
    """Trained at L, evaluated to 4L: inside L both are near the optimum; beyond it only ALiBi stays there."""
    config = PRESETS["tiny"]
    results = run_lab(config, device="cpu")
    length, lag = config.train_length, config.lag
    optimum = np.array(results["optimal_loss"])[1:]  # predicting token t + 1 from position t
    gap = {name: np.array(run["loss"]) - optimum for name, run in results["runs"].items()}
    inside, beyond = slice(lag, length - 1), slice(length, None)
    for name in ("learned", "alibi"):
        assert gap[name][inside].mean() < 0.35, f"{name} did not learn the task: gap {gap[name][inside].mean():.3f}"
    assert gap["alibi"][beyond].mean() < 0.35
    assert gap["learned"][beyond].mean() > 1.0 + gap["alibi"][beyond].mean()
