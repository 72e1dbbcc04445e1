r"""The shipped passage's committed results equal what the model computes for it now: every recipe is run again on the
model (the undecorated function, never the file) and compared, field by field, within what float32 arithmetic on
another machine may change. The shuffle's 100 seeds share two of their three losses (the text in order and
reversed, one recipe); the shuffled loss is recomputed at a few seeds.

A float error is itself what the shift curve measures, so its points are compared against the page's own claim: each
may move by a tenth of the tolerance the page's check allows (1e-4 of the logits' span), not by a relative amount."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from posenc_real import RealModel
from posenc_ui.lessons.real import relativity, shipped, view  # noqa: F401  (view registers every recipe)

#: Losses, attention masses and norms: float64 means of float32 numbers, moved by another machine's summation order.
RTOL, ATOL = 1e-4, 1e-5
#: The shuffle's seeds recomputed (the rest share their other two losses, compared for every seed).
SEEDS = (0, 1, 57, 99)


def _compare(ours: Any, theirs: Any, path: str, *, atol: float = ATOL) -> list[str]:
    if isinstance(ours, np.ndarray):
        if ours.shape != theirs.shape:
            return [f"{path}: shape {ours.shape} != {theirs.shape}"]
        if ours.dtype.kind in "iub":
            return [] if np.array_equal(ours, theirs) else [f"{path}: integers differ"]
        gap = np.abs(ours - theirs) - (atol + RTOL * np.abs(theirs))
        return [] if np.all(gap <= 0) else [f"{path}: off by up to {np.max(np.abs(ours - theirs)):.3g}"]
    if dataclasses.is_dataclass(ours):
        return [
            problem
            for field in dataclasses.fields(ours)
            for problem in _compare(getattr(ours, field.name), getattr(theirs, field.name), f"{path}.{field.name}")
        ]
    if isinstance(ours, dict):
        if list(ours) != list(theirs):
            return [f"{path}: keys {list(ours)} != {list(theirs)}"]
        return [problem for key in ours for problem in _compare(ours[key], theirs[key], f"{path}[{key}]")]
    if isinstance(ours, tuple):
        return [
            problem
            for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
            for problem in _compare(a, b, f"{path}[{i}]")
        ]
    if isinstance(ours, float):
        return [] if abs(ours - theirs) <= atol + RTOL * abs(theirs) else [f"{path}: {ours!r} != {theirs!r}"]
    return [] if ours == theirs else [f"{path}: {ours!r} != {theirs!r}"]


def _cases() -> list[tuple[str, tuple[Any, ...]]]:
    return [
        (recipe.name, settings)
        for recipe in shipped.RECIPES.values()
        for settings in recipe.settings()
        if recipe.name not in ("relativity.shuffled", "relativity.curve")
    ]


@pytest.mark.parametrize(("name", "settings"), _cases())
def test_a_shipped_result_is_what_the_model_computes_now(real: RealModel, name: str, settings: tuple) -> None:
    recipe = shipped.RECIPES[name]
    now = shipped.compute(recipe, settings)
    assert not _compare(shipped.results()[(name, settings)], now, name)


def test_the_shipped_shift_curve_is_the_models_to_a_tenth_of_the_claims_tolerance(real: RealModel) -> None:
    committed = shipped.results()[("relativity.curve", ())]
    now = shipped.compute(shipped.RECIPES["relativity.curve"], ())
    allowed = relativity.RELATIVE_TOLERANCE / 10 * now.logit_span
    problems = [
        *_compare(committed.max_change, now.max_change, "max_change", atol=allowed),
        *_compare(dataclasses.replace(committed, max_change=now.max_change), now, "curve"),
    ]
    assert not problems, problems


@pytest.mark.parametrize("seed", SEEDS)
def test_the_shipped_shuffled_losses_are_the_models(real: RealModel, seed: int) -> None:
    now = shipped.compute(shipped.RECIPES["relativity.shuffled"], (seed,))
    assert not _compare(shipped.results()[("relativity.shuffled", (seed,))], now, f"shuffled({seed})")


def test_each_seed_shuffles_differently() -> None:
    losses = [shipped.results()[("relativity.shuffled", (seed,))].loss[0] for seed in relativity.SEEDS]
    assert np.unique(losses).size > len(relativity.SEEDS) // 2
