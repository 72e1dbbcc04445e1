r"""Page 7 stays cheap to move (issue 46): what made its reruns ten times the others' is not on a move's path.

A move of s used to compute the entropy check's means over 256 queries at up to 32 768 keys (0.3–1.8 s of a server
process that every other student of it waited behind). They depend on s alone, so they are stored
(:mod:`posenc_ui.lessons.extension.entropy_table`); these tests check the stored numbers against the core and that no
slider of the page computes an entropy mean again. They count calls, not seconds.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import posenc_core.rope_scaling.entropy as core_entropy
from posenc_core import entropy_by_length
from posenc_ui.lessons.extension import entropy_table
from posenc_ui.lessons.extension.reasons import ENTROPY_LENGTHS, TABLE_SETTINGS, check_entropy
from posenc_ui.lessons.extension.view import VIEW
from posenc_ui.state import IntParam, defaults

SCRIPT = "pages/7_Context_extension.py"


def _core_changes(factor: int) -> dict[str, float]:
    r"""The check's means straight from the core: n = 512 and s·512 keys, 256 queries, seed 0 (the page's words)."""
    curves = entropy_by_length([512, factor * 512], training_length=512, queries=256, seed=0)
    return {name: float(curve[1] - curve[0]) for name, curve in curves._asdict().items()}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    r"""Every call of the core's ``mean_entropy`` (what ``entropy_by_length`` computes with) from here on."""
    calls: list[int] = []
    real = core_entropy.mean_entropy

    def mean_entropy(lengths, *args, **kwargs):
        calls.append(int(np.max(lengths)))
        return real(lengths, *args, **kwargs)

    monkeypatch.setattr(core_entropy, "mean_entropy", mean_entropy)
    return calls


def test_the_stored_file_has_the_lessons_settings_and_every_factor_of_the_slider() -> None:
    factor = VIEW.param("factor")
    data = json.loads(entropy_table.TABLE.read_text(encoding="utf-8"))
    assert data["settings"] == TABLE_SETTINGS  # else the page would silently compute live again
    assert sorted(int(s) for s in data["changes"]) == list(range(factor.lo, factor.hi + 1))


@pytest.mark.parametrize("factor", [2, 8, 64])
def test_stored_means_are_the_cores(factor: int) -> None:
    stored = entropy_table.stored_changes(factor, TABLE_SETTINGS)
    expected = _core_changes(factor)
    assert stored.keys() == expected.keys()
    for name, value in expected.items():
        assert stored[name] == pytest.approx(value, rel=1e-12, abs=1e-12), name


def test_stored_figure_curves_are_the_cores() -> None:
    expected = entropy_by_length(ENTROPY_LENGTHS, training_length=512, queries=16)
    stored = entropy_table.stored_curves(TABLE_SETTINGS)
    for name, curve in expected._asdict().items():
        np.testing.assert_allclose(getattr(stored, name), curve, rtol=1e-12, atol=1e-12)


@pytest.mark.slow  # 63 factors at up to 32 768 keys: about 20 s
def test_every_stored_factor_is_the_cores() -> None:
    factor = VIEW.param("factor")
    for s in range(factor.lo, factor.hi + 1):
        stored, expected = entropy_table.stored_changes(s, TABLE_SETTINGS), _core_changes(s)
        for name, value in expected.items():
            assert stored[name] == pytest.approx(value, rel=1e-12, abs=1e-12), (s, name)


def test_a_file_made_with_other_settings_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path, counted) -> None:
    r"""The check computes live (the same numbers) from a file whose settings are not the lesson's."""
    stale = json.loads(entropy_table.TABLE.read_text(encoding="utf-8"))
    stale["settings"]["check_queries"] = 128
    stale["changes"]["3"] = {"plain": 9.0, "yarn": 9.0, "log_n": 9.0}
    path = tmp_path / "entropy.json"
    path.write_text(json.dumps(stale), encoding="utf-8")
    monkeypatch.setattr(entropy_table, "TABLE", path)
    entropy_table._read.cache_clear()
    try:
        assert entropy_table.stored_changes(3, TABLE_SETTINGS) is None
        check = check_entropy.__wrapped__({"factor": 3})  # the recipe itself, not its cached result
        assert check.fmt["plain"] == f"{_core_changes(3)['plain']:+.2f}" and counted  # computed live
    finally:
        monkeypatch.undo()
        entropy_table._read.cache_clear()


def test_no_recipe_of_the_page_computes_an_entropy_mean_at_any_slider_value(counted) -> None:
    r"""Every figure and check of page 7, at the defaults and with each slider moved to values nobody asked for yet
    in this process (its ends and a middle value): the core's entropy means are never computed."""
    base = defaults(VIEW.params)
    sliders = [p for p in VIEW.params if isinstance(p, IntParam)]
    assert {"factor", "stretch", "window"} <= {p.name for p in sliders}
    for param in sliders:
        for value in {param.lo, param.hi, param.clamp((param.lo + param.hi) // 2 + 1, base)}:
            v = {**base, param.name: value}
            for recipe in VIEW.figures.values():
                recipe(v, "en")
            for recipe in VIEW.checks.values():
                recipe(v)
    assert counted == []


def test_moving_each_slider_on_the_page_computes_no_entropy_mean(open_page, counted) -> None:
    r"""The real page under AppTest: after its first run, a move of any slider (each to a fresh value) reruns it
    without computing an entropy mean, and the check shows the core's numbers for the new s."""
    at = open_page(SCRIPT)
    assert not at.exception
    counted.clear()  # the first run may compute what was never stored (nothing, today)
    moves = {"factor": 37, "stretch": 11, "beta_fast": 77, "beta_slow": 3, "window": 272}
    for name, value in moves.items():
        slider = next(s for s in at.slider if s.key == f"extension.{name}")
        slider.set_value(value).run()
        assert not at.exception, name
    assert counted == []
    rise = _core_changes(37)
    line = next(line for box in at.success for line in box.value.split("\n\n") if "n = 37·L" in line)
    assert f"{rise['plain']:+.2f} nats plain" in line and f"{rise['log_n']:+.2f} with Su" in line


def test_moving_a_slider_reads_the_presets_layers_no_more(open_page, monkeypatch: pytest.MonkeyPatch) -> None:
    r"""Most of page 7's recipes start from the chosen preset's config for one kind of layer, and the selector of that
    kind offers the preset's kinds. Both were read from the model's layers again on every move that missed a
    recipe: a fifth of a move's time (issue 46). After the page's first run, a move of each slider reads neither."""
    from posenc_ui.lessons.extension import layers

    at = open_page(SCRIPT)
    assert not at.exception
    calls: list[str] = []
    for name in ("layer_config", "lesson_kinds"):
        real = getattr(layers, name)
        monkeypatch.setattr(layers, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    moves = {"factor": 29, "stretch": 13, "beta_fast": 71, "beta_slow": 2, "window": 304}
    for name, value in moves.items():
        next(s for s in at.slider if s.key == f"extension.{name}").set_value(value).run()
        assert not at.exception, name
    assert calls == []
