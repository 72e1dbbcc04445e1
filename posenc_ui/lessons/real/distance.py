r"""Section 2 of the real-model page, "Where attention goes, by distance": every layer's and head's attention mass by
query − key distance on the reader's text, against uniform causal attention; the heads sorted into classes by stated
thresholds; and the trained heads set beside page 6's long-range decay.

The numbers come from :mod:`posenc_real.attention` (one forward of transformers' own model with
``output_attentions=True``); this module keeps them in the app's memory per text and hands them to
:mod:`.figures_attention`.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import rope_decay_bound, rope_inv_freq
from posenc_real.attention import (
    FAR_DISTANCE,
    HEAD_CLASSES,
    LOCAL_DISTANCE,
    MAJORITY,
    AttentionByDistance,
    attention_by_distance,
    classify_heads,
    distance_bins,
    uniform_weight_per_key,
)

from ...i18n import t
from ...lesson import Check, PageRefusal, Values, reads, uses
from ...memo import MODEL, memo
from . import figures_attention as figs
from .model import facts, passage_ids, shared_model
from .shipped import model_result

#: The masses by distance and the first token's share are read from float32 weights: they add up to 1 to this.
SUM_TOLERANCE = 1e-4

PARAMS = ()


@model_result()
def profile(text: str) -> AttentionByDistance:
    r"""Every head's attention by distance on ``text`` (one forward with attentions; shared with section 3)."""
    return attention_by_distance(shared_model(), passage_ids(text))


@memo(budget=MODEL)
def _classes(text: str) -> np.ndarray:
    return classify_heads(profile(text))


@reads("text")
def warm(v: Values) -> None:
    r"""The one forward the section's figures and checks need, run once into the app's memory."""
    _classes(v["text"])


def _counts(text: str) -> dict[str, int]:
    classes = _classes(text)
    return {name: int((classes == k).sum()) for k, name in enumerate(HEAD_CLASSES)}


def _ratio_bands(p: AttentionByDistance) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Distances 1 … L − 2 and, over the 270 heads, the median and quartiles of weight per key ÷ uniform."""
    ratio = p.relative_to_uniform().reshape(-1, p.length - 1)[:, 1:]  # distance 0 (the query itself) left out
    low, median, high = np.percentile(ratio, [25, 50, 75], axis=0)
    return np.arange(1, p.length - 1), median, low, high


@uses("text")
def distance_figure(v: Values, lang: str) -> go.Figure:
    p = profile(v["text"])
    edges = distance_bins(p.length)
    near, far = _near_far(p)
    key = "real.fig_distance_short" if np.isnan(far) else "real.fig_distance"  # no keys beyond FAR_DISTANCE
    title = t(key, lang, tokens=p.length, near=f"{near:.2g}", far=f"{far:.2g}")
    return figs.distance_heatmap(p.binned_relative_to_uniform(edges), edges, title=title, lang=lang)


@uses("text")
def classes_figure(v: Values, lang: str) -> go.Figure:
    counts = _counts(v["text"])
    title = t("real.fig_classes", lang, **counts, heads=sum(counts.values()))
    return figs.classes_by_layer(_classes(v["text"]), HEAD_CLASSES, title=title, lang=lang)


@uses("text")
def decay_figure(v: Values, lang: str) -> go.Figure:
    known, p = facts(), profile(v["text"])
    distances, median, low, high = _ratio_bands(p)
    inv_freq = rope_inv_freq(known["head_dim"], base=known["rope_theta"])
    bound = rope_decay_bound(distances, inv_freq) / rope_decay_bound([0], inv_freq)[0]
    title = t("real.fig_decay", lang, dim=known["head_dim"], base=f"{known['rope_theta']:,.0f}")
    return figs.decay_beside_trained(distances, bound, distances, median, (low, high), title=title, lang=lang)


@uses("text")
def check_mass(v: Values) -> Check:
    r"""Nothing is lost in the reduction: for every head, its mass over all distances plus its share on the first
    token is 1 (each query row's weights sum to 1)."""
    p = profile(v["text"])
    residual = float(np.max(np.abs(p.mass.sum(axis=2) + p.first_token - 1.0)))
    heads = p.first_token.size
    return Check("real.check_mass", residual, tolerance=SUM_TOLERANCE, fmt={"heads": heads, "tokens": p.length})


def _near_far(p: AttentionByDistance) -> tuple[float, float]:
    r"""The median head's mass ÷ uniform's on keys 1 … :data:`LOCAL_DISTANCE` tokens back and on keys beyond
    :data:`FAR_DISTANCE` (NaN when the text is too short to have any)."""
    edges = np.asarray([0, 1, LOCAL_DISTANCE + 1, FAR_DISTANCE + 1, p.length - 1])
    if p.length - 1 <= FAR_DISTANCE + 1:
        edges = np.asarray([0, 1, min(LOCAL_DISTANCE + 1, p.length - 1)])
    ratio = p.binned_relative_to_uniform(edges).reshape(-1, edges.size - 1)
    near = float(np.median(ratio[:, 1]))
    far = float(np.median(ratio[:, 3])) if edges.size == 5 else float("nan")
    return near, far


@uses("text")
def text_length(v: Values) -> int:
    r"""The text's length in tokens."""
    return profile(v["text"]).length


@uses("text")
def reaches_far(v: Values) -> bool:
    r"""Whether the text has keys beyond :data:`FAR_DISTANCE` tokens from a query (what :func:`check_decay` needs)."""
    return not np.isnan(_near_far(profile(v["text"]))[1])


@uses("text")
def check_decay(v: Values) -> Check:
    r"""The median head against uniform causal attention in two bands of distance: 1 … :data:`LOCAL_DISTANCE` and
    beyond :data:`FAR_DISTANCE`. The claim: the far keys get less than uniform attention gives them (residual = the
    far ratio, below 1). A text too short to have keys that far is refused (the page then says so instead)."""
    p = profile(v["text"])
    near, far = _near_far(p)
    if np.isnan(far):
        raise PageRefusal("real.decay_short", tokens=p.length, reach=FAR_DISTANCE)
    fmt = {"near": f"{near:.2g}", "far": f"{far:.2g}", "local": LOCAL_DISTANCE, "reach": FAR_DISTANCE}
    return Check("real.check_decay", far, tolerance=1.0, fmt=fmt)


#: The thresholds the class rules use, as the section's words quote them.
RULES = {"majority": f"{MAJORITY:.0%}", "local": LOCAL_DISTANCE, "reach": FAR_DISTANCE}


@uses("text")
def class_counts(v: Values) -> dict[str, int]:
    r"""How many heads fall in each class on the text (the numbers the section's paragraph quotes)."""
    return _counts(v["text"])


FIGURES = {"distance": distance_figure, "classes": classes_figure, "decay": decay_figure}
CHECKS = {"mass": check_mass, "decay": check_decay}
SWEEPS: dict[str, str] = {}
STATIC = {name: "one forward of the real model with its attention weights, on the reader's text" for name in FIGURES}
SOURCES = (attention_by_distance, uniform_weight_per_key, classify_heads)
