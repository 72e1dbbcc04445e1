r"""Where a trained model's attention goes, by distance, and how much of it lands on the first token.

One forward of transformers' own model with ``output_attentions=True`` (:func:`posenc_real.load.forward`) gives, per
layer, the weights :math:`A_{h,i,j}` of every head h, query i and key j ≤ i (causal). Each layer's tensor is reduced
at once, so a 512-token text keeps 30 × 9 × 512 numbers, not the ~280 MB of weights:

- the **mass by distance** d = i − j (query minus key, so d ≥ 0 and the previous token is d = 1), averaged over the
  query rows i = 1 … L − 1 (row 0 has only itself to attend to):
  :math:`\mathrm{mass}_h(d) = \frac{1}{L-1}\sum_{i\ge d+1} A_{h,i,i-d}`, over the keys j = i − d ≥ 1: the first
  token's weight is kept apart (it sits at a different distance in every row, d = i, and is most of some heads'
  attention);
- the **share on the first token**, :math:`\frac{1}{L-1}\sum_{i\ge1} A_{h,i,0}` (the "attention sink" of Xiao et al.
  2023, arXiv:2309.17453, §3.1);
- the **weight per key** at each distance, the mean of :math:`A_{h,i,i-d}` over the rows i ≥ d + 1 that have a
  key other than the first token at that distance, beside what uniform causal attention gives the same keys: a causal
  row i spreads 1/(i + 1) over its i + 1 keys, and only the rows i > d reach distance d, so uniform attention puts
  *less mass* at long distances merely because fewer rows reach them. The ratio weight / uniform weight is 1 where a
  head is as flat as uniform attention; above 1 it prefers that distance, below 1 it avoids it. That ratio, not the
  raw mass, is the fair way to ask "does attention decay with distance?".

The heads are then sorted into classes, each by one stated threshold on these numbers (:func:`classify_heads`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .load import RealModel, forward

__all__ = [
    "FAR_DISTANCE",
    "HEAD_CLASSES",
    "LOCAL_DISTANCE",
    "MAJORITY",
    "AttentionByDistance",
    "attention_by_distance",
    "classify_heads",
    "distance_bins",
    "uniform_weight_per_key",
]

#: A previous-token head puts at least this share of its attention on the token just before the query (d = 1); a
#: local head this share within :data:`LOCAL_DISTANCE`; a sink head this share on the first token.
MAJORITY = 0.5
#: "Local": distances 0 … 8 (the query itself and the eight tokens before it).
LOCAL_DISTANCE = 8
#: "Far": distances beyond 32 tokens.
FAR_DISTANCE = 32
#: The classes of :func:`classify_heads`, in the order they are tested (a head gets the first that fits).
HEAD_CLASSES = ("previous_token", "local", "first_token", "far", "mixed")


@dataclass(frozen=True)
class AttentionByDistance:
    r"""Per layer l, head h: the attention mass at each distance d (first token apart), the share on the first token,
    and the mean weight per key at each distance. Averages run over the query rows i = 1 … L − 1."""

    mass: np.ndarray  # (layers, heads, L) float64: mass at distance d on keys j = i − d ≥ 1
    first_token: np.ndarray  # (layers, heads) float64: mean weight on key 0
    weight_per_key: np.ndarray  # (layers, heads, L − 1) float64: mean A[i, i − d] over rows i ≥ d + 1 (key 0 apart)
    length: int  # tokens

    @property
    def distances(self) -> np.ndarray:
        r"""0 … L − 1 (query minus key, in tokens)."""
        return np.arange(self.length)

    def mass_within(self, distance: int) -> np.ndarray:
        r"""(layers, heads): the mass at distances 0 … ``distance`` on keys other than the first token."""
        return self.mass[:, :, : distance + 1].sum(axis=2)

    def mass_beyond(self, distance: int) -> np.ndarray:
        r"""(layers, heads): the mass at distances > ``distance`` on keys other than the first token."""
        return self.mass[:, :, distance + 1 :].sum(axis=2)

    def binned_relative_to_uniform(self, edges: np.ndarray) -> np.ndarray:
        r"""(layers, heads, bins): the mass a head puts on keys at distances edges[b] ≤ d < edges[b + 1] (first token
        apart) ÷ the mass uniform causal attention puts on the same keys. 1: as flat as uniform; 2: twice as much."""
        reach = self.length - 1 - np.arange(self.length - 1)  # rows i ≥ d + 1 at each distance
        uniform_mass = uniform_weight_per_key(self.length) * reach / (self.length - 1)  # (L − 1,)
        head = np.add.reduceat(self.mass[:, :, : self.length - 1], edges[:-1], axis=2)
        return head / np.add.reduceat(uniform_mass, edges[:-1])[None, None, :]

    def relative_to_uniform(self) -> np.ndarray:
        r"""(layers, heads, L − 1): weight per key ÷ the uniform causal weight per key at the same distance,
        d = 0 … L − 2 (first token apart)."""
        return self.weight_per_key / uniform_weight_per_key(self.length)[None, None, :]


def uniform_weight_per_key(length: int) -> np.ndarray:
    r"""(L − 1,): the mean weight uniform causal attention gives a key j ≥ 1 at distance d = 0 … L − 2, over the rows
    i = d + 1 … L − 1 that have one: :math:`\frac{1}{L-1-d}\sum_{i=d+1}^{L-1}\frac{1}{i+1}`."""
    inverse = 1.0 / np.arange(2, length + 1)  # (L − 1,): 1/(i + 1) for i = 1 … L − 1
    tail = np.cumsum(inverse[::-1])[::-1]  # tail[d] = Σ_{i ≥ d + 1} 1/(i + 1)
    return tail / (length - 1 - np.arange(length - 1))


def distance_bins(length: int) -> np.ndarray:
    r"""Bin edges over distances 0 … L − 2: 0, 1, 2, 3 one by one, then doubling (4–7, 8–15, …), the last bin
    ending at L − 1 (exclusive)."""
    edges = [0, 1, 2, 3, 4]
    while edges[-1] * 2 < length - 1:
        edges.append(edges[-1] * 2)
    edges = [e for e in edges if e < length - 1] + [length - 1]
    return np.asarray(edges, dtype=np.int64)


def attention_by_distance(real: RealModel, ids: np.ndarray) -> AttentionByDistance:
    r"""Every layer's and head's attention by distance on ``ids``, from one forward of transformers' own model with
    ``output_attentions=True``; each layer's (heads, L, L) weights are reduced as soon as they are read."""
    import torch

    length = int(np.asarray(ids).size)
    if length < 2:
        raise ValueError("attention by distance needs at least two tokens")
    out = forward(real, ids, attentions=True)
    rows = torch.arange(length)[:, None]  # (L, 1) query i
    dist = torch.arange(length)[None, :]  # (1, L) distance d
    key = (rows - dist).clamp(min=0)  # (L, L): the key j = i − d, clamped where d > i
    reach = dist < rows  # (L, L): row i has a key j = i − d ≥ 1 (row 0 has none; the first token is left apart)
    per_row = reach.sum(dim=0)[: length - 1].double()  # (L − 1,): rows with such a key at each distance
    mass, sink, weight = [], [], []
    for layer in out.attentions:  # each (1, H, L, L)
        weights = layer[0].double()  # (H, L, L)
        by_distance = torch.gather(weights, 2, key.expand(weights.shape[0], -1, -1))  # (H, L, L): A[h, i, i − d]
        by_distance = by_distance * reach
        column = by_distance.sum(dim=1)  # (H, L): Σ_i A[h, i, i − d] over the keys j ≥ 1
        weight.append((column[:, : length - 1] / per_row).numpy())  # (H, L − 1)
        sink.append(weights[:, 1:, 0].mean(dim=1).numpy())  # (H,)
        mass.append((column / (length - 1)).numpy())  # (H, L)
    del out
    return AttentionByDistance(
        mass=np.stack(mass), first_token=np.stack(sink), weight_per_key=np.stack(weight), length=length
    )


def classify_heads(profile: AttentionByDistance) -> np.ndarray:
    r"""(layers, heads) indices into :data:`HEAD_CLASSES`, each head the first class whose rule it meets:

    1. ``previous_token``: mass at d = 1 ≥ :data:`MAJORITY`;
    2. ``local``: mass at d ≤ :data:`LOCAL_DISTANCE` (first token apart) ≥ :data:`MAJORITY`;
    3. ``first_token``: share on the first token ≥ :data:`MAJORITY`;
    4. ``far``: more mass beyond :data:`FAR_DISTANCE` (first token apart) than within :data:`LOCAL_DISTANCE`;
    5. ``mixed``: none of these.
    """
    rules = (
        profile.mass[:, :, 1] >= MAJORITY,
        profile.mass_within(LOCAL_DISTANCE) >= MAJORITY,
        profile.first_token >= MAJORITY,
        profile.mass_beyond(FAR_DISTANCE) > profile.mass_within(LOCAL_DISTANCE),
    )
    classes = np.full(profile.first_token.shape, len(rules), dtype=np.int64)
    for index in reversed(range(len(rules))):  # the first rule met wins
        classes = np.where(rules[index], index, classes)
    return classes
