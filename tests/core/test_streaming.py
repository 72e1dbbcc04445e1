r"""StreamingLLM's cache (Xiao et al. 2023, §3.2) against a loop over the stream and the paper's own example, and the
sink softmax against its definition and transformers' gpt-oss attention."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_core import PosEncError, sink_softmax, softmax, streaming_cache


def loop_cache(t: int, sinks: int, window: int) -> list[int]:
    r"""The tokens kept while token t is decoded: all of 0 … t while they fit, else the first ``sinks`` and the last
    ``window`` (t included), in text order."""
    if t + 1 <= sinks + window:
        return list(range(t + 1))
    return list(range(sinks)) + list(range(t - window + 1, t + 1))


def test_the_papers_example() -> None:
    # Fig. 4 of the paper: 4 sinks, 4 recent tokens, decoding token 9
    cache = streaming_cache(10, sink_tokens=4, window=4)
    assert cache.tokens[9].tolist() == [0, 1, 2, 3, 6, 7, 8, 9]
    assert cache.positions[9].tolist() == list(range(8))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(0, 6), st.integers(1, 12))
def test_cache_matches_a_loop_over_the_stream(length: int, sinks: int, window: int) -> None:
    cache = streaming_cache(length, sink_tokens=sinks, window=window)
    for t in range(length):
        kept = loop_cache(t, sinks, window)
        row = cache.tokens[t]
        assert row[row >= 0].tolist() == kept
        assert cache.positions[t][row >= 0].tolist() == list(range(len(kept)))
        # the query is the last token kept, and its distance to any key is below the cache size
        assert row[len(kept) - 1] == t
        assert len(kept) - 1 <= sinks + window - 1


def loop_sink_softmax(row: list[float], sink: float) -> list[float]:
    total = math.exp(sink) + sum(math.exp(x) for x in row)
    return [math.exp(x) / total for x in row]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-20, 20), min_size=1, max_size=12), st.floats(-20, 20))
def test_sink_softmax_is_its_definition(row: list[float], sink: float) -> None:
    got = sink_softmax(np.array(row), sink)
    want = loop_sink_softmax(row, sink)
    # values within e^±40 of each other: relative error a few ulps of the largest weight
    assert np.max(np.abs(got - want)) < 1e-12
    lse = math.log(sum(math.exp(x) for x in row))
    assert abs(got.sum() - (1 - 1 / (1 + math.exp(lse - sink)))) < 1e-12  # 1 − σ(s − LSE)
    assert got.sum() <= 1
    if sink > lse - 30:  # the sink's share e^(s − LSE) is above float64's resolution of 1 (≈ 1e-16)
        assert got.sum() < 1


def test_a_very_negative_sink_gives_plain_softmax() -> None:
    x = np.random.default_rng(0).standard_normal((3, 5))
    assert np.max(np.abs(sink_softmax(x, -800.0) - softmax(x))) == 0.0


def test_sink_softmax_equals_transformers_gpt_oss_attention() -> None:
    torch = pytest.importorskip("torch")
    from transformers.models.gpt_oss import modeling_gpt_oss

    rng = np.random.default_rng(3)
    heads, length, dim = 4, 6, 8
    q, k, v = (rng.standard_normal((1, heads, length, dim)) for _ in range(3))
    sinks = rng.standard_normal(heads) * 2

    class Module(torch.nn.Module):
        num_key_value_groups = 1
        training = False

    module = Module()
    module.sinks = torch.nn.Parameter(torch.tensor(sinks))
    mask = np.triu(np.full((length, length), -np.inf), 1)
    _, hf = modeling_gpt_oss.eager_attention_forward(
        module,
        torch.tensor(q),
        torch.tensor(k),
        torch.tensor(v),
        torch.tensor(mask)[None, None],
        scaling=dim**-0.5,
    )
    ours = sink_softmax(q @ np.swapaxes(k, -1, -2) * dim**-0.5 + mask, sinks)
    assert np.max(np.abs(hf.detach().numpy() - ours)) < 1e-12


@pytest.mark.parametrize(
    ("argument", "call"),
    [
        ("sinks", lambda: sink_softmax(np.zeros((2, 3, 3)), np.zeros(3))),
        ("sinks", lambda: sink_softmax(np.zeros((3, 3)), np.zeros((2, 2)))),
        ("logits", lambda: sink_softmax(np.array([np.nan]), 0.0)),
        ("window", lambda: streaming_cache(10, window=0)),
        ("stream_length", lambda: streaming_cache(0, window=4)),
    ],
)
def test_bad_arguments_are_refused_by_name(argument, call) -> None:
    with pytest.raises(PosEncError, match=argument):
        call()
