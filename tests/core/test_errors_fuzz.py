r"""Bad arguments end in :class:`posenc_core.PosEncError` — and in nothing else.

docs/design.md: every bad argument raises ``posenc_core.PosEncError``, whose message names the argument, the value and
what is allowed. Pages show that message as it is, so any other exception (a NumPy ``IndexError``, a ``TypeError`` from
``int(None)``, a ``MemoryError`` from a 2^40-element request, a RuntimeWarning from ``nan`` arithmetic) is a bug: the
user would see a traceback instead of a sentence.

Two halves: a fuzz that throws a hostile mix of values at every public function of ``posenc_core.__all__`` (in
every positional and keyword slot of its signature), and targeted cases that check the message names the argument.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import math
import os
import signal
import threading
import tracemalloc
import warnings

import numpy as np
import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import posenc_core as pc
from posenc_core.rope_scaling.families import FAMILY_CONVENTIONS

# ------------------------------------------------------------------------------------------------ hostile values

_SPECIAL_INTS = [
    0,
    1,
    -1,
    2,
    3,
    7,
    -2,
    -(10**12),
    10**12,
    2**31,
    2**53 + 1,
    2**63,
    2**64 + 1,
    pc.MAX_ELEMENTS + 1,
]
_SPECIAL_FLOATS = [
    math.nan,
    math.inf,
    -math.inf,
    -0.0,
    0.0,
    1e308,
    -1e308,
    5e-324,
    0.5,
    1.5,
    1e-300,
    2.0**53 + 2,
]
_SPECIAL_STRINGS = [
    "",
    "half",
    "interleaved",
    "concat",
    "none",
    "sinusoidal",
    "rope",
    "alibi",
    "yarn",
    "llama3",
    "default",
    "10",
    "nan",
    "位置编码",
    "\x00",
    "🙂" * 3,
]
_NUMPY_SCALARS = [
    np.float64(math.nan),
    np.float32(math.inf),
    np.float16(65504),
    np.int64(-1),
    np.int8(-128),
    np.uint64(2**64 - 1),
    np.bool_(True),
    np.complex128(1 + 2j),
    np.int32(4),
    np.float64(8.0),
    np.datetime64("2024-01-01"),
    np.str_("half"),
]

_DTYPES = [
    np.float64,
    np.float32,
    np.float16,
    np.int8,
    np.int64,
    np.uint8,
    np.uint64,
    np.bool_,
    np.complex128,
]

scalars = st.one_of(
    st.sampled_from(_SPECIAL_INTS),
    st.integers(-5, 70),
    st.sampled_from(_SPECIAL_FLOATS),
    # Bounded finite floats: an integral float such as 9998.0 is a *valid* length (as JSON configs write them), and
    # t5_bucket_matrix(9998.0, 9998.0) is a legal 10^8-entry request — too slow and big for a fuzz loop.
    st.floats(-100.0, 100.0),
    st.floats(min_value=1e15, allow_infinity=False) | st.floats(max_value=-1e15, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.sampled_from(_SPECIAL_STRINGS),
    st.text(max_size=4),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.sampled_from(_NUMPY_SCALARS),
    st.just(b"bytes"),
)

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)

numeric_arrays = st.one_of(
    *[hnp.arrays(dtype=np.dtype(dt), shape=shapes) for dt in _DTYPES],
    hnp.arrays(dtype=np.float64, shape=shapes, elements=st.sampled_from(_SPECIAL_FLOATS)),
)
odd_arrays = st.one_of(
    hnp.arrays(
        dtype=object,
        shape=shapes,
        elements=st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=2), st.floats()),
    ),
    hnp.arrays(dtype=np.dtype("U3"), shape=shapes),
    st.just(np.empty((0,))),
    st.just(np.empty((0, 4))),
    st.just(np.empty((4, 0))),
    st.just(np.ones((1, 1, 1, 1, 1, 1))),
    st.just(np.arange(12.0).reshape(3, 4)[:, ::2]),  # non-contiguous
    st.just(np.array(3.0)),  # 0-d
    st.just(np.ma.masked_array([1.0, 2.0], mask=[0, 1])),
)
arrays = st.one_of(numeric_arrays, odd_arrays)

leaf = st.one_of(scalars, arrays)
containers = st.recursive(
    leaf,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children, children),
        st.dictionaries(st.one_of(st.text(max_size=4), st.integers(-2, 2)), children, max_size=3),
    ),
    max_leaves=8,
)
nested_numbers = st.one_of(
    st.lists(st.floats(allow_nan=True), max_size=6),
    st.lists(st.lists(st.integers(-(2**70), 2**70), max_size=3), max_size=3),  # ragged, overflowing
    st.lists(st.lists(st.floats(-10, 10), min_size=2, max_size=2), max_size=4),
)
hostile = st.one_of(scalars, arrays, containers, nested_numbers)

# ------------------------------------------------------------- plausible values, so the fuzz reaches deep code

# Every key some rope_type reads, from the registry, and the two base keys a rope_parameters dict may carry.
_HF_KEYS = sorted(
    {key for entry in pc.ROPE_REGISTRY.values() for key in entry.keys} | {"rope_theta", "partial_rotary_factor"}
)


_even_dims = st.sampled_from([8, 16, 64])


def _maybe_hostile(valid):
    return st.one_of(valid, valid, hostile)


_scaling_values = {
    "factor": st.floats(0.5, 64.0),
    "original_max_position_embeddings": st.integers(1, 200_000),
    "beta_fast": st.floats(0.0, 64.0),
    "beta_slow": st.floats(0.0, 4.0),
    "mscale": st.floats(0.0, 2.0),
    "mscale_all_dim": st.floats(0.0, 2.0),
    "attention_factor": st.floats(0.0, 4.0),
    "truncate": st.booleans(),
    "low_freq_factor": st.floats(0.0, 8.0),
    "high_freq_factor": st.floats(0.0, 8.0),
    "short_factor": st.lists(st.floats(0.5, 10.0), min_size=0, max_size=40),
    "long_factor": st.lists(st.floats(0.5, 10.0), min_size=0, max_size=40),
    "rope_theta": st.floats(1.0, 1e6),
    "partial_rotary_factor": st.floats(0.0, 1.0),
}

rope_scaling_dicts = st.fixed_dictionaries(
    {"rope_type": st.one_of(st.sampled_from(list(pc.ROPE_TYPES)), hostile)},
    optional={
        **{key: _maybe_hostile(_scaling_values.get(key, hostile)) for key in _HF_KEYS},  # a new key: hostile only
        "type": st.sampled_from(list(pc.ROPE_TYPES)),
        "unknown_key": hostile,
    },
)

configs = st.fixed_dictionaries(
    {},
    optional={
        "head_dim": _maybe_hostile(st.sampled_from([2, 4, 8, 64, 128])),
        "hidden_size": _maybe_hostile(st.sampled_from([64, 512, 4096])),
        "num_attention_heads": _maybe_hostile(st.sampled_from([1, 8, 32, 0])),
        "qk_rope_head_dim": _maybe_hostile(st.sampled_from([64, 3])),
        "rope_theta": _maybe_hostile(st.floats(1.0, 1e7)),
        "rotary_emb_base": _maybe_hostile(st.floats(1.0, 1e7)),
        "max_position_embeddings": _maybe_hostile(st.integers(1, 10**6)),
        "original_max_position_embeddings": _maybe_hostile(st.integers(1, 10**6)),
        "partial_rotary_factor": _maybe_hostile(st.floats(0.0, 1.0)),
        "rotary_pct": _maybe_hostile(st.floats(0.0, 1.0)),
        "rotary_dim": _maybe_hostile(st.integers(0, 128)),
        "rope_scaling": st.one_of(st.none(), rope_scaling_dicts, hostile),
        "rope_parameters": st.one_of(
            st.none(),
            rope_scaling_dicts,
            st.dictionaries(st.sampled_from(["full_attention", "sliding_attention"]), rope_scaling_dicts, max_size=2),
            hostile,
        ),
        # the whole-model fields model_layers reads
        "num_hidden_layers": _maybe_hostile(st.integers(0, 12)),
        "layer_types": _maybe_hostile(
            st.lists(st.sampled_from(["full_attention", "sliding_attention", "chunked_attention", "conv"]), max_size=6)
        ),
        "no_rope_layers": _maybe_hostile(st.lists(st.integers(-1, 2), max_size=6)),
        "no_rope_layer_interval": _maybe_hostile(st.integers(0, 5)),
        "layer_rope_theta": _maybe_hostile(st.lists(st.floats(0.0, 1e6), max_size=6)),
        "sliding_window": _maybe_hostile(st.integers(0, 4096)),
        "attention_chunk_size": _maybe_hostile(st.integers(0, 8192)),
        "attn_temperature_tuning": _maybe_hostile(st.booleans()),
        "floor_scale": _maybe_hostile(st.integers(0, 8192)),
        "attn_scale": _maybe_hostile(st.floats(0.0, 1.0)),
        "per_layer_config": _maybe_hostile(
            st.dictionaries(st.sampled_from(["00", "01", "x"]), st.fixed_dictionaries({"head_dim": _even_dims}))
        ),
        "model_type": st.sampled_from([*sorted(FAMILY_CONVENTIONS), "llama", "gemma3_text"]),
    },
)


def _float_vectors(lo, hi, max_size=70, min_size=1):
    return hnp.arrays(np.float64, st.integers(min_size, max_size), elements=st.floats(lo, hi))


_small_int = st.integers(1, 48)
_grids = st.one_of(
    st.integers(0, 4),
    st.tuples(st.integers(1, 4), st.integers(1, 4)),
    st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4)),
)
_segments = st.lists(st.tuples(st.sampled_from(["text", "image", "video", "audio"]), _grids), max_size=4)


def _layers_or_none(config):
    """model_layers' records for a fuzzed config, or () where the config is refused."""
    try:
        return pc.model_layers(config)
    except pc.PosEncError:
        return ()


_even = st.integers(1, 32).map(lambda n: 2 * n)
_matrix = st.tuples(st.integers(1, 12), st.sampled_from([2, 4, 8, 16])).flatmap(
    lambda s: hnp.arrays(np.float64, s, elements=st.floats(-3, 3))
)
_inv_freq = st.tuples(_even, st.floats(2.0, 1e6)).map(lambda t: pc.rope_inv_freq(t[0], base=t[1]))

_VALID_BY_NAME = {
    "length": _small_int,
    "query_length": _small_int,
    "key_length": _small_int,
    "max_length": _small_int,
    "n_heads": _small_int,
    "context_length": st.integers(1, 10**6),
    "head_dim": _even,
    "dim": _even,
    "base": st.floats(1.5, 1e6),
    "offset": st.integers(-1000, 1000),
    "position": st.floats(-1e6, 1e6),
    "positions": st.one_of(_float_vectors(-1e6, 1e6), st.integers(1, 300).map(lambda n: np.arange(n, dtype=float))),
    "query_positions": _float_vectors(0, 1e4),
    "key_positions": _float_vectors(0, 1e4),
    "inv_freq": _inv_freq,
    "x": _matrix,
    "q": _matrix,
    "k": _matrix,
    "v": _matrix,
    "w_q": _matrix,
    "w_k": _matrix,
    "w_v": _matrix,
    "bias": _matrix,
    "table": _matrix,
    "scale": st.floats(0.01, 10),
    "attention_factor": st.floats(0.1, 4),
    "pairing": st.sampled_from(["half", "interleaved"]),
    "layout": st.sampled_from(["interleaved", "concat"]),
    "encoding": st.sampled_from(list(pc.ENCODINGS)),
    "rope_scaling": st.one_of(st.none(), rope_scaling_dicts),
    "config": configs,
    "segments": _segments,
    "mrope_section": st.one_of(st.lists(st.integers(0, 24), min_size=3, max_size=3), st.just([16, 24, 24])),
    "position_ids": st.integers(0, 20).map(lambda n: np.stack([np.arange(n)] * 3)),
    "layers": configs.map(_layers_or_none),
    "max_position_embeddings": st.integers(1, 10**6),
    "seq_len": st.integers(1, 10**6),
    "partial_rotary_factor": st.floats(0.01, 1.0),
    "max_relative": st.integers(0, 20),
    "relative_position": st.one_of(st.integers(-500, 500), hnp.arrays(np.int64, st.integers(1, 50))),
    "bidirectional": st.booleans(),
    "causal": st.booleans(),
    "same_vector": st.booleans(),
    "truncate": st.booleans(),
    "wrap": st.booleans(),
    "num_buckets": st.sampled_from([2, 4, 8, 32, 3]),
    "max_distance": st.integers(1, 10**6),
    "distances": st.one_of(
        hnp.arrays(np.int64, st.integers(1, 50), elements=st.integers(0, 10**6)),
        st.integers(1, 200).map(np.arange),
    ),
    "offsets": hnp.arrays(np.int64, st.integers(1, 50), elements=st.integers(-(10**4), 10**4)),
    "permutation": st.integers(1, 12).flatmap(lambda n: st.permutations(range(n))),
    "tokens": st.one_of(
        st.lists(st.text(max_size=3), max_size=12),
        st.lists(st.integers(0, 50), max_size=12),
        st.text(max_size=12),
    ),
    "n_samples": st.integers(1, 64),
    "sequences": st.integers(2, 64),
    "latent_dim": st.integers(1, 8),
    "rope_dim": _even,
    "seed": st.integers(0, 2**32),
    "tolerance": st.floats(0.0, 1.0),
    "beta_fast": st.floats(0.5, 64),
    "beta_slow": st.floats(0.0, 4),
    "original_max_position_embeddings": st.integers(1, 10**6),
    "layer_type": st.one_of(st.none(), st.sampled_from(["full_attention", "sliding_attention"])),
    "axis": st.integers(-3, 3),
    "weights": st.integers(1, 9).flatmap(lambda n: hnp.arrays(np.float64, (n,), elements=st.floats(-2, 2))),
    "heads": st.one_of(st.none(), st.lists(st.integers(0, 8), max_size=4), st.integers(0, 8)),
    "d_model": _small_int,
    "d_head": _small_int,
    "ids": st.lists(hnp.arrays(np.int64, st.integers(1, 6), elements=st.integers(-1, 8)), min_size=1, max_size=3),
    "tables": st.lists(
        st.tuples(st.integers(1, 8), st.just(4)).flatmap(
            lambda s: hnp.arrays(np.float64, s, elements=st.floats(-1, 1))
        ),
        min_size=1,
        max_size=3,
    ),
    "dtype": st.sampled_from([np.float64, np.float32, "float32", "float64", np.int64, "complex64", None]),
}


def _value_for(name: str):
    valid = _VALID_BY_NAME.get(name)
    return hostile if valid is None else st.one_of(valid, hostile)


# ------------------------------------------------------------------------------------------- the call harness


class CallTookTooLong(Exception):
    """A public function ran longer than CALL_LIMIT_S on tiny arguments: a denial of service for a page."""


CALL_LIMIT_S = 5.0


@contextlib.contextmanager
def _time_limit(seconds: float):
    if threading.current_thread() is not threading.main_thread():  # signals only work on the main thread
        yield
        return

    def _raise(signum, frame):
        raise CallTookTooLong(f"call did not return within {seconds} s")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _call_expecting_only_posenc_error(fn, args, kwargs):
    """Call fn; PosEncError (or success) is fine, anything else propagates and fails the test.

    A returned value must hold no NaN — except from a class (``RopeFrequencies`` is a plain NamedTuple holder).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning from nan arithmetic is a bug, not a message
        with (
            np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"),
            _time_limit(CALL_LIMIT_S),
        ):
            try:
                result = fn(*args, **kwargs)
            except pc.PosEncError as exc:
                assert str(exc), "PosEncError must carry a message"
                return
    if fn is pc.pair_wavelengths:
        _assert_gaps_only_where_no_pair_turns(result, *args, **kwargs)
    elif not inspect.isclass(fn):
        _assert_no_nan(result)


def _assert_gaps_only_where_no_pair_turns(result, inv_freq, pairs=None):
    """pair_wavelengths documents NaN as a gap: a pair with θ = 0, or a slot past the head. Nowhere else."""
    theta = np.asarray(inv_freq, dtype=np.float64)
    expected = np.ones(result.shape[0], dtype=bool)  # slots past the head are gaps
    expected[: theta.shape[0]] = theta == 0
    assert np.array_equal(np.isnan(result), expected), "NaN where a pair turns, or a number where none does"


def _assert_no_nan(result, where="result"):
    """A call that returns must not return NaN: "never … a silent nan" (errors.py). ±inf may be a mask."""
    if isinstance(result, np.ndarray):
        if result.dtype.kind in "fc":
            assert not np.isnan(result).any(), f"{where} holds NaN"
    elif isinstance(result, float):
        assert not math.isnan(result), f"{where} is NaN"
    elif isinstance(result, tuple):
        for i, item in enumerate(result):
            _assert_no_nan(item, f"{where}[{i}]")


def _is_fuzzable(name: str) -> bool:
    obj = getattr(pc, name)
    if not callable(obj):
        return False
    return not (inspect.isclass(obj) and issubclass(obj, BaseException))


PUBLIC_CALLABLES = sorted(name for name in pc.__all__ if _is_fuzzable(name))

FUZZ = settings(
    max_examples=int(os.environ.get("POSENC_FUZZ_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def test_every_public_function_is_fuzzed():
    # guard against the list silently shrinking (e.g. a failed import turning names into non-callables)
    funcs = [n for n in pc.__all__ if inspect.isfunction(getattr(pc, n))]
    assert set(funcs) <= set(PUBLIC_CALLABLES)
    assert len(funcs) >= 30


@pytest.mark.parametrize("name", PUBLIC_CALLABLES)
@FUZZ
@given(data=st.data())
def test_hostile_arguments_raise_only_posenc_error(name, data):
    fn = getattr(pc, name)
    params = list(inspect.signature(fn).parameters.values())
    args, kwargs = [], {}
    positional_open = True  # once a slot is skipped or passed by keyword, later ones must be keywords too
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        required = p.default is inspect.Parameter.empty
        if not required and data.draw(st.booleans(), label=f"omit {p.name}"):
            positional_open = False
            continue
        value = data.draw(_value_for(p.name), label=p.name)
        by_position = p.kind == p.POSITIONAL_ONLY or (
            p.kind == p.POSITIONAL_OR_KEYWORD and positional_open and data.draw(st.booleans(), label="positional")
        )
        if by_position and positional_open:
            args.append(value)
        else:
            positional_open = False
            kwargs[p.name] = value
    _call_expecting_only_posenc_error(fn, args, kwargs)


# Minimal inputs the fuzz has found (kept so they are checked on every run, whatever hypothesis draws).
FOUND_BY_FUZZ = {
    "softmax(empty)": (pc.softmax, (np.array([]),), {}),
    "softmax(empty axis)": (pc.softmax, (np.empty((3, 0)),), {}),
    "attention_scores(d=0)": (pc.attention_scores, (np.empty((4, 0)), np.empty((4, 0))), {}),
    "attention(no keys)": (pc.attention, (np.empty((0, 4)), np.empty((0, 4)), np.empty((0, 4))), {}),
    "attention(d=0)": (pc.attention, (np.empty((4, 0)), np.empty((4, 0)), np.ones((4, 2))), {}),
    "rope_scores(d=0)": (pc.rope_scores, ([[]], [[]], 0), {}),
    "rope_wavelengths(subnormal)": (pc.rope_wavelengths, (np.array([5e-324]),), {}),
    "rotations_in_context(1e308)": (pc.rotations_in_context, (np.array([1e308]), 2), {}),
    "rope_angles(1e308)": (pc.rope_angles, (np.array([1e308]), np.array([1e308])), {}),
    "sinusoidal_shift_matrix(dim=65504)": (pc.sinusoidal_shift_matrix, (0, np.float16(65504)), {}),
    "lookup_positions(float16 position)": (pc.lookup_positions, (np.zeros((1, 1)), np.float16(0)), {}),
    "t5_relative_bucket(float16)": (pc.t5_relative_bucket, (np.float16(0),), {}),
    "neighbour_distances(1e155)": (pc.neighbour_distances, (np.array([[1e155], [0.0]]),), {}),
    "rope_decay_bound(float16 inv_freq)": (pc.rope_decay_bound, (np.arange(3), np.float16([1.0, 0.5])), {}),
    "pair_wavelengths(negative θ)": (pc.pair_wavelengths, (np.array([1.0, -0.5]),), {"pairs": 4}),
    "scaling_spread(None)": (pc.scaling_spread, (None,), {}),
}


@pytest.mark.parametrize("case", list(FOUND_BY_FUZZ))
def test_inputs_found_by_the_fuzz_raise_only_posenc_error(case):
    fn, args, kwargs = FOUND_BY_FUZZ[case]
    _call_expecting_only_posenc_error(fn, args, kwargs)


# -------------------------------------------------------------------------------------- targeted bad arguments


def _raises_naming(argument: str, fn, *args, **kwargs):
    with pytest.raises(pc.PosEncError) as info:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fn(*args, **kwargs)
    assert argument in str(info.value), f"message {str(info.value)!r} does not name {argument!r}"
    return info.value


INV8 = np.array([1.0, 0.1, 0.01, 0.001])
X8 = np.ones((3, 8))
P3 = np.arange(3.0)


@pytest.mark.parametrize(
    ("argument", "call"),
    [
        ("dim", lambda: pc.sinusoidal(8, 7)),
        ("dim", lambda: pc.sinusoidal_inv_freq(9)),
        ("dim", lambda: pc.sinusoidal_shift_matrix(1, 5)),
        ("dim", lambda: pc.rope_inv_freq(7)),
        ("head_dim", lambda: pc.rope_frequencies(0)),
        ("length", lambda: pc.sinusoidal(0, 8)),
        ("length", lambda: pc.sinusoidal(-3, 8)),
        ("length", lambda: pc.integer_positions(0)),
        ("length", lambda: pc.normalized_positions(-1)),
        ("max_length", lambda: pc.learned_table(0, 8)),
        ("query_length", lambda: pc.shaw_relative_index(0, 4, max_relative=2)),
        ("query_length", lambda: pc.relative_positions(-2)),
        # more queries than keys would sit at negative positions, before any key: refused, both lengths named
        ("query_length", lambda: pc.shaw_relative_index(5, 4, max_relative=2)),
        ("key_length", lambda: pc.shaw_relative_index(5, 4, max_relative=2)),
        ("query_length", lambda: pc.relative_positions(3, 1)),
        ("query_length", lambda: pc.alibi_bias(2, 6, 5)),
        ("query_length", lambda: pc.t5_bucket_matrix(3, 2)),
        ("n_heads", lambda: pc.alibi_slopes(0)),
        ("n_heads", lambda: pc.alibi_slopes(-4)),
        ("base", lambda: pc.sinusoidal(8, 8, base=1.0)),
        ("base", lambda: pc.sinusoidal(8, 8, base=0.5)),
        ("base", lambda: pc.rope_inv_freq(8, base=-10.0)),
        ("base", lambda: pc.rope_frequencies(8, base=1.0)),
        ("base", lambda: pc.sinusoidal(8, 8, base=math.nan)),
        ("base", lambda: pc.rope_inv_freq(8, base=math.inf)),
        ("offset", lambda: pc.sinusoidal_shift_matrix(math.nan, 8)),
        ("position", lambda: pc.rope_rotation_matrix(math.inf, INV8)),
        ("x", lambda: pc.apply_rope(np.full((3, 8), math.nan), P3, INV8)),
        ("positions", lambda: pc.apply_rope(X8, np.array([0.0, math.inf, 2.0]), INV8)),
        ("inv_freq", lambda: pc.apply_rope(X8, P3, np.array([1.0, math.nan]))),
        ("inv_freq", lambda: pc.rope_angles(P3, np.array([1.0, -1.0]))),
        ("attention_factor", lambda: pc.apply_rope(X8, P3, INV8, attention_factor=math.nan)),
        ("length", lambda: pc.sinusoidal("8", 8)),
        ("length", lambda: pc.sinusoidal(8.5, 8)),
        ("length", lambda: pc.sinusoidal(None, 8)),
        ("length", lambda: pc.sinusoidal(True, 8)),
        ("dim", lambda: pc.sinusoidal(8, [8])),
        ("layout", lambda: pc.sinusoidal(8, 8, layout="diagonal")),
        ("pairing", lambda: pc.apply_rope(X8, P3, INV8, pairing="zigzag")),
        ("x", lambda: pc.apply_rope("not an array", P3, INV8)),
        ("x", lambda: pc.softmax(np.array(["a", "b"]))),
        ("x", lambda: pc.softmax(np.array([1 + 1j, 2.0]))),
        ("causal", lambda: pc.alibi_bias(4, 3, causal="yes")),
        ("bidirectional", lambda: pc.t5_relative_bucket(3, bidirectional="no")),
        ("num_buckets", lambda: pc.t5_relative_bucket(3, num_buckets=0)),
        ("max_distance", lambda: pc.t5_relative_bucket(3, max_distance=-1)),
        ("max_relative", lambda: pc.shaw_relative_index(4, 4, max_relative=-1)),
        ("rope_type", lambda: pc.rope_frequencies(64, rope_scaling={"rope_type": "warp"})),
        ("rope_type", lambda: pc.rope_frequencies(64, rope_scaling={"rope_type": 3})),
        ("factor", lambda: pc.rope_frequencies(64, rope_scaling={"rope_type": "linear", "factor": 0.5})),
        ("factor", lambda: pc.rope_frequencies(64, rope_scaling={"rope_type": "ntk", "factor": math.nan})),
        ("factor", lambda: pc.rope_frequencies(64, rope_scaling={"rope_type": "linear", "factor": "2"})),
        ("factor", lambda: pc.rope_frequencies(64, rope_scaling={"rope_type": "linear"})),
        (
            "factor",
            lambda: pc.rope_frequencies(
                64, rope_scaling={"rope_type": "yarn", "original_max_position_embeddings": 4096}
            ),
        ),
        (
            "factor",
            lambda: pc.rope_frequencies(
                64,
                rope_scaling={"rope_type": "yarn", "factor": 0.5, "original_max_position_embeddings": 4096},
            ),
        ),
        (
            "short_factor",
            lambda: pc.rope_frequencies(
                64,
                rope_scaling={
                    "rope_type": "longrope",
                    "factor": 4.0,
                    "original_max_position_embeddings": 4096,
                    "short_factor": [1.0] * 31,
                    "long_factor": [1.0] * 32,
                },
            ),
        ),
        (
            "long_factor",
            lambda: pc.rope_frequencies(
                64,
                rope_scaling={
                    "rope_type": "longrope",
                    "factor": 4.0,
                    "original_max_position_embeddings": 4096,
                    "short_factor": [1.0] * 32,
                    "long_factor": [1.0] * 33,
                },
            ),
        ),
        (
            "long_factor",
            lambda: pc.rope_frequencies(
                64,
                rope_scaling={
                    "rope_type": "longrope",
                    "factor": 4.0,
                    "original_max_position_embeddings": 4096,
                    "short_factor": [1.0] * 32,
                    "long_factor": [1.0] * 31 + [math.nan],
                },
            ),
        ),
        (
            "unknown",
            lambda: pc.rope_frequencies(64, rope_scaling={"rope_type": "linear", "factor": 2.0, "unknown": 1}),
        ),
        ("rope_scaling", lambda: pc.rope_frequencies(64, rope_scaling=[("rope_type", "linear")])),
        ("max_position_embeddings", lambda: pc.rope_frequencies(64, max_position_embeddings=0)),
        ("seq_len", lambda: pc.rope_frequencies(64, seq_len=-5)),
        ("partial_rotary_factor", lambda: pc.rope_frequencies(64, partial_rotary_factor=1.5)),
        ("partial_rotary_factor", lambda: pc.rope_frequencies(64, partial_rotary_factor=0.0)),
        ("seed", lambda: pc.learned_table(4, 4, seed=-1)),
        ("seed", lambda: pc.learned_table(4, 4, seed="zero")),
        ("n_samples", lambda: pc.rope_decay_random(np.arange(4), INV8, n_samples=0)),
        ("distances", lambda: pc.rope_decay_bound(np.array([0.0, math.nan]), INV8)),
        ("max_distance", lambda: pc.rope_near_repeats(INV8, max_distance=-1)),
        ("tolerance", lambda: pc.rope_near_repeats(INV8, tolerance=math.nan)),
        (
            "encoding",
            lambda: pc.self_attention(X8, w_q=np.eye(8), w_k=np.eye(8), w_v=np.eye(8), encoding="fourier"),
        ),
        (
            "permutation",
            lambda: pc.permutation_equivariance_residual(X8, [0, 0, 1], w_q=np.eye(8), w_k=np.eye(8), w_v=np.eye(8)),
        ),
        ("context_length", lambda: pc.rotations_in_context(INV8, 0)),
    ],
)
def test_named_bad_argument_raises_posenc_error_naming_it(argument, call):
    _raises_naming(argument, call)


def test_lookup_past_the_learned_table_raises_position_out_of_range():
    table = pc.learned_table(8, 4)
    with pytest.raises(pc.PositionOutOfRangeError, match="8"):
        pc.lookup_positions(table, [0, 8])
    assert issubclass(pc.PositionOutOfRangeError, pc.PosEncError)
    assert issubclass(pc.PosEncError, ValueError)


def test_softmax_of_an_all_minus_inf_row_is_a_posenc_error_not_nan():
    with pytest.raises(pc.PosEncError):
        pc.softmax(np.array([[0.0, 1.0], [-np.inf, -np.inf]]))


# ------------------------------------------------------------------------- refusing huge requests up front

_MB = 2**20

HUGE_REQUESTS = {
    "sinusoidal(2**20, 2**10)": lambda: pc.sinusoidal(2**20, 2**10),
    "sinusoidal(2**27+1, 2)": lambda: pc.sinusoidal(2**27 + 1, 2),
    "learned_table(2**20, 2**10)": lambda: pc.learned_table(2**20, 2**10),
    "binary_positions(2**26, 62)": lambda: pc.binary_positions(2**26, 62),
    "integer_positions(2**40)": lambda: pc.integer_positions(2**40),
    "alibi_bias(64, 2**12)": lambda: pc.alibi_bias(64, 2**12),
    "shaw_relative_index(2**15, 2**15)": lambda: pc.shaw_relative_index(2**15, 2**15, max_relative=8),
    "t5_bucket_matrix(2**15, 2**15)": lambda: pc.t5_bucket_matrix(2**15, 2**15),
    "relative_positions(2**15, 2**15)": lambda: pc.relative_positions(2**15, 2**15),
    "causal_mask(2**15, 2**15)": lambda: pc.causal_mask(2**15, 2**15),
    "rope_angles(arange(2**19), 2**9 freqs)": lambda: pc.rope_angles(np.arange(2.0**19), np.ones(2**9)),
    "rope_inv_freq(2**40)": lambda: pc.rope_inv_freq(2**40),
    "attention_scores((2**15,2),(2**15,2))": lambda: pc.attention_scores(np.ones((2**15, 2)), np.ones((2**15, 2))),
    "alibi_slopes(2**30)": lambda: pc.alibi_slopes(2**30),
    "sinusoidal_shift_matrix(0, 2**16)": lambda: pc.sinusoidal_shift_matrix(0, 2**16),
    "rope_rotation_matrix(0, 2**15 freqs)": lambda: pc.rope_rotation_matrix(0, np.ones(2**15)),
    "token_embeddings(2**20 tokens, 2**10)": lambda: pc.token_embeddings(["a"] * 2**20, 2**10),
}


@pytest.mark.parametrize("request_name", list(HUGE_REQUESTS))
def test_requests_above_max_elements_are_refused_before_allocating(request_name):
    call = HUGE_REQUESTS[request_name]
    gc.collect()
    process = psutil.Process()
    rss_before = process.memory_info().rss
    tracemalloc.start()
    try:
        with pytest.raises(pc.PosEncError):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rss_after = process.memory_info().rss
    assert rss_after - rss_before < 100 * _MB, f"RSS grew by {(rss_after - rss_before) / _MB:.0f} MB"
    assert peak < 100 * _MB, f"{request_name} allocated {peak / _MB:.0f} MB before refusing"


def test_max_elements_is_two_to_the_27():
    assert pc.MAX_ELEMENTS == 2**27


# ----------------------------------------------------------------------------- rope_frequencies_from_config


LLAMA_LIKE = {"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 8192}


def test_config_without_rope_theta_uses_base_10000():
    freqs = pc.rope_frequencies_from_config(dict(LLAMA_LIKE))
    # head_dim = 4096 / 32 = 128; θ_i = 10000^(−2i/128), i = 0 … 63 (RoFormer §3.2)
    np.testing.assert_allclose(freqs.inv_freq, [10000.0 ** (-2 * i / 128) for i in range(64)], rtol=1e-14)
    assert freqs.attention_factor == 1.0


@pytest.mark.parametrize(
    ("argument", "config"),
    [
        ("config", [("hidden_size", 4096)]),
        ("config", "config.json"),
        ("config", None),
        ("config", 42),
        ("rope_type", {**LLAMA_LIKE, "rope_scaling": {"rope_type": "warp", "factor": 2.0}}),
        ("rope_theta", {**LLAMA_LIKE, "rope_theta": "10000"}),
        ("rope_theta", {**LLAMA_LIKE, "rope_theta": math.nan}),
        ("hidden_size", {"hidden_size": "4096", "num_attention_heads": 32}),
        ("num_attention_heads", {"hidden_size": 4096, "num_attention_heads": 0}),
        ("max_position_embeddings", {**LLAMA_LIKE, "max_position_embeddings": "8k"}),
        ("factor", {**LLAMA_LIKE, "rope_scaling": {"rope_type": "linear", "factor": "2"}}),
        ("surprise", {**LLAMA_LIKE, "rope_scaling": {"rope_type": "linear", "factor": 2.0, "surprise": 1}}),
        ("rope_scaling", {**LLAMA_LIKE, "rope_scaling": "linear"}),
        ("rope_scaling", {**LLAMA_LIKE, "rope_scaling": [2.0]}),
        ("head_dim", {"max_position_embeddings": 8192}),
    ],
)
def test_broken_config_raises_posenc_error_naming_the_field(argument, config):
    _raises_naming(argument, pc.rope_frequencies_from_config, config)


def test_config_with_yarn_but_no_factor_and_no_max_position_embeddings_raises_posenc_error():
    # (With max_position_embeddings present, YaRN's factor is implied as max / original, as transformers does.)
    config = {
        "head_dim": 128,
        "rope_scaling": {"rope_type": "yarn", "original_max_position_embeddings": 4096},
    }
    _raises_naming("factor", pc.rope_frequencies_from_config, config)


@pytest.mark.parametrize("rope_type", ["yarn", "longrope"])
def test_a_factor_below_one_implied_by_max_position_embeddings_is_refused_like_an_explicit_one(rope_type):
    # An explicit factor < 1 is refused ("factor < 1" is a bad input); the same ratio implied by
    # max_position_embeddings / original_max_position_embeddings must not slip through and speed pairs *up*.
    scaling = {"rope_type": rope_type, "original_max_position_embeddings": 4096}
    if rope_type == "longrope":
        scaling |= {"short_factor": [1.0] * 32, "long_factor": [1.0] * 32}
    _raises_naming("factor", pc.rope_frequencies, 64, rope_scaling={**scaling, "factor": 0.5})
    try:
        freqs = pc.rope_frequencies(64, rope_scaling=scaling, max_position_embeddings=2048)
    except pc.PosEncError as exc:
        assert "factor" in str(exc) or "max_position_embeddings" in str(exc)
    else:
        assert np.all(freqs.inv_freq <= pc.rope_inv_freq(64) * (1 + 1e-12)), "implied factor 0.5 sped pairs up"


def test_config_whose_rope_scaling_and_rope_parameters_hold_arrays_raises_posenc_error():
    # Two array-valued entries compared with != give an array whose truth value is ambiguous (a plain ValueError).
    config = {
        "head_dim": 8,
        "rope_scaling": {
            "rope_type": "longrope",
            "factor": 2.0,
            "original_max_position_embeddings": 16,
            "short_factor": np.ones(4),
            "long_factor": np.ones(4),
        },
        "rope_parameters": {"rope_type": "longrope", "short_factor": np.ones(4) * 2},
    }
    with pytest.raises(pc.PosEncError):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            pc.rope_frequencies_from_config(config)
