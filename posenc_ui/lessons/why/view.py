r"""Page 1 — why attention needs position.

Self-attention without any position signal is permutation-equivariant: feed the tokens of "竞争对手收购了公司"
instead of "公司收购了竞争对手" and every output row is the same as before, only moved. Every encoding of
:data:`posenc_core.ENCODINGS` other than "none" breaks this; the residual measures by how much.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    ENCODINGS,
    FAMILIES,
    permutation_equivariance_residual,
    projection_weights,
    scaling_spread,
    self_attention,
    token_embeddings,
)

from ...lesson import Check, Explain, PageEntry, Values, View, uses
from ...memo import memo
from ...state import ChoiceParam, IntParam
from . import figures as figs

#: Three Chinese sentence pairs and an English one (the English reader's default): tokens of A, and B as a
#: permutation of A. 今天 天气 真 好 / 天气 真 今天 好 is the example of mmmwhy's
#: 「Transformer 中的 position embedding 的设计」.
SENTENCES: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "acquire": (("公司", "收购", "了", "竞争对手"), (3, 1, 2, 0)),
    "tiantian": (("天", "天", "向", "上"), (0, 2, 1, 3)),
    "weather": (("今天", "天气", "真", "好"), (1, 2, 0, 3)),
    "dog": (("the", "dog", "bit", "the", "man"), (0, 4, 2, 3, 1)),
}

PARAMS = (
    ChoiceParam("pair", "acquire", options=tuple(SENTENCES), widget="radio", lang_defaults=(("en", "dog"),)),
    ChoiceParam("encoding", "none", options=ENCODINGS, labels="enc"),
    IntParam("dim", 16, lo=4, hi=64, step=4),
    IntParam("seed", 0, lo=0, hi=20),
)


@memo
def _layer(pair: str, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    r"""Embeddings of sentence A, the permutation to B, and the head's (w_q, w_k, w_v)."""
    tokens, perm = SENTENCES[pair]
    x = token_embeddings(list(tokens), dim, seed=seed)  # (L, dim), equal rows for equal tokens
    return x, np.asarray(perm), projection_weights(dim, dim, seed=seed)


@memo
def _residual(pair: str, dim: int, seed: int, encoding: str) -> float:
    x, perm, (w_q, w_k, w_v) = _layer(pair, dim, seed)
    return permutation_equivariance_residual(x, perm, w_q=w_q, w_k=w_k, w_v=w_v, encoding=encoding, seed=seed)


def tokens_of(pair: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    r"""The tokens of sentence A and of its reordering B."""
    tokens, perm = SENTENCES[pair]
    return tokens, tuple(tokens[i] for i in perm)


@memo
def _weights(pair: str, dim: int, seed: int, encoding: str) -> tuple[np.ndarray, np.ndarray]:
    r"""Attention weights (L, L) of sentence A and of its reordering B, each in its own token order."""
    x, perm, (w_q, w_k, w_v) = _layer(pair, dim, seed)
    kw = {"w_q": w_q, "w_k": w_k, "w_v": w_v, "encoding": encoding, "seed": seed}
    return self_attention(x, **kw)[1], self_attention(x[perm], **kw)[1]


@uses("pair", "dim", "seed", "encoding")
def attention_a_figure(v: Values, lang: str) -> go.Figure:
    weights, _ = _weights(v["pair"], v["dim"], v["seed"], v["encoding"])
    return figs.attention_map(weights, tokens_of(v["pair"])[0], encoding=v["encoding"], showscale=True, lang=lang)


@uses("pair", "dim", "seed", "encoding")
def attention_b_figure(v: Values, lang: str) -> go.Figure:
    _, weights = _weights(v["pair"], v["dim"], v["seed"], v["encoding"])
    return figs.attention_map(weights, tokens_of(v["pair"])[1], encoding=v["encoding"], showscale=True, lang=lang)


@uses("pair", "dim", "seed", "encoding")
def residuals_figure(v: Values, lang: str) -> go.Figure:
    residuals = {enc: _residual(v["pair"], v["dim"], v["seed"], enc) for enc in ENCODINGS}
    return figs.residual_bars(residuals, selected=v["encoding"], lang=lang)


@uses("pair", "dim", "seed")
def check_none(v: Values) -> Check:
    return Check("why.check_none", _residual(v["pair"], v["dim"], v["seed"], "none"))


@uses("pair", "dim", "seed", "encoding")
def check_selected(v: Values) -> Check:
    if FAMILIES[v["encoding"]].kind == "none":
        return check_none(v)
    residual = _residual(v["pair"], v["dim"], v["seed"], v["encoding"])
    return Check("why.check_encoding", residual, expect_zero=False, fmt_keys={"encoding": f"enc.{v['encoding']}"})


# --- why the scores are divided by √d_k ------------------------------------------------------------------------------

#: Head sizes from 4 to 1024, and the draws behind each point (16 keys a query, 256 queries, one seed).
SCALING_DIMS, SCALING_KEYS, SCALING_DRAWS = (4, 8, 16, 32, 64, 128, 256, 512, 1024), 16, 256


@memo
def _scaling():
    return scaling_spread(SCALING_DIMS, keys=SCALING_KEYS, draws=SCALING_DRAWS, seed=0)


@uses()
def scaling_figure(v: Values, lang: str) -> go.Figure:
    out = _scaling()
    return figs.scaling(out.dims, out.top_weight, out.top_weight_scaled, keys=SCALING_KEYS, lang=lang)


@uses()
def check_scaling(v: Values) -> Check:
    r"""Divided by √d, q·k has spread 1 at every head size (within 10 %); undivided its spread at d = 1024 is ≈ 32."""
    out = _scaling()
    residual = float(np.max(np.abs(out.spread_scaled - 1.0)))
    fmt = {"raw": f"{out.spread[-1]:.1f}", "d": f"{out.dims[-1]:.0f}", "top": f"{out.top_weight[-1]:.2f}"}
    fmt |= {"top_scaled": f"{out.top_weight_scaled[-1]:.2f}"}
    return Check("why.check_scaling", residual, tolerance=0.1, fmt=fmt)


VIEW = View(
    page_id="why",
    params=PARAMS,
    figures={
        "attention_a": attention_a_figure,
        "attention_b": attention_b_figure,
        "residuals": residuals_figure,
        "scaling": scaling_figure,
    },
    # The lesson is the switch from no encoding to one: dragged, the attention of the two sentences stops permuting.
    sweeps={"attention_a": "encoding", "attention_b": "encoding", "residuals": "encoding"},
    static={"scaling": "reads no parameter"},
    checks={"none": check_none, "selected": check_selected, "scaling": check_scaling},
    explain=Explain(
        latex=(
            r"f(X) = \operatorname{softmax}\!\big(QK^\top/\sqrt{d}\big)\,V",
            r"Q, K, V = XW_Q,\ XW_K,\ XW_V",
            r"f(PX) = P\,f(X)\quad \forall P",
        ),
        sources=(self_attention, permutation_equivariance_residual, scaling_spread),
        paper="Vaswani et al. 2017, *Attention Is All You Need*, arXiv:1706.03762, §3.2, §3.5",
    ),
)

PAGE = PageEntry("pages/1_Why_position.py", VIEW, preview="residuals")
