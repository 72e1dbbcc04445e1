r"""One entry per encoding family (:data:`FAMILIES`): what it is, and what each part of the app needs of it.

A family's ``kind`` says where its position enters a head: ``"added"`` to the input (sinusoidal, learned), a
pairwise ``"bias"`` on the logits (Shaw, T5, ALiBi), a ``"rotation"`` of q and k (RoPE), ``"none"`` (NoPE), or
``"data_dependent"`` (position computed from the content: FoX's forget gates). Beside it:

* ``scores(length, *, dim, seed)``: the (L, L) position-only logits of one head that Compare draws and tests for
  Toeplitz structure (:func:`posenc_core.position_score_matrix`), with ``linear_route``, how linear attention applies
  it (:data:`posenc_core.LINEAR_ROUTES`). A family with ``scores`` is in Compare (:data:`COMPARED`).
* ``head(x, w_q, w_k, w_v, *, base, seed)``: q, k, v and the additive bias (or None) of page 1's head over x
  (:func:`posenc_core.self_attention`). A family with ``head`` is in page 1's demonstration (:data:`DEMO`).
* ``lab``: the extrapolation lab trains it (:data:`LAB`); its torch model hooks are
  ``posenc_lab.hooks.LAB_HOOKS[name]`` (torch stays out of this module). ``lab_opt_in``: the committed runs and the
  command line train it, a live run only when the reader's set of models names it (:data:`LAB_DEFAULT`, the live
  run's default, keeps the six models it trained before the 2025 designs came, and its half minute on 2 cores).

Three families have no ``scores``, and so no place in Compare: NoPE (nothing to draw), the hybrid stack (two layers,
two matrices: RoPE's and none; one head cannot stand for it) and FoX (its bias is computed from each token: with the
same content at every position, as Compare draws, its gates are all equal and its bias is ALiBi's, Toeplitz by
construction, which says nothing about the model on real text).

Adding a family: its entry here (with the functions it needs, in this module), its lab hooks when ``lab``, its words
(``enc.<name>`` in ``assets/i18n/shared.*.json``; Compare's ``compare.{params,cost,where,models}.<name>``), its colour
in ``posenc_ui/figures/style.py``, and, for the lab, regenerated runs. Every name list of the core and the app reads
this registry, and ``tests/test_families.py`` fails on a family missing anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .alibi import alibi_bias
from .attention import projection_weights, token_embeddings
from .errors import PosEncError, as_choice
from .learned import learned_table
from .relative import shaw_relative_index, t5_bucket_matrix
from .rope import apply_rope, rope_inv_freq, rope_scores
from .rope_scaling import rope_frequencies
from .sinusoidal import sinusoidal

__all__ = [
    "COMPARED",
    "DEMO",
    "FAMILIES",
    "KINDS",
    "LAB",
    "LAB_DEFAULT",
    "LINEAR_ROUTES",
    "P_ROPE_FRACTION",
    "RELATIVE_KINDS",
    "Family",
    "p_rope_inv_freq",
]

#: Where a family's position enters a head.
KINDS = ("added", "bias", "rotation", "none", "data_dependent")
#: The kinds whose position-only logits depend on j − i alone (Toeplitz; Compare checks it live).
RELATIVE_KINDS = ("bias", "rotation")
#: How linear attention applies a family without an N × N matrix: "per_token", features of one token (rank ≤ d);
#: "fft", a Toeplitz factor by FFT (Luo et al. 2021); "decay", ALiBi's e^(−m(i−j)) as decayed running totals.
ROUTES = ("per_token", "fft", "decay")

SHAW_MAX_RELATIVE = 16  # Shaw et al. found k ≥ 2 enough for translation; 16 shows the clipping on a small matrix
T5_BUCKETS, T5_MAX_DISTANCE = 32, 128  # T5's defaults
ALIBI_HEADS = 8  # head 0 of 8: slope 1/2, the steepest (Compare and page 1 show this head)
#: p-RoPE's p, the fraction of each head's pairs that turn (the fastest ones; transformers' ``partial_rotary_factor``
#: of the ``proportional`` rope type). Barbero et al. 2024 (§6) cut the lowest frequencies of Gemma 2B trained from
#: scratch and report validation perplexity kept or improved. 0.75 keeps three of the lab's four pairs per 8-wide head
#: and stops the slowest, θ = 10⁻³, which turns less than 0.04 rad across the lab's 32 training positions: what p-RoPE
#: removes is the pair that carries position least inside L (the CLI's ``--p-rope`` chooses another p).
P_ROPE_FRACTION = 0.75

Head = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]


@dataclass(frozen=True)
class Family:
    r"""One encoding family: its ``name`` (the key everywhere: words, colours, lab runs), its ``kind`` (one of
    :data:`KINDS`), Compare's ``scores`` and ``linear_route``, page 1's ``head``, and whether the lab trains it."""

    name: str
    kind: str
    scores: Callable[..., np.ndarray] | None = None
    linear_route: str | None = None
    head: Callable[..., Head] | None = None
    lab: bool = False
    lab_opt_in: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise PosEncError(f"a family's name must be an identifier (it keys words and runs), got {self.name!r:.60}")
        as_choice("kind", self.kind, KINDS)
        if self.linear_route is not None:
            as_choice("linear_route", self.linear_route, ROUTES)
        if (self.scores is None) != (self.linear_route is None):
            raise PosEncError(f"family {self.name!r}: a family in Compare needs both scores and a linear_route")
        for hook in ("scores", "head"):
            if getattr(self, hook) is not None and not callable(getattr(self, hook)):
                raise PosEncError(f"family {self.name!r}: {hook} must be a function")
        for flag in ("lab", "lab_opt_in"):
            if not isinstance(getattr(self, flag), bool):
                raise PosEncError(
                    f"family {self.name!r}: {flag} must be True or False, got {getattr(self, flag)!r:.60}"
                )
        if self.lab_opt_in and not self.lab:
            raise PosEncError(f"family {self.name!r}: lab_opt_in needs lab (a live run can only add a lab family)")


# --- Compare: the position-only logits when every position holds the same content ---------------------------------


def _content(dim: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""One content vector x (1, d) for every position, and the head's W_Q, W_K (d, d), fixed by ``seed``."""
    x = token_embeddings(["token"], dim, seed=seed)
    w_q, w_k, _ = projection_weights(dim, dim, seed=seed)
    return x, w_q, w_k


def _added_scores(table: np.ndarray, dim: int, seed: int) -> np.ndarray:
    r""":math:`(x + p_i)W_Q\,((x + p_j)W_K)^\top/\sqrt d` for the rows :math:`p_i` of ``table`` (L, d)."""
    x, w_q, w_k = _content(dim, seed)
    h = x + table  # (L, d): position added to the input
    return (h @ w_q) @ (h @ w_k).T / math.sqrt(dim)


def _query_key(dim: int, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    r"""The same query and key (1, d) at every position, and their content logit :math:`q\cdot k/\sqrt d`."""
    x, w_q, w_k = _content(dim, seed)
    q, k = x @ w_q, x @ w_k
    return q, k, float((q @ k.T)[0, 0]) / math.sqrt(dim)


def _learned_rng(seed: int) -> np.random.Generator:
    r"""The draws of a relative family's learned parameters (Shaw's offset vectors, T5's bucket scalars)."""
    return np.random.default_rng([seed, 0xC0DE])


def _sinusoidal_scores(length: int, *, dim: int, seed: int) -> np.ndarray:
    return _added_scores(sinusoidal(length, dim), dim, seed)


def _learned_scores(length: int, *, dim: int, seed: int) -> np.ndarray:
    return _added_scores(learned_table(length, dim, seed=seed), dim, seed)


def _shaw_scores(length: int, *, dim: int, seed: int) -> np.ndarray:
    r""":math:`q\cdot k/\sqrt d + q\cdot a_{\mathrm{clip}(j-i)}/\sqrt d` (Shaw et al. 2018, eq. 4, key side)."""
    q, _, content = _query_key(dim, seed)
    offsets = _learned_rng(seed).standard_normal((2 * SHAW_MAX_RELATIVE + 1, dim))  # a_{-k} … a_k
    index = shaw_relative_index(length, length, max_relative=SHAW_MAX_RELATIVE)
    return content + (q @ offsets.T)[0][index] / math.sqrt(dim)


def _t5_scores(length: int, *, dim: int, seed: int) -> np.ndarray:
    r""":math:`q\cdot k/\sqrt d + b_{\mathrm{bucket}(j-i)}`, one learned scalar per bucket (Raffel et al. 2020)."""
    _, _, content = _query_key(dim, seed)
    buckets = _learned_rng(seed).standard_normal(T5_BUCKETS)
    index = t5_bucket_matrix(length, num_buckets=T5_BUCKETS, max_distance=T5_MAX_DISTANCE)
    return content + buckets[index]


def _rope_scores(length: int, *, dim: int, seed: int) -> np.ndarray:
    r""":math:`(R_iq)^\top R_jk/\sqrt d` (Su et al. 2021, eq. 16)."""
    q, k, _ = _query_key(dim, seed)
    return rope_scores(np.repeat(q, length, axis=0), np.repeat(k, length, axis=0), rope_inv_freq(dim))


def p_rope_inv_freq(head_dim: int, *, p: float = P_ROPE_FRACTION, base: float = 10000.0) -> np.ndarray:
    r"""(d/2,) p-RoPE's frequencies: :math:`\theta_i = b^{-2i/d}` for the ⌊p·d/2⌋ fastest pairs, 0 for the rest.

    Paper: Barbero et al. 2024, "Round and Round We Go! What makes Rotary Positional Encodings useful?",
    arXiv:2410.06205, §6; the ``proportional`` rope type of :data:`posenc_core.ROPE_REGISTRY` (Gemma 4's), read here.
    """
    scaling = {"rope_type": "proportional"}
    return rope_frequencies(head_dim, base=base, rope_scaling=scaling, partial_rotary_factor=p).inv_freq


def _p_rope_scores(length: int, *, dim: int, seed: int) -> np.ndarray:
    r""":math:`(R_iq)^\top R_jk/\sqrt d` with p-RoPE's frequencies (Barbero et al. 2024, §6): the turning pairs
    (x_a, x_{a+d/2}), a < ⌊p·d/2⌋, rotated as RoPE's, plus the plain dot product of the pairs standing still."""
    q, k, _ = _query_key(dim, seed)
    inv_freq, half = p_rope_inv_freq(dim), dim // 2
    turning = int(np.count_nonzero(inv_freq))
    turn = np.r_[0:turning, half : half + turning]  # "half" pairing: pair a is (a, a + d/2)
    still = np.setdiff1d(np.arange(dim), turn)
    qs, ks = np.repeat(q, length, axis=0), np.repeat(k, length, axis=0)
    rotated = rope_scores(qs[:, turn], ks[:, turn], inv_freq[:turning], scale=1.0 / math.sqrt(dim))
    return rotated + float(q[0, still] @ k[0, still]) / math.sqrt(dim)


def _alibi_shown(length: int) -> np.ndarray:
    r"""ALiBi's bidirectional :math:`-m|i - j|` at slope 1/2 (head 0 of 8), (L, L)."""
    return alibi_bias(ALIBI_HEADS, length, causal=False, heads=[0])[0]


def _alibi_scores(length: int, *, dim: int, seed: int) -> np.ndarray:
    _, _, content = _query_key(dim, seed)
    return content + _alibi_shown(length)


# --- page 1: one head over x, position injected --------------------------------------------------------------------


def _project(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, bias: np.ndarray | None = None) -> Head:
    return x @ w_q, x @ w_k, x @ w_v, bias


def _none_head(x, w_q, w_k, w_v, *, base: float, seed: int) -> Head:
    return _project(x, w_q, w_k, w_v)


def _sinusoidal_head(x, w_q, w_k, w_v, *, base: float, seed: int) -> Head:
    return _project(x + sinusoidal(x.shape[0], x.shape[1], base=base), w_q, w_k, w_v)


def _learned_head(x, w_q, w_k, w_v, *, base: float, seed: int) -> Head:
    return _project(x + learned_table(x.shape[0], x.shape[1], seed=seed), w_q, w_k, w_v)


def _rope_head(x, w_q, w_k, w_v, *, base: float, seed: int) -> Head:
    q, k, v, _ = _project(x, w_q, w_k, w_v)
    if q.shape[1] % 2:
        raise PosEncError(f"rope needs an even query/key width, got {q.shape[1]}")
    positions, inv_freq = np.arange(x.shape[0], dtype=np.float64), rope_inv_freq(q.shape[1], base=base)
    return apply_rope(q, positions, inv_freq), apply_rope(k, positions, inv_freq), v, None


def _alibi_head(x, w_q, w_k, w_v, *, base: float, seed: int) -> Head:
    return _project(x, w_q, w_k, w_v, _alibi_shown(x.shape[0]))


# --- the registry: its order is the order every page lists the families in ------------------------------------------

FAMILIES: Mapping[str, Family] = MappingProxyType(
    {
        entry.name: entry
        for entry in (
            Family("none", "none", head=_none_head, lab=True),
            Family("sinusoidal", "added", _sinusoidal_scores, "per_token", _sinusoidal_head, lab=True),
            Family("learned", "added", _learned_scores, "per_token", _learned_head, lab=True),
            Family("shaw", "bias", _shaw_scores, "fft"),
            Family("t5", "bias", _t5_scores, "fft", lab=True),
            Family("rope", "rotation", _rope_scores, "per_token", _rope_head, lab=True),
            Family("alibi", "bias", _alibi_scores, "decay", _alibi_head, lab=True),
            Family("p_rope", "rotation", _p_rope_scores, "per_token", lab=True, lab_opt_in=True),
            Family("hybrid", "rotation", lab=True, lab_opt_in=True),
            Family("fox", "data_dependent", lab=True, lab_opt_in=True),
        )
    }
)

#: The families Compare (page 13) draws and tabulates: those with ``scores``, absolute first.
COMPARED = tuple(name for name, entry in FAMILIES.items() if entry.scores is not None)
#: How linear attention applies each family in Compare (see :data:`ROUTES`).
LINEAR_ROUTES: Mapping[str, str] = MappingProxyType({name: FAMILIES[name].linear_route for name in COMPARED})
#: Page 1's choices: the families with a ``head``.
DEMO = tuple(name for name, entry in FAMILIES.items() if entry.head is not None)
#: The families the extrapolation lab trains (and Compare's lab columns read from its committed runs).
LAB = tuple(name for name, entry in FAMILIES.items() if entry.lab)
#: The families a live lab run trains unless the reader picks others: the lab's, less those that opt in.
LAB_DEFAULT = tuple(name for name in LAB if not FAMILIES[name].lab_opt_in)
