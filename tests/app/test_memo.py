r"""The shared result cache: bounded in bytes across every function, least recently used out first."""

from __future__ import annotations

import pickle
import tracemalloc
from dataclasses import dataclass

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from posenc_ui.figures import style
from posenc_ui.memo import RESULTS, SCRATCH, Budget, approx_bytes, memo


def test_array_sizes_count_their_data() -> None:
    array = np.zeros((100, 10))
    assert 8_000 <= approx_bytes(array) < 8_500
    assert approx_bytes((array, array[:1])) > approx_bytes(array) + 80  # a tuple counts both


def test_dataclasses_and_figures_are_measured_through_their_fields() -> None:
    @dataclass(frozen=True)
    class Pair:
        a: np.ndarray
        b: float

    assert approx_bytes(Pair(np.zeros(1000), 1.0)) >= 8_000
    fig = style.figure([{"type": "heatmap", "z": np.zeros((100, 100), np.float32)}], title="t")
    assert approx_bytes(fig) >= 40_000 * 4 // 3  # the base64 string that travels
    assert fig.__dict__["_built"] is False  # measuring does not build the plotly tree


def test_a_figure_weighs_about_what_a_copy_of_it_allocates() -> None:
    z = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    fig = style.figure([{"type": "heatmap", "z": z, "x": list(range(200))}], title="t")
    wire = dict(fig.to_dict(), layout={k: v for k, v in fig.to_dict()["layout"].items() if k != "template"})
    tracemalloc.start()
    copy = pickle.loads(pickle.dumps(wire))  # every node allocated afresh (the shared template left out)
    allocated, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert copy == wire
    assert 0.8 * allocated <= approx_bytes(fig) <= 1.6 * allocated


def test_least_recently_used_goes_first_and_bytes_stay_under_the_budget() -> None:
    budget = Budget(30_000, largest=20_000)
    arrays = {name: np.zeros(1_000) for name in "abcd"}  # ~8 kB each
    for name in "abc":
        budget.put(name, arrays[name])
    assert budget.get("a") == (True, arrays["a"])  # a is now the most recent
    budget.put("d", arrays["d"])
    assert budget.get("b") == (False, None)  # b was the oldest
    assert all(budget.get(name)[0] for name in "acd") and budget.bytes <= 30_000
    budget.put("huge", np.zeros(5_000))  # 40 kB: larger than `largest`, returned to the caller but never kept
    assert budget.get("huge") == (False, None) and len(budget) == 3


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 3_000)), max_size=60))
def test_accounting_matches_what_is_held(puts: list[tuple[int, int]]) -> None:
    budget = Budget(20_000, largest=10_000)
    for key, n in puts:
        budget.put(key, np.zeros(n, np.uint8))
    held = [budget._entries[k][1] for k in budget._entries]
    assert budget.bytes == sum(held) <= 20_000
    if puts:  # the last result put is kept unless it alone is too large
        key, n = puts[-1]
        assert budget.get(key)[0] == (approx_bytes(np.zeros(n, np.uint8)) <= 10_000)


def test_memo_computes_once_and_shares_the_result() -> None:
    calls: list[int] = []

    @memo
    def square(n: int, *, scale: int = 1) -> np.ndarray:
        calls.append(n)
        return np.full(3, n * n * scale)

    first = square(4)
    assert square(4) is first and calls == [4]
    assert square(4, scale=2)[0] == 32 and calls == [4, 4]  # keyword arguments are part of the key
    assert len(SCRATCH) >= 2


def test_page_results_and_intermediates_live_in_separate_pools() -> None:
    r"""A big intermediate can only push out other intermediates, never the figures students come back to."""
    pool = Budget(100_000)

    @memo(budget=pool)
    def table(n: int) -> np.ndarray:
        return np.zeros(n)

    results_before = (len(RESULTS), RESULTS.bytes)
    table(10_000)  # 80 kB
    table(11_000)  # 88 kB: the first one goes, from its own pool only
    assert len(pool) == 1 and pool.evictions == 1
    assert (len(RESULTS), RESULTS.bytes) == results_before
