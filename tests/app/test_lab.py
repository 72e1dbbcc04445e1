r"""Page 12, the extrapolation lab: the committed runs, what the page says about them, and a real live run."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from posenc_lab.runs import committed_runs
from posenc_lab.tasks import (
    PRESETS,
    for_task,
    optimal_loss,
)
from posenc_ui.lessons.lab import view as lab
from posenc_ui.lessons.lab.view import ENCODING_SETS, live_config

SCRIPT = "pages/12_Extrapolation_lab.py"
#: The committed runs by (task, lag): the lag of the runs of the other tasks is the preset's (2), as stored in each.
COMMITTED = {(run.task, run.own.get("lag", 2)): run.path for run in committed_runs()}
DEFAULTS = {p.name: p.default for p in lab.PARAMS}


def values(**changed) -> dict:
    return DEFAULTS | changed


@pytest.mark.parametrize(("task", "lag"), sorted(COMMITTED))
def test_committed_runs_are_the_cpu_preset_with_three_seeds_and_say_how_they_were_made(task, lag):
    results = json.loads(COMMITTED[(task, lag)].read_text())
    config = dataclasses.replace(for_task(PRESETS["cpu"], task), lag=lag)
    assert results["task"] == task and results["seeds"] == [0, 1, 2]
    assert {k: v for k, v in results["config"].items() if k != "encodings"} == {
        k: v for k, v in dataclasses.asdict(config).items() if k != "encodings"
    }
    assert set(results["runs"]) == set(ENCODING_SETS["all"])
    assert f"--task {task}" in results["command"] and "--preset cpu --seeds 3" in results["command"]
    for run in results["runs"].values():
        assert np.allclose(run["loss"], np.mean(run["loss_seeds"], axis=0))  # the mean is the seeds' mean
    if task == "lag":  # the stored optimum is the closed form at each evaluated position
        assert results["optimal_loss"] == pytest.approx([_lag_optimum(p, lag) for p in results["positions"]])


def _lag_optimum(position: int, lag: int, vocab: int = 16, noise: float = 0.1) -> float:
    r"""The lag task's best loss, from its definition: before position ℓ there is nothing to copy, so the best guess is
    uniform, ln V; after it the target is the permuted token ℓ back with probability 1 − ε, otherwise uniform over the
    V tokens, so the best prediction puts 1 − ε + ε/V on that token and ε/V on each other one, and its expected loss
    is that distribution's entropy. V = 16, ε = 0.1: −0.90625 ln 0.90625 − 15 · 0.00625 ln 0.00625 = 0.5650 nats."""
    if position < lag:
        return math.log(vocab)
    hit, miss = 1 - noise + noise / vocab, noise / vocab
    return -hit * math.log(hit) - (vocab - 1) * miss * math.log(miss)


def test_the_lag_optimum_by_hand() -> None:
    assert _lag_optimum(5, 2) == pytest.approx(0.5650, abs=5e-5) and _lag_optimum(1, 2) == pytest.approx(
        2.7726, abs=5e-5
    )
    config = dataclasses.replace(for_task(PRESETS["cpu"], "lag"), lag=8)
    assert optimal_loss(config, 40).tolist() == pytest.approx([_lag_optimum(p, 8) for p in range(40)])


def test_the_band_table_is_read_from_the_seeds_not_from_the_mean():
    results = lab.committed(values())
    table = lab.table(values())
    positions = np.asarray(results["positions"])
    seeds = np.asarray(results["runs"]["learned"]["loss_seeds"]) - np.asarray(results["optimal_loss"])
    inside = seeds[:, positions < results["config"]["train_length"]].mean(axis=1)  # one mean per seed
    spread = table["learned"]["inside"]
    assert (spread.low, spread.high) == pytest.approx((inside.min(), inside.max()))


def _naive_verdict(results: dict, encoding: str) -> tuple[str, float]:
    r"""The page's verdict rule, written out again from its statement with plain loops over the committed JSON.

    Bands: inside L = positions [1, L), then [L, 2L), [2L, 4L), … Each seed's mean over a band of its loss above the
    optimum (lag, retrieval; retrieval's optimum is 0), or, on text, of its loss less its own mean inside L. Not learned
    when the worst seed inside L is over 0.2 nats above a known optimum; otherwise it holds when the worst seed of
    every band past L is within 0.1 nats (text: a rise within 0.05 nats), and it fails, or holds only until a band, at
    the first band where it is not. Returns the state and the worst seed's value in the band that decided it.
    """
    length, positions = results["config"]["train_length"], results["positions"]
    optimum = results["optimal_loss"]
    edges = [(1, length)]
    while edges[-1][1] <= max(positions):
        edges.append((edges[-1][1], 2 * edges[-1][1]))
    per_seed = []  # per seed: the band means, in band order
    for curve in results["runs"][encoding]["loss_seeds"]:
        means = []
        for lo, hi in edges:
            here = [
                loss - (optimum[i] if optimum else 0.0)
                for i, (p, loss) in enumerate(zip(positions, curve, strict=True))
                if lo <= p < hi
            ]
            if here:
                means.append(sum(here) / len(here))
        per_seed.append(means if optimum else [m - means[0] for m in means])
    worst = [max(seed[band] for seed in per_seed) for band in range(len(per_seed[0]))]
    if optimum and worst[0] > 0.2:
        return "not_learned", worst[0]
    tolerance = 0.1 if optimum else 0.05
    for band, value in enumerate(worst[1:], start=1):
        if value > tolerance:
            return ("fails" if band == 1 else "until"), value
    return "holds", max(worst[1:])


@pytest.mark.parametrize(("task", "lag"), [("lag", 2), ("lag", 8), ("retrieval", 2), ("text", 2)])
def test_findings_follow_the_verdict_rule_applied_by_hand_to_the_committed_runs(task, lag):
    v = values(task=task, lag=lag)
    results = json.loads(COMMITTED[(task, lag)].read_text())
    findings = lab.findings(v)
    assert set(findings) == set(results["runs"])
    for name, (state, numbers) in findings.items():
        want_state, want_value = _naive_verdict(results, name)
        assert (state, numbers["value"]) == (want_state, f"{want_value:.2f}"), name


def test_the_committed_lag_run_shows_alibi_holding_and_the_learned_table_failing():
    findings = lab.findings(values(task="lag"))
    assert findings["alibi"][0] == "holds" and findings["learned"][0] == "fails"
    assert lab.findings(values(task="lag", lag=8))["alibi"][0] == "not_learned"  # ℓ = 8: ALiBi never learns it
    inside, beyond = lab.check_inside(values()), lab.check_extrapolation(values())
    assert inside.passed and inside.key == "lab.check_inside"
    assert beyond.passed and beyond.fmt_keys["best"] == "enc.fox"  # FoX rises least, ALiBi next (the nine-model run)


def test_a_run_is_summarised_once_while_memory_keeps_it():
    v = values(task="lag")
    assert lab.table(v) is lab.table(v) and lab.verdicts(lab.shown_path(v)) is lab.verdicts(lab.shown_path(v))


def test_a_check_that_fails_says_so_in_its_own_words(monkeypatch, tmp_path):
    bad = json.loads(COMMITTED[("lag", 2)].read_text())
    bad["runs"]["rope"]["loss_seeds"] = (np.asarray(bad["runs"]["rope"]["loss_seeds"]) + 1.0).tolist()
    path = tmp_path / "bad_run.json"
    path.write_text(json.dumps(bad))
    monkeypatch.setattr(lab, "shown_path", lambda v: path)
    check = lab.check_inside(values())
    assert not check.passed and check.key == "lab.check_inside_failed" and check.fmt_keys["encoding"] == "enc.rope"


def test_live_config_follows_the_controls():
    config = live_config(values(task="retrieval", set="contrast", train_length=16, steps=50, seed=3))
    assert config.task == "retrieval" and config.encodings == ("learned", "alibi") and config.eval_factor == 32
    assert live_config(values(task="lag", lag=8)).lag == 8


def test_page_shows_committed_results_and_no_live_notice_by_default(open_page):
    at = open_page(SCRIPT, lang="en")
    assert not at.exception
    assert not [i for i in at.info if "not been run" in i.value]
    assert [b for b in at.button if b.label == "Run"]
    assert any("--seeds 3" in c.value for c in at.caption)  # which run is shown, and how it was made


@pytest.mark.parametrize("task", ["retrieval", "text"])
def test_every_task_draws_in_both_languages(open_page, task):
    for lang in ("en", "zh"):
        at = open_page(SCRIPT, lang=lang, params={"task": task})
        assert not at.exception
        assert at.session_state["lab.task"] == task
    if task == "text":
        assert any("pydoc_data.topics" in m.value for m in at.markdown)  # the corpus is named


def test_live_source_without_a_run_says_so(open_page):
    at = open_page(SCRIPT, lang="zh", params={"source": "live", "seed": "7"})
    assert not at.exception
    assert any("还没有" in i.value for i in at.info)


def test_embedded_page_shows_results_only(open_page):
    at = open_page(SCRIPT, lang="en", context={"is_embedded": True})
    assert not at.exception
    assert not [b for b in at.button if b.label == "Run"]
    assert any("live runs are on the full page" in c.value for c in at.caption)


@pytest.mark.slow
def test_a_live_run_trains_once_caches_on_disk_and_switches_the_page_to_it(open_page, tmp_path, monkeypatch):
    monkeypatch.setenv("POSENC_LAB_CACHE", str(tmp_path))
    params = {"set": "contrast", "train_length": "16", "steps": "50", "seed": "3"}
    at = open_page(SCRIPT, lang="en", params=params)
    v = values(source="live", set="contrast", train_length=16, steps=50, seed=3)
    assert lab.live_results(v) is None
    next(b for b in at.button if b.label == "Run").click()
    at.run(timeout=240)
    assert not at.exception
    results = lab.live_results(v)
    assert results is not None and set(results["runs"]) == {"learned", "alibi"}
    assert at.session_state["lab.source"] == "live"
    assert any("have been trained" in s.value for s in at.success)
    assert any("your live run" in c.value for c in at.caption)
    assert not [e for e in at.error if "extension" in e.value.lower()]
    assert any("RoPE was not among" in m.value for m in at.markdown)  # no empty RoPE figure for a run without it


def test_the_estimate_is_the_measured_run_again_and_grows_with_training_alone(tmp_path):
    """Recorded from a real run, the estimate for the same settings gives back that run's seconds; more steps add
    training time at the measured rate and leave evaluation alone (evaluation does not grow with the steps)."""
    pytest.importorskip("torch")
    from posenc_lab.queue import LabQueue
    from posenc_lab.train import run_lab
    from posenc_ui.lessons.lab.runner import expected_seconds, record

    config = dataclasses.replace(PRESETS["tiny"], encodings=("learned", "alibi"), steps=20)
    results = run_lab(config, device="cpu")
    store = LabQueue(tmp_path)
    assert expected_seconds(config, store.timing("cpu", config.task)) is None  # nothing measured yet: no guess
    record(store, "cpu", results)
    measured = store.timing("cpu", config.task)
    assert expected_seconds(config, measured) == pytest.approx(results["seconds"], rel=1e-9)
    trained = sum(run["train_seconds"] for run in results["runs"].values())
    longer = expected_seconds(dataclasses.replace(config, steps=60), measured)
    assert longer == pytest.approx(results["seconds"] + 2 * trained, rel=1e-9)


def test_the_band_table_is_markdown_with_the_seeds_spread_in_brackets(open_page):
    r"""A markdown table, not ``st.dataframe`` (whose grid and Arrow code the browser would fetch: 1.2 MB)."""
    at = open_page(SCRIPT, lang="en")
    assert not at.dataframe
    (table,) = [m.value for m in at.markdown if m.value.startswith("| position encoding | inside L |")]
    # ALiBi inside L on the committed lag run, from its JSON: each seed's mean loss above the optimum over positions
    # 1 … 31, then the seeds' mean [lowest, highest]
    results = json.loads(COMMITTED[("lag", 2)].read_text())
    inside = [i for i, p in enumerate(results["positions"]) if p < results["config"]["train_length"]]
    seeds = [
        sum(curve[i] - results["optimal_loss"][i] for i in inside) / len(inside)
        for curve in results["runs"]["alibi"]["loss_seeds"]
    ]
    want = f"| ALiBi | {sum(seeds) / len(seeds):.2f} \\[{min(seeds):.2f}, {max(seeds):.2f}\\] |"
    assert want in table
    assert len(table.splitlines()) == 2 + len(results["runs"])  # header, alignment, one row per encoding


def test_runs_of_other_encodings_are_added_only_to_the_same_task_configuration_and_seeds():
    r"""``add_runs`` (the CLI's ``--add-to``): the two files' runs side by side in the lab's order, both commands kept;
    a run of another lag, other seeds or an encoding trained twice is refused."""
    from posenc_core import PosEncError
    from posenc_lab.runs import add_runs

    base = json.loads(COMMITTED[("lag", 2)].read_text())
    six = {
        "runs": {e: base["runs"][e] for e in ("rope", "alibi")},
        "config": base["config"] | {"encodings": ["rope", "alibi"]},
    }
    three = {
        "runs": {e: base["runs"][e] for e in ("none", "fox")},
        "config": base["config"] | {"encodings": ["fox", "none"]},
    }
    first, second = base | six | {"command": "A", "seconds": 1.0}, base | three | {"command": "B", "seconds": 2.0}
    merged = add_runs(first, second)
    assert list(merged["runs"]) == merged["config"]["encodings"] == ["none", "rope", "alibi", "fox"]
    assert merged["command"] == "A && B" and merged["seconds"] == 3.0
    with pytest.raises(PosEncError, match="configuration"):
        add_runs(first, second | {"config": second["config"] | {"lag": 8}})
    with pytest.raises(PosEncError, match="seeds"):
        add_runs(first, second | {"seeds": [0]})
    with pytest.raises(PosEncError, match="both"):
        add_runs(first, first)


def _seed_band_means(results: dict, encoding: str, key: str = "loss") -> list[list[float]]:
    r"""Per seed, the mean of ``key`` inside L and in each doubling past it, written out again from the JSON (loss
    above the optimum where the task has one)."""
    length, positions = results["config"]["train_length"], results["positions"]
    optimum = results["optimal_loss"] if key == "loss" else None
    edges = [(1, length)]
    while edges[-1][1] <= max(positions):
        edges.append((edges[-1][1], 2 * edges[-1][1]))
    out = []
    for curve in results["runs"][encoding][f"{key}_seeds"]:
        means = []
        for lo, hi in edges:
            here = [
                v - (optimum[i] if optimum else 0.0)
                for i, (p, v) in enumerate(zip(positions, curve, strict=True))
                if lo <= p < hi
            ]
            if here:
                means.append(sum(here) / len(here))
        out.append(means)
    return out


def test_the_designs_claims_are_what_the_committed_runs_hold_for_every_seed():
    r"""Page 12's three lines on the 2025 designs, recomputed from the JSON with the hand-written verdict rule above:
    p-RoPE's and the hybrid's verdicts are RoPE's on every run; FoX's are ALiBi's but on retrieval; the hybrid learns
    copy and retrieval inside L (worst seed ≤ 0.2 nats), sits > 0.05 nats per byte above RoPE on text, fails on
    retrieval where NoPE holds, yet recalls more than RoPE in the farthest band; FoX has the lowest text loss inside L
    and no seed rises past L."""
    from posenc_ui.lessons.lab import designs

    checks = [designs.hybrid_claim(), designs.p_rope_claim(), designs.fox_claim()]
    assert all(c.passed and not c.key.endswith("_not") for c in checks), [c.key for c in checks]
    runs = {key: json.loads(path.read_text()) for key, path in COMMITTED.items()}
    state = {key: {e: _naive_verdict(r, e)[0] for e in r["runs"]} for key, r in runs.items()}
    for key in runs:
        assert state[key]["p_rope"] == state[key]["rope"] and state[key]["hybrid"] == state[key]["rope"], key
        if key != ("retrieval", 2):
            assert state[key]["fox"] == state[key]["alibi"], key
    for key in (("lag", 2), ("lag", 8), ("retrieval", 2)):
        assert max(seed[0] for seed in _seed_band_means(runs[key], "hybrid")) <= 0.2
    text = runs[("text", 2)]
    worst = {e: max(seed[0] for seed in _seed_band_means(text, e)) for e in text["runs"]}
    assert worst["hybrid"] - worst["rope"] > 0.05
    assert (state[("retrieval", 2)]["none"], state[("retrieval", 2)]["hybrid"]) == ("holds", "until")
    far = {
        e: np.mean([s[-1] for s in _seed_band_means(runs[("retrieval", 2)], e, "accuracy")]) for e in ("hybrid", "rope")
    }
    assert far["hybrid"] > far["rope"]
    inside = {e: np.mean([seed[0] for seed in _seed_band_means(text, e)]) for e in text["runs"]}
    assert min(inside, key=inside.get) == "fox"
    assert all(band - seed[0] <= 0 for seed in _seed_band_means(text, "fox") for band in seed[1:])
    assert (
        checks[0].fmt["recall_hybrid"] == f"{far['hybrid']:.2f}" and checks[2].fmt["text_fox"] == f"{inside['fox']:.2f}"
    )


def test_a_designs_claim_that_fails_prints_its_own_sentence(tmp_path):
    r"""Give p-RoPE the learned table's curves: its marks are no longer RoPE's, and the line says so in its own
    words."""
    from posenc_ui.i18n import t
    from posenc_ui.lessons.lab import designs

    runs = []
    for run in committed_runs():
        results = json.loads(run.path.read_text())
        results["runs"]["p_rope"] = results["runs"]["learned"]
        path = tmp_path / run.path.name
        path.write_text(json.dumps(results))
        runs.append((run.id, path))
    bad, good = designs.p_rope_claim(tuple(runs)), designs.p_rope_claim()
    assert not bad.passed and bad.key == "lab.designs_p_rope_not" and bad.fmt["differ"] > 0
    for lang in ("en", "zh"):
        assert t(bad.key, lang, **bad.fmt) != t(good.key, lang, **bad.fmt)
