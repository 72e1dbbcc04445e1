r"""Page 13: the table's live columns, the lab verdicts from all four committed runs (recomputed here from the JSON),
the small multiples, the per-task extrapolation figure, the checks, and the page in AppTest in both languages."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from drawn import shown_checks

from posenc_core import COMPARED, FAMILIES
from posenc_lab.runs import band_table, committed_runs
from posenc_lab.tasks import ENCODINGS
from posenc_ui.i18n import t
from posenc_ui.lessons.compare.view import (
    EXCESS_TOLERANCE,
    LAB_RUNS,
    LEARNED_TOLERANCE,
    RISE_TOLERANCE,
    VIEW,
    alibi_local_claim,
    comparison_table,
    lab_measures,
    lab_results,
    lab_verdicts,
    mark,
    relative_not_enough_claim,
    retrieval_claim,
    task_dependence_claim,
    task_tolerance,
)
from posenc_ui.state import defaults

SCRIPT = "pages/13_Compare.py"
#: The committed runs whose verdicts this file states (in the order the page lists them: the registry's, then by lag).
TASKS = ("lag", "lag8", "retrieval", "text")


def main_table(lang: str) -> dict[str, str]:
    r"""The first markdown table (encodings × properties), row by encoding name."""
    table = comparison_table(defaults(VIEW.params), lang).split("\n\n")[0]
    return {line.split("|")[1].strip(" *"): line for line in table.splitlines()[2:]}


def test_table_marks_relative_and_absolute_from_live_residuals() -> None:
    r"""One row per family in Compare; the live residual marks the pairwise biases and the rotation relative and the
    added codes absolute (their kinds in the registry), and only the lab's families link to it."""
    lines = main_table("en")
    names = {e: t(f"enc.{e}", "en") for e in COMPARED}
    assert set(lines) == set(names.values()) >= {"sinusoidal", "learned", "Shaw relative", "T5 bias", "RoPE", "ALiBi"}
    for encoding, name in names.items():
        kind = FAMILIES[encoding].kind
        assert "✓ relative" in lines[name] if kind in ("bias", "rotation") else "✗ absolute" in lines[name]
        assert ("Extrapolation_lab?lang=en" in lines[name]) == FAMILIES[encoding].lab
        assert ("not in the lab" in lines[name]) != FAMILIES[encoding].lab
    assert "not in the lab" in lines["Shaw relative"]


# --- the verdicts, recomputed from the JSON without band_table or the view's rule ---------------------------------


def independent_verdict(results: dict, encoding: str) -> tuple[str, int, float]:
    r"""(state, until, deciding value) by the page's stated rule, from the raw per-seed curves."""
    positions = np.asarray(results["positions"])
    length = results["config"]["train_length"]
    seeds = np.asarray(results["runs"][encoding]["loss_seeds"], dtype=np.float64)
    optimum = results["optimal_loss"]
    edges = [(1, length)]
    while edges[-1][1] <= positions.max():
        edges.append((edges[-1][1], 2 * edges[-1][1]))
    per_band = [seeds[:, (positions >= lo) & (positions < hi)].mean(axis=1) for lo, hi in edges]
    if optimum is not None:
        excess = [
            (seeds - np.asarray(optimum))[:, (positions >= lo) & (positions < hi)].mean(axis=1) for lo, hi in edges
        ]
        worst = [band.max() for band in excess]
        if worst[0] > LEARNED_TOLERANCE:
            return "not_learned", 0, worst[0]
        tolerance = EXCESS_TOLERANCE
    else:  # text: each seed's rise over its own loss inside L, the worst seed
        worst = [(band - per_band[0]).max() for band in per_band]
        tolerance = RISE_TOLERANCE
    beyond = list(zip(edges[1:], worst[1:], strict=True))
    for (lo, _), value in beyond:
        if value > tolerance:
            return ("fails" if lo == length else "until"), lo // length, value
    return "holds", edges[-1][1] // length, max(value for _, value in beyond)


def test_lab_reads_every_committed_run_with_three_seeds() -> None:
    assert [task for task, _ in LAB_RUNS] == [run.id for run in committed_runs()]  # the one reader's list, in order
    assert [task for task, _ in LAB_RUNS if task in TASKS] == list(TASKS)  # the four runs this file's claims name
    results = lab_results()
    assert {task: results[task]["task"] for task in TASKS} == {
        "lag": "lag",
        "lag8": "lag",
        "text": "text",
        "retrieval": "retrieval",
    }
    assert results["lag"]["config"]["lag"] == 2 and results["lag8"]["config"]["lag"] == 8
    assert results["text"]["optimal_loss"] is None
    assert all(r["seeds"] == [0, 1, 2] and set(r["runs"]) >= set(ENCODINGS) for r in results.values())
    assert all(not path.name.startswith("results_cpu_seed0") for _, path in LAB_RUNS)


@pytest.mark.parametrize("task", TASKS)
def test_every_verdict_matches_an_independent_recomputation_from_the_json(task: str) -> None:
    path = dict(LAB_RUNS)[task]
    results = json.loads(path.read_text(encoding="utf-8"))
    for encoding in ENCODINGS:
        state, until, value = independent_verdict(results, encoding)
        verdict = lab_verdicts()[encoding][task]
        assert (verdict.state, verdict.until) == (state, until), (task, encoding)
        assert verdict.value == pytest.approx(value, abs=1e-9), (task, encoding)


def test_alibi_retrieval_verdict_by_hand() -> None:
    r"""One verdict spelled out: ALiBi on retrieval holds to 8·L; at 8–16·L its worst seed is past 0.1 nats."""
    results = json.loads(dict(LAB_RUNS)["retrieval"].read_text(encoding="utf-8"))
    distances = np.asarray(results["positions"])
    seeds = np.asarray(results["runs"]["alibi"]["loss_seeds"])  # optimum 0: the loss is the excess
    assert results["optimal_loss"] == [0.0] * distances.size
    band = lambda lo, hi: seeds[:, (distances >= 32 * lo) & (distances < 32 * hi)].mean(axis=1)  # noqa: E731
    assert all(band(lo, 2 * lo).max() <= 0.1 for lo in (1, 2, 4))
    assert band(8, 16).max() > 0.1
    verdict = lab_verdicts()["alibi"]["retrieval"]
    assert (verdict.state, verdict.until, mark(verdict)) == ("until", 8, "◐ 8·L")


def test_verdicts_follow_each_of_the_four_files(tmp_path: Path) -> None:
    r"""Copies of the four runs where NoPE is made perfect (at the optimum; text: flat past L): every one of NoPE's
    four verdicts turns ✓, so each comes from its own file — and the task-dependence claim then fails, in words."""
    runs = []
    for task, path in LAB_RUNS:
        results = json.loads(path.read_text(encoding="utf-8"))
        seeds = np.asarray(results["runs"]["none"]["loss_seeds"])
        if results["optimal_loss"] is not None:
            flat = np.broadcast_to(np.asarray(results["optimal_loss"]), seeds.shape)
        else:
            flat = np.full(seeds.shape, 2.0)
        results["runs"]["none"]["loss_seeds"] = flat.tolist()
        copy = tmp_path / path.name
        copy.write_text(json.dumps(results), encoding="utf-8")
        runs.append((task, copy))
    runs = tuple(runs)
    assert [lab_verdicts()["none"][task].state for task in TASKS] == ["not_learned", "not_learned", "holds", "fails"]
    assert [lab_verdicts(runs)["none"][task].state for task in TASKS] == ["holds"] * 4
    assert lab_verdicts(runs)["alibi"] == lab_verdicts()["alibi"]  # the other encodings are untouched
    check = task_dependence_claim(runs)
    assert not check.passed and check.key == "compare.check_task_dependence_not"
    assert "1 of the lab's encodings hold" in t(check.key, "en", **check.fmt)


def test_a_failed_claim_prints_its_own_sentence(tmp_path: Path) -> None:
    r"""ALiBi made bad past L on text: its claim fails, and the ✗ line says it does not hold (not that it does)."""
    runs = []
    for task, path in LAB_RUNS:
        if task == "text":
            results = json.loads(path.read_text(encoding="utf-8"))
            seeds = np.asarray(results["runs"]["alibi"]["loss_seeds"])
            seeds[:, np.asarray(results["positions"]) >= 32] += 1.0
            results["runs"]["alibi"]["loss_seeds"] = seeds.tolist()
            path = tmp_path / path.name
            path.write_text(json.dumps(results), encoding="utf-8")
        runs.append((task, path))
    good, bad = alibi_local_claim(), alibi_local_claim(tuple(runs))
    assert good.passed and good.key == "compare.check_alibi_local"
    assert not bad.passed and bad.key == "compare.check_alibi_local_not"
    for lang in ("en", "zh"):
        assert t(bad.key, lang, **bad.fmt) != t(good.key, lang, **bad.fmt)
    assert "does not hold" in t(bad.key, "en", **bad.fmt)
    assert mark(lab_verdicts(tuple(runs))["alibi"]["text"]) == "✗"


def test_every_lab_check_passes_on_the_committed_runs_and_is_derived_from_them() -> None:
    checks = [task_dependence_claim(), alibi_local_claim(), retrieval_claim(), relative_not_enough_claim()]
    assert all(c.passed and not c.key.endswith("_not") for c in checks)
    assert checks[0].fmt == {"tasks": len(LAB_RUNS), "seeds": 3, "most": 2, "count": 0}
    bands = band_table(lab_results()["retrieval"], "loss", above_optimum=True)
    assert checks[2].fmt["alibi"] == f"{bands['alibi']['16-32'].low:.3f}" and checks[2].fmt["far"] == 32


def test_the_page_prose_is_true_for_the_committed_runs() -> None:
    r"""What ``compare.extrapolation`` and ``compare.takeaway`` say, verdict by verdict (update both if this fails)."""
    named = {e: {task: mark(per_task[task]) for task in TASKS} for e, per_task in lab_verdicts().items()}
    v = {e: {task: mark(x) for task, x in per_task.items()} for e, per_task in lab_verdicts().items()}
    assert named["alibi"] == {"lag": "✓", "lag8": "○", "text": "✓", "retrieval": "◐ 8·L"}
    assert v["none"]["retrieval"] == v["t5"]["retrieval"] == "✓"
    assert v["sinusoidal"]["retrieval"] == "◐ 8·L" and v["learned"]["retrieval"] == "✗"
    assert named["rope"] == {"lag": "✗", "lag8": "◐ 2·L", "text": "✗", "retrieval": "◐ 4·L"}
    assert not any(all(mark == "✓" for mark in row.values()) for row in v.values())  # no encoding holds everywhere
    assert all(r["config"]["train_length"] == 32 for r in lab_results().values())
    assert lab_verdicts()["alibi"]["lag"].until == lab_verdicts()["alibi"]["text"].until == 8
    assert lab_verdicts()["none"]["retrieval"].until == 32


# --- figures ------------------------------------------------------------------------------------------------------


def test_small_multiples_have_one_panel_per_encoding_at_screen_resolution() -> None:
    fig = VIEW.figures["matrices"]({"length": 256}, "en")
    assert len(fig.data) == len(COMPARED)
    assert all(np.asarray(trace.z).size <= 96 * 96 for trace in fig.data)


def test_extrapolation_figure_has_one_panel_per_task_with_the_spread_over_seeds() -> None:
    fig = VIEW.figures["extrapolation"]({}, "en")
    assert len(fig.data) == len(LAB_RUNS) * len(ENCODINGS)
    axes = sorted({trace.yaxis for trace in fig.data})
    assert len(axes) == len(LAB_RUNS)
    assert all(fig.layout[f"xaxis{n}"].domain == (0.0, 1.0) for n in ("", "2", "3", "4"))  # stacked: phone-wide
    bands = band_table(lab_results()["lag"], "loss", above_optimum=True)["rope"]
    rope = next(tr for tr in fig.data if tr.yaxis == "y" and tr.name == "RoPE")
    assert list(rope.y) == pytest.approx([s.mean for s in bands.values()])
    assert list(rope.error_y.array) == pytest.approx([s.high - s.mean for s in bands.values()])
    assert list(rope.error_y.arrayminus) == pytest.approx([s.mean - s.low for s in bands.values()])
    retrieval = next(tr for tr in fig.data if tr.yaxis == "y3")  # the third run: lag, lag8, retrieval, text
    assert len(retrieval.x) == 6  # inside L, then 1–2 … 16–32·L
    titles = {a.text.replace("<br>", " ") for a in fig.layout.annotations}  # wrapped for a phone
    assert {t(f"compare.facet.{task}", "en") for task in TASKS} <= titles


# --- the page ------------------------------------------------------------------------------------------------------


def test_page_shows_the_table_and_passing_checks(open_page) -> None:
    at = open_page(SCRIPT, lang="zh")
    assert not at.exception
    assert any("Toeplitz" in md.value and "✓" in md.value for md in at.markdown)
    at.slider(key="compare.length").set_value(256).run()
    assert not at.exception and not at.error and all(box.value.startswith("✓") for box in at.success)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_tasks_verdict_is_visible_in_both_languages(open_page, lang: str) -> None:
    at = open_page(SCRIPT, lang=lang)
    assert not at.exception
    table = next(md.value for md in at.markdown if t("compare.col_extrapolates", lang) in md.value)
    rows = {line.split("|")[1].strip(" *"): line for line in table.splitlines() if line.startswith("| **")}
    for encoding, per_task in lab_verdicts().items():
        name = t("compare.enc_none", lang) if encoding == "none" else t(f"enc.{encoding}", lang)
        row = rows[name]  # the lab's numbers table (NoPE is only there)
        assert all(f"{mark(v)} {v.value:.3f}" in row for v in per_task.values())
        if encoding in COMPARED:  # the main table's short cell, in the first row for this encoding (not NoPE, the
            # hybrid or FoX, which have no position-only score matrix: page 13's not_compared says why)
            first = next(line for line in table.splitlines() if line.startswith(f"| **{name}**")).replace("\xa0", " ")
            for task, v in per_task.items():
                assert f"{t(f'compare.task.{task}', lang)} {mark(v)}" in first
    for task in TASKS:
        assert f"[{t(f'compare.task.{task}', lang)}](Extrapolation_lab?lang={lang}&task=" in table
    checks = shown_checks(at)
    for key in ("check_task_dependence", "check_alibi_local", "check_retrieval", "check_relative_not_enough"):
        check = VIEW.checks[key.removeprefix("check_")](defaults(VIEW.params))
        assert f"✓ {t(check.key, lang, residual=f'{check.residual:.1e}', **check.fmt)}" in checks


def test_no_verdict_sits_on_a_tolerance() -> None:
    r"""Every band's worst seed is at least 20 % away from the tolerance it is read against, so no mark turns on
    the rounding of a tolerance (the margins are argued next to the tolerances in the view)."""
    for task, per_encoding in lab_measures().items():
        for encoding, bands in per_encoding.items():
            for name, spread in bands.items():
                if name == "inside":
                    if lab_results()[task]["optimal_loss"] is not None:
                        assert not 0.8 <= spread.high / LEARNED_TOLERANCE <= 1.2, (task, encoding, name)
                    continue
                assert not 0.8 <= spread.high / task_tolerance(task) <= 1.2, (task, encoding, name)
