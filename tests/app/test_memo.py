r"""The shared result cache: bounded in bytes across every function, least recently used out first."""

from __future__ import annotations

import contextlib
import time
import tracemalloc
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc_core import RopeDecayTable, rope_inv_freq
from posenc_ui.figures import style
from posenc_ui.memo import RESULTS, SCRATCH, approx_bytes, memo, pool


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


def test_an_object_that_states_its_nbytes_weighs_that() -> None:
    r"""RoPE's decay table (1.1k distances × 256 pairs, complex128: 4.5 MB) counts what it holds, not a bare object."""
    table = RopeDecayTable(np.arange(1, 1100, dtype=np.float64), rope_inv_freq(512))
    assert table.phasors.nbytes == 1099 * 256 * 16 <= approx_bytes(table) < table.phasors.nbytes + 20_000


def test_a_figure_weighs_about_what_it_keeps() -> None:
    z = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    spec = [{"type": "heatmap", "z": z, "x": list(range(200))}]
    tracemalloc.start()
    fig = style.figure(spec, title="t")
    kept, _ = tracemalloc.get_traced_memory()  # what building it left allocated: the figure and nothing else
    tracemalloc.stop()
    assert fig.__dict__["_built"] is False
    assert 0.8 * kept <= approx_bytes(fig) <= 1.25 * kept
    assert approx_bytes(fig) >= z.nbytes * 4 // 3  # at least the base64 text of z, which is what travels


def test_least_recently_used_goes_first_and_bytes_stay_under_the_budget() -> None:
    store = pool(30_000, largest=20_000)
    arrays = {name: np.zeros(1_000) for name in "abcd"}  # ~8 kB each
    for name in "abc":
        store[name] = arrays[name]
    assert store["a"] is arrays["a"]  # a is now the most recent
    store["d"] = arrays["d"]
    assert "b" not in store  # b was the oldest
    assert all(name in store for name in "acd") and store.currsize <= 30_000
    with pytest.raises(ValueError):  # 40 kB: larger than `largest`; memo returns it to the caller, never keeps it
        store["huge"] = np.zeros(5_000)
    assert "huge" not in store and len(store) == 3


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 3_000)), max_size=60))
def test_accounting_matches_what_is_held(puts: list[tuple[int, int]]) -> None:
    store = pool(20_000, largest=10_000)
    for key, n in puts:
        with contextlib.suppress(ValueError):  # too large to keep
            store[key] = np.zeros(n, np.uint8)
    assert store.currsize == sum(approx_bytes(v) for v in store.values()) <= 20_000
    if puts:  # the last result put is kept unless it alone is too large
        key, n = puts[-1]
        assert (key in store) == (approx_bytes(np.zeros(n, np.uint8)) <= 10_000)


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
    scratch = pool(100_000)

    @memo(budget=scratch)
    def table(n: int) -> np.ndarray:
        return np.zeros(n)

    results_before = (len(RESULTS), RESULTS.currsize)
    table(10_000)  # 80 kB
    table(11_000)  # 88 kB: the first one goes, from its own pool only
    assert list(scratch) == [(table.__wrapped__, (11_000,), ())]  # the first one went, from its own pool only
    assert (len(RESULTS), RESULTS.currsize) == results_before


def test_a_recipe_that_reads_no_parameter_is_kept_when_the_pools_are_flushed() -> None:
    r"""Issue 46: a fixed demonstration (seconds to compute, the same for every reader) is not pushed out of the
    bounded pools by a class's traffic; a recipe that reads a parameter still lives in them."""
    from posenc_ui.lesson import uses

    calls: list[str] = []

    @uses()
    def fixed(v, lang: str) -> str:
        calls.append(lang)
        return f"fixed {lang}"

    @uses("n")
    def moving(v, lang: str) -> str:
        calls.append(f"{v['n']} {lang}")
        return lang

    assert fixed({"n": 1}, "en") == "fixed en" and moving({"n": 1}, "en") == "en"
    RESULTS.clear()
    SCRATCH.clear()
    assert fixed({"n": 2}, "en") == "fixed en" and moving({"n": 1}, "en") == "en"
    assert calls == ["en", "1 en", "1 en"]  # the fixed one computed once, the other again after the flush


def test_what_the_real_model_computed_lives_in_its_own_pool() -> None:
    r"""Each memoized computation of the real-model page (minutes of forwards for a text, ~1 MB) is kept in
    :data:`posenc_ui.memo.MODEL`, which no other page's results share: filling :data:`RESULTS` cannot push it out.
    Checked on every module of the page's lesson folder (no model is loaded: the wrappers are only inspected)."""
    import importlib
    import pkgutil

    from posenc_ui import memo as memo_module
    from posenc_ui.lessons import real

    found = []
    for info in pkgutil.iter_modules(real.__path__):
        module = importlib.import_module(f"{real.__name__}.{info.name}")
        for name, fn in vars(module).items():
            pool = getattr(fn, "cache", None)
            if callable(fn) and getattr(fn, "__module__", None) == module.__name__ and pool is not None:
                found.append(name)
                assert pool is memo_module.MODEL, f"{module.__name__}.{name} is kept in another pool"
    assert len(found) >= 10, found  # the page's computations, found (not an empty sweep)
    calls: list[str] = []

    def forwards(text: str) -> np.ndarray:
        calls.append(text)
        return np.zeros(1000)

    probe = memo_module.memo(forwards, budget=memo_module.MODEL)
    probe("kept")
    try:
        for i in range(400):  # ~200 MB of other pages' results: more than RESULTS holds
            memo_module.RESULTS[("flood", i)] = np.zeros(2**16)
        probe("kept")
    finally:
        memo_module.RESULTS.clear()
    assert calls == ["kept"]  # computed once: the flood did not reach it


def _burn(seconds: float) -> None:
    r"""Spend ``seconds`` of this thread's CPU (what :func:`memo` measures), however busy the machine is."""
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        pass


def _flood_bounded_pools() -> None:
    from posenc_ui import memo as memo_module

    for i in range(600):  # 300 MB of tables and figures: more than SCRATCH and RESULTS hold together
        memo_module.SCRATCH[("flood", i)] = np.zeros(2**16)
        memo_module.RESULTS[("flood", i)] = np.zeros(2**16)


def test_a_small_result_that_cost_cpu_outlives_a_flood_of_the_big_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    r"""Issue 46: page 10's entropy curves (1.5 s, 2 KB) lived in SCRATCH, a class's tables pushed them out, and the
    visit that drew them again held up every student of the process. A miss that cost DEAR_SECONDS of CPU is kept in
    DEAR, which the tables cannot flush; a cheap result, or a dear one too large for DEAR, stays in its own pool."""
    from posenc_ui import memo as memo_module

    monkeypatch.setattr(memo_module, "DEAR_SECONDS", 0.02)  # the rule, not its threshold: a short test
    calls: list[str] = []

    @memo
    def dear(n: int) -> np.ndarray:
        calls.append("dear")
        _burn(0.03)
        return np.zeros(n)

    @memo
    def cheap(n: int) -> np.ndarray:
        calls.append("cheap")
        return np.zeros(n)

    @memo(budget=RESULTS)
    def dear_and_large(n: int) -> np.ndarray:
        calls.append("large")
        _burn(0.03)
        return np.zeros(n)

    large = memo_module.DEAR_LARGEST // 8 + 1_000  # float64 entries: past what DEAR keeps
    try:
        dear(100), cheap(100), dear_and_large(large)
        assert (dear.__wrapped__, (100,), ()) in memo_module.DEAR
        assert (cheap.__wrapped__, (100,), ()) in SCRATCH
        assert (dear_and_large.__wrapped__, (large,), ()) in RESULTS
        _flood_bounded_pools()
        dear(100), cheap(100), dear_and_large(large)
    finally:
        SCRATCH.clear()
        RESULTS.clear()
    assert calls == ["dear", "cheap", "large", "cheap", "large"]  # only the small dear one was kept


def test_a_function_of_no_arguments_is_computed_once_per_process() -> None:
    r"""Its one result is the same for every reader (page 10's plain entropy curves, page 3's probe), so it is kept
    in KEPT, which no pool's bound can flush, however cheap it was."""
    from posenc_ui import memo as memo_module

    calls: list[int] = []

    @memo
    def fixed() -> np.ndarray:
        calls.append(1)
        return np.zeros(10)

    assert fixed.cache is memo_module.KEPT
    first = fixed()
    _flood_bounded_pools()
    memo_module.DEAR.clear()
    SCRATCH.clear()
    RESULTS.clear()
    assert fixed() is first and calls == [1]


def test_a_default_left_out_or_spelled_out_is_one_entry() -> None:
    r"""Page 3 asked for its table as ``_table(L, d, base)`` in one place and ``_table(L, d, base, "interleaved")`` in
    another, and kept the same 30 MB table twice under two keys. The key is the arguments as the function sees them."""
    calls: list[tuple] = []

    @memo
    def table(length: int, layout: str = "interleaved", *, scale: float = 1.0) -> np.ndarray:
        calls.append((length, layout, scale))
        return np.zeros(length)

    try:
        first = table(8)
        assert table(8, "interleaved") is first and table(8, layout="interleaved") is first
        assert table(length=8, scale=1.0) is first
        assert table(8, "concat") is not first and table(8, scale=2.0) is not first
    finally:
        SCRATCH.clear()
    assert calls == [(8, "interleaved", 1.0), (8, "concat", 1.0), (8, "interleaved", 2.0)]
