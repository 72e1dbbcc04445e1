r"""Attention by distance, the first token's share and StreamingLLM on the real model, each number checked against
transformers' own raw attention weights or its own loss, recomputed here by plain loops over the tensor.

The model is loaded once per session (conftest); the text is a short passage, so each forward costs well under a
second on an idle machine. The streaming runs are the costliest (one forward per token past the cache).
"""

from __future__ import annotations

import numpy as np
import pytest

from posenc_core import streaming_cache
from posenc_real import RealModel, forward, tokenize
from posenc_real.attention import (
    FAR_DISTANCE,
    HEAD_CLASSES,
    LOCAL_DISTANCE,
    MAJORITY,
    attention_by_distance,
    classify_heads,
    uniform_weight_per_key,
)
from posenc_real.streaming import _stream, streaming_loss, streaming_losses, whole_text_loss

TEXT = (
    "The lighthouse keeper climbed the narrow stairs every evening at dusk. At the top, he cleaned the great lens, "
    "trimmed the wick, and lit the lamp that would turn all night above the rocks. Ships passing in the dark could "
    "not see him, but they could see his light, and by counting the seconds between its flashes they knew which "
    "lighthouse it was and how far they were from the shore. In winter the storms came from the west, and the waves "
    "broke so high that salt covered the windows of the lamp room."
)


@pytest.fixture(scope="module")
def ids(real: RealModel) -> np.ndarray:
    return tokenize(real, TEXT)


@pytest.fixture(scope="module")
def raw(real: RealModel, ids: np.ndarray) -> np.ndarray:
    r"""transformers' own attention weights, (layers, heads, L, L) float64."""
    out = forward(real, ids, attentions=True)
    return np.stack([a[0].double().numpy() for a in out.attentions])


#: The StreamingLLM cache the streaming tests read: the paper's four first tokens and a short window.
SINKS, WINDOW = 4, 16


@pytest.fixture(scope="module")
def streamed(real: RealModel, ids: np.ndarray) -> tuple[np.ndarray, object]:
    r"""(per-token NLL, the final cache) of one StreamingLLM run with the first tokens kept."""
    nll, cache = _stream(real, ids, ((SINKS, WINDOW),))
    return nll[0], cache


@pytest.fixture(scope="module")
def profile(real: RealModel, ids: np.ndarray):
    return attention_by_distance(real, ids)


def test_mass_by_distance_equals_transformers_own_weights_summed_by_loops(raw, profile) -> None:
    layers, heads, length, _ = raw.shape
    mass = np.zeros((layers, heads, length))
    per_key = np.zeros((layers, heads, length - 1))
    for i in range(1, length):  # query rows 1 … L − 1
        for j in range(1, i + 1):  # every key but the first token
            mass[:, :, i - j] += raw[:, :, i, j] / (length - 1)
            per_key[:, :, i - j] += raw[:, :, i, j] / (length - 1 - (i - j))
    assert profile.length == length
    np.testing.assert_allclose(profile.mass, mass, atol=1e-12)
    np.testing.assert_allclose(profile.weight_per_key, per_key, atol=1e-12)
    np.testing.assert_allclose(profile.first_token, raw[:, :, 1:, 0].mean(axis=2), atol=1e-12)
    # every row sums to 1, so the mass on the other keys and the first token's share make 1
    np.testing.assert_allclose(profile.mass.sum(axis=2) + profile.first_token, 1.0, atol=1e-5)


def test_uniform_weight_per_key_is_a_flat_causal_head_read_the_same_way() -> None:
    length = 37
    flat = np.tril(np.ones((length, length))) / np.arange(1, length + 1)[:, None]  # row i: 1/(i + 1) on keys 0 … i
    expected = [np.mean([flat[i, i - d] for i in range(d + 1, length)]) for d in range(length - 1)]
    np.testing.assert_allclose(uniform_weight_per_key(length), expected, rtol=1e-12)


def test_each_head_class_is_what_the_raw_weights_show(raw, profile) -> None:
    classes = classify_heads(profile)
    length = raw.shape[2]
    rows = np.arange(1, length)
    previous = raw[:, :, rows, rows - 1].mean(axis=2)  # weight on the token just before the query
    near = np.zeros(raw.shape[:2])
    far = np.zeros(raw.shape[:2])
    for i in rows:
        for j in range(1, i + 1):
            near += raw[:, :, i, j] * (i - j <= LOCAL_DISTANCE) / (length - 1)
            far += raw[:, :, i, j] * (i - j > FAR_DISTANCE) / (length - 1)
    first = raw[:, :, 1:, 0].mean(axis=2)
    for (layer, head), found in np.ndenumerate(classes):
        name = HEAD_CLASSES[found]
        where = f"layer {layer} head {head}: {name}"
        if name == "previous_token":
            assert previous[layer, head] >= MAJORITY, where
            largest = np.argmax(raw[layer, head, 1:, :], axis=1)  # each row's most attended key
            assert np.mean(largest == rows - 1) > 0.5, where  # in most rows it is the token just before
        else:
            assert previous[layer, head] < MAJORITY, where
        if name == "local":
            assert near[layer, head] >= MAJORITY, where
        if name == "first_token":
            assert first[layer, head] >= MAJORITY > near[layer, head], where
        if name == "far":
            assert far[layer, head] > near[layer, head], where
            assert max(first[layer, head], near[layer, head]) < MAJORITY, where
    assert np.isin(classes, range(len(HEAD_CLASSES))).all()
    assert (classes == HEAD_CLASSES.index("previous_token")).any()  # this model has previous-token heads


def test_a_window_that_holds_the_whole_text_is_the_plain_forward(real: RealModel, ids: np.ndarray) -> None:
    import torch

    logits = forward(real, ids).logits[0, :-1].double()  # (L − 1, V)
    targets = torch.as_tensor(ids[1:])
    plain = -torch.log_softmax(logits, dim=-1).gather(1, targets[:, None])[:, 0].numpy()
    whole = streaming_loss(real, ids, sink_tokens=4, window=ids.size)
    np.testing.assert_allclose(whole.nll, plain, atol=2e-4)
    assert whole.length == ids.size
    np.testing.assert_allclose(whole_text_loss(real, ids).nll, plain, atol=2e-4)  # the page's one-forward shortcut


def test_rows_decoded_side_by_side_are_each_the_run_alone(real: RealModel, ids: np.ndarray) -> None:
    r"""A batch of caches of different sizes (padded on the left, each row at its own positions) gives each row the
    loss it has decoded alone, up to float32 rounding of a batched product."""
    caches = ((4, 16), (0, 16), (2, 8), (0, ids.size))
    together = streaming_losses(real, ids, caches)
    for run, (sinks, window) in zip(together, caches, strict=True):
        alone = streaming_loss(real, ids, sink_tokens=sinks, window=window)
        assert (run.sink_tokens, run.window) == (sinks, window)
        np.testing.assert_allclose(run.nll, alone.nll, atol=1e-3)
        assert abs(run.loss - alone.loss) < 1e-4


def test_the_cache_holds_the_streaming_layout_at_cache_positions(real: RealModel, ids: np.ndarray, streamed) -> None:
    r"""After the stream, layer 0's cached keys are those of the tokens StreamingLLM keeps (posenc_core's layout of
    page 10), rotated to their cache slots: layer 0's keys depend on the token and its position only, so a fresh
    forward of just those tokens at positions 0 … C − 1 must give the same keys."""
    import torch
    from transformers import DynamicCache

    _, cache = streamed
    kept = streaming_cache(ids.size, sink_tokens=SINKS, window=WINDOW).tokens[ids.size - 2]  # the last step's cache
    assert kept.size == SINKS + WINDOW and (kept[:SINKS] == np.arange(SINKS)).all()
    fresh = DynamicCache(config=real.model.config)
    with torch.no_grad():
        real.model(torch.as_tensor(ids[kept])[None], past_key_values=fresh, use_cache=True)
    np.testing.assert_allclose(cache.layers[0].keys.numpy(), fresh.layers[0].keys.numpy(), atol=1e-4)
    np.testing.assert_allclose(cache.layers[0].values.numpy(), fresh.layers[0].values.numpy(), atol=1e-5)


def test_dropping_the_first_tokens_raises_the_streaming_loss(real: RealModel, ids: np.ndarray, streamed) -> None:
    with_sinks = streamed[0].mean()
    without = streaming_loss(real, ids, sink_tokens=0, window=WINDOW)
    # identical while the window alone still holds every token; after that, the loss without the first tokens is higher
    np.testing.assert_allclose(without.nll[: WINDOW - 1], streamed[0][: WINDOW - 1], atol=2e-4)
    assert without.loss > with_sinks + 0.1
