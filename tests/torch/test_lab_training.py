"""The extrapolation lab: its data sources, its optima, and the claims each task exists to show (tiny preset, CPU)."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from posenc_core import PosEncError  # noqa: E402
from posenc_lab.corpus import text_corpus  # noqa: E402
from posenc_lab.tasks import PRESETS, LabConfig, batches_for, for_task, optimal_loss  # noqa: E402
from posenc_lab.train import LabCancelled, main, run_lab  # noqa: E402

CPU = torch.device("cpu")


def test_lag_tokens_follow_the_copy_rule_at_the_stated_rate():
    config = LabConfig(lag=3, noise=0.2)
    tokens = batches_for(config, CPU).batch(256, 400).numpy()
    perm = torch.randperm(config.vocab_size, generator=torch.Generator().manual_seed(config.seed)).numpy()
    copied = tokens[:, 3:] == perm[tokens[:, :-3]]
    # a token copies unless noise struck, and noise lands on the copy value with probability 1/V
    expected = 1 - config.noise + config.noise / config.vocab_size
    assert abs(copied.mean() - expected) < 0.01
    assert abs((tokens == 5).mean() - 1 / config.vocab_size) < 0.005  # every token is uniform on its own


def test_lag_tokens_equal_a_plain_loop_over_positions():
    """The bulk sampler (chains and powers of π) against the rule written as a loop, on the same random draws."""
    config = LabConfig(lag=3, noise=0.3, vocab_size=7)
    source = batches_for(config, CPU)
    n, length = 5, 50
    fresh_gen, loop_gen = torch.Generator().manual_seed(4), torch.Generator().manual_seed(4)
    got = source.batch(n, length, fresh_gen)
    fresh = torch.randint(7, (n, length), generator=loop_gen)
    keep = torch.rand((n, length), generator=loop_gen) >= config.noise
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(config.seed))
    want = fresh.clone()
    for t in range(config.lag, length):
        want[:, t] = torch.where(keep[:, t], perm[want[:, t - config.lag]], fresh[:, t])
    assert torch.equal(got, want)


def test_lag_optimum_equals_the_empirical_conditional_entropy():
    """An independent estimate: the entropy of x_t given x_{t−lag}, counted from samples."""
    config = LabConfig()
    tokens = batches_for(config, CPU).batch(512, 200).numpy()
    pairs = np.zeros((config.vocab_size, config.vocab_size))
    np.add.at(pairs, (tokens[:, : -config.lag].ravel(), tokens[:, config.lag :].ravel()), 1)
    conditional = pairs / pairs.sum(axis=1, keepdims=True)
    entropy = -np.sum(pairs / pairs.sum() * np.log(np.where(conditional > 0, conditional, 1)))
    optimum = optimal_loss(config, 10)
    assert optimum[0] == pytest.approx(math.log(config.vocab_size))
    assert entropy == pytest.approx(optimum[-1], abs=0.01)


def test_retrieval_sequences_plant_one_value_that_the_last_token_repeats():
    config = for_task(LabConfig(), "retrieval")
    v = config.vocab_size
    source = batches_for(config, CPU)
    train = source.batch(64, 20)
    assert torch.all(train[:, -2] == v) and torch.all(train[:, -1] > v)  # the query, then the answer (a value)
    values_in_context = (train[:, :-2] > v).sum(1)
    assert torch.all(values_in_context == 1)  # exactly one value before the query: the one to recall
    assert torch.all(train[:, :-2].masked_select(train[:, :-2] > v).view(-1) == train[:, -1])
    at = source.at_distance(100)
    assert at.shape == (config.eval_sequences, 102)  # every sequence up to 4 L
    assert (
        source.at_distance(32 * config.train_length).shape[0] == config.eval_sequences // 8
        and torch.all(at[:, 0] == at[:, -1])
        and torch.all(at[:, 100] == v)
    )


def test_the_text_corpus_is_human_written_and_split_by_document():
    corpus = text_corpus()
    everything = corpus.train.tobytes() + corpus.held_out.tobytes()
    assert b"Assert statements are a convenient way to insert debugging assertions" in everything  # pydoc's prose
    assert b"def " in corpus.train.tobytes()  # and the standard library's source
    assert corpus.train.size > 1_000_000 and corpus.held_out.size > 100_000
    assert corpus.held_out_documents * 10 >= corpus.documents - 9  # every tenth document is held out
    assert corpus.train.tobytes().find(corpus.held_out.tobytes()[:2000]) == -1  # held-out text is not trained on


def test_bad_configurations_are_refused():
    with pytest.raises(PosEncError, match="encodings"):
        LabConfig(encodings=("rope", "xpos"))
    with pytest.raises(PosEncError, match="even"):
        LabConfig(d_model=40, n_heads=8)  # head width 5: RoPE needs pairs
    with pytest.raises(PosEncError, match="task"):
        LabConfig(task="sorting")


def test_a_cancelled_run_stops_with_lab_cancelled():
    with pytest.raises(LabCancelled):
        run_lab(PRESETS["tiny"], device="cpu", progress=lambda fraction, message: fraction < 0.1)


@pytest.mark.parametrize("task", ["lag", "retrieval", "text"])
def test_a_run_is_deterministic_for_its_seed_and_differs_across_seeds(task):
    config = dataclasses.replace(for_task(PRESETS["tiny"], task), encodings=("alibi",), steps=15, eval_sequences=4)
    first, again = run_lab(config, seeds=[3, 4], device="cpu"), run_lab(config, seeds=[3, 4], device="cpu")
    assert first["runs"]["alibi"]["loss_seeds"] == again["runs"]["alibi"]["loss_seeds"]
    seed3, seed4 = first["runs"]["alibi"]["loss_seeds"]
    assert seed3 != seed4
    assert np.allclose(first["runs"]["alibi"]["loss"], np.mean([seed3, seed4], axis=0))
    assert len(first["positions"]) == len(seed3) and first["seeds"] == [3, 4] and first["task"] == task


@functools.cache
def _tiny(task: str, encodings: tuple[str, ...]) -> tuple[dict, LabConfig]:
    config = dataclasses.replace(for_task(PRESETS["tiny"], task), encodings=encodings)
    return run_lab(config, seeds=[0], device="cpu"), config


def _bands(results: dict, name: str, key: str = "loss") -> tuple[float, float]:
    r"""Mean of ``key`` inside the training length, and from 2 L on."""
    positions = np.asarray(results["positions"])
    curve = np.asarray(results["runs"][name][key])
    length = results["config"]["train_length"]
    return float(curve[positions < length].mean()), float(curve[positions >= 2 * length].mean())


@pytest.mark.slow
def test_lag_task_learned_fails_past_the_training_length_where_alibi_does_not():
    """Trained at L, evaluated to 4L: inside L both learn the copy; beyond it only ALiBi keeps it."""
    results, config = _tiny("lag", ("learned", "alibi"))
    optimum = float(optimal_loss(config, 8)[-1])
    for name in ("learned", "alibi"):
        inside, _ = _bands(results, name)
        assert inside < optimum + 0.5, f"{name} did not learn the task: {inside:.3f} nats"
    assert _bands(results, "alibi")[1] < optimum + 0.5
    assert _bands(results, "learned")[1] > _bands(results, "alibi")[1] + 1.0


@pytest.mark.slow
def test_retrieval_task_separates_a_content_lookup_from_distance_biases():
    """Recall of a value 8–32 training lengths back: no encoding (and T5's capped buckets) keeps it; RoPE's unseen
    angles lose it; ALiBi's penalty, growing with distance, loses much of it."""
    results, _ = _tiny("retrieval", ("none", "rope", "alibi"))
    positions = np.asarray(results["positions"])
    far = positions >= 8 * results["config"]["train_length"]
    accuracy = {name: float(np.mean(np.asarray(run["accuracy"])[far])) for name, run in results["runs"].items()}
    inside = {name: _bands(results, name, "accuracy")[0] for name in results["runs"]}
    assert min(inside.values()) > 0.95  # all three learned the lookup
    assert accuracy["none"] > 0.9
    assert accuracy["alibi"] < accuracy["none"] - 0.15
    assert accuracy["rope"] < 0.5


@pytest.mark.slow
def test_text_task_orders_the_encodings_as_press_et_al_figure_1():
    """Past the training length sinusoidal and learned losses climb most and ALiBi's least (Press et al. 2022)."""
    results, _ = _tiny("text", ("learned", "sinusoidal", "alibi"))
    rise = {name: _bands(results, name)[1] - _bands(results, name)[0] for name in results["runs"]}
    assert rise["alibi"] < 0.25
    assert rise["sinusoidal"] > rise["alibi"] + 0.1 and rise["learned"] > rise["alibi"] + 0.1
    assert results["corpus"]["train_bytes"] > 1_000_000


def test_the_command_line_writes_the_contracted_json(tmp_path):
    out = tmp_path / "r.json"
    main(
        [
            "--task",
            "text",
            "--preset",
            "tiny",
            "--seeds",
            "2",
            "--steps",
            "3",
            "--encodings",
            "learned,rope",
            "--out",
            str(out),
            "--device",
            "cpu",
        ]
    )
    import json

    results = json.loads(out.read_text())
    assert {"config", "device", "seconds", "task", "seeds", "positions", "runs", "command"} <= results.keys()
    assert results["task"] == "text" and results["seeds"] == [0, 1] and results["optimal_loss"] is None
    rope = results["runs"]["rope"]
    assert len(rope["loss"]) == len(results["positions"]) and len(rope["loss_seeds"]) == 2
    assert set(rope["extension"]) == {"None", "linear", "ntk", "yarn"}
    table = np.asarray(results["runs"]["learned"]["table"])
    assert table.shape == (4 * results["config"]["train_length"], results["config"]["d_model"])


def test_evaluation_in_chunks_gives_the_same_numbers(monkeypatch):
    """Long evaluations are cut into chunks of sequences to bound attention memory; the numbers do not change."""
    import posenc_lab.train as lab

    config = dataclasses.replace(for_task(PRESETS["tiny"], "text"), encodings=("alibi",), steps=5, eval_sequences=8)
    whole = run_lab(config, device="cpu")
    monkeypatch.setattr(lab, "EVAL_SCORES", config.n_heads * 64 * 64 * 3)  # 3 sequences of 64 tokens a chunk
    chunked = run_lab(config, device="cpu")
    np.testing.assert_allclose(chunked["runs"]["alibi"]["loss"], whole["runs"]["alibi"]["loss"], rtol=1e-5, atol=1e-6)
