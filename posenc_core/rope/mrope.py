r"""M-RoPE: one RoPE head whose pairs read three position axes — time, height, width — for text, images and video.

Each token carries three position ids (t, h, w). A text token has t = h = w = its index in the sequence, so a text-only
sequence is plain RoPE. An image of H × W patches (after the vision encoder merges them) takes one t for all its
patches and its row and column as h and w, all offset by the position the image starts at; a video adds its frame
index to t. The next token starts one past the largest id used (transformers 5.23.0: the start plus max(H, W)).

``mrope_section`` = (s_t, s_h, s_w), with s_t + s_h + s_w = d/2, says how many pairs read each axis:

* contiguous (Qwen2-VL, Qwen2.5-VL, GLM-4V): pairs 0 … s_t − 1 read t, the next s_h read h, the last s_w read w;
* interleaved (Qwen3-VL): pair i reads h if i ≡ 1 (mod 3) and i < 3·s_h, w if i ≡ 2 (mod 3) and i < 3·s_w, t
  otherwise — every axis gets fast and slow pairs.

Paper: Wang et al. 2024, "Qwen2-VL: Enhancing Vision-Language Model's Perception of the World at Any Resolution",
arXiv:2409.12191, §2.1 (M-RoPE); the interleaved layout is Qwen3-VL's (transformers' ``Qwen3VLTextRotaryEmbedding``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import PosEncError, as_array, as_bool, as_float, as_int, check_elements

__all__ = [
    "MROPE_AXES",
    "mrope_angles",
    "mrope_axis_wavelengths",
    "mrope_offset_scores",
    "mrope_pair_axes",
    "mrope_position_ids",
]

MROPE_AXES = ("t", "h", "w")  # row order of mrope_position_ids
_MAX_TOKENS = 2**20
MAX_PAIRS = 4096


def mrope_pair_axes(mrope_section: object, *, interleaved: bool = False, pairs: int | None = None) -> np.ndarray:
    r"""Which position axis (0 = t, 1 = h, 2 = w) each of the d/2 pairs reads, as int64 (d/2,).

    ``pairs`` is d/2, by default s_t + s_h + s_w. Contiguous sections must cover the pairs exactly (transformers
    splits the frequencies by them); interleaved ones name the h and w pairs among the first 3·s_h, 3·s_w and leave
    every other pair on t, so they may cover fewer.
    Paper: Wang et al. 2024 (Qwen2-VL), arXiv:2409.12191, §2.1; interleaved: Qwen3-VL.
    """
    section = _section(mrope_section)
    interleaved = as_bool("interleaved", interleaved)
    pairs = sum(section) if pairs is None else as_int("pairs", pairs, lo=1, hi=MAX_PAIRS)
    if not interleaved:
        if sum(section) != pairs:
            raise PosEncError(
                f"mrope_section {list(section)} covers {sum(section)} pairs but the head turns {pairs}; "
                "a contiguous section must cover every pair (transformers cannot split the frequencies otherwise)"
            )
        return np.repeat(np.arange(3), section).astype(np.int64)  # [t]*s_t + [h]*s_h + [w]*s_w
    axes = np.zeros(pairs, dtype=np.int64)
    for axis in (1, 2):
        if 3 * section[axis] > pairs + 2 - axis:  # the last pair it names, 3·s − 3 + axis, must exist
            raise PosEncError(
                f"interleaved mrope_section {section} needs 3 · {section[axis]} ≤ {pairs} pairs for axis "
                f"{MROPE_AXES[axis]}"
            )
        axes[axis : 3 * section[axis] : 3] = axis  # pair i ≡ axis (mod 3), i < 3·s_axis
    return axes


def mrope_position_ids(
    segments: Sequence[tuple[str, object]], *, spatial_merge_size: int = 1, time_interval: float = 1.0
) -> np.ndarray:
    r"""The (3, L) position ids (t, h, w) of a sequence of ``segments``: ("text", n), ("image", (H, W)) or
    ("video", (T, H, W)), the grids in patches as the vision encoder sees them.

    Text: t = h = w = p, counting on from where the previous segment ended. An image or video starting at s: t = s +
    ⌊frame · time_interval⌋, h = s + row, w = s + column over its (T, H/m, W/m) grid (m = ``spatial_merge_size``,
    frames outermost, then rows); the next segment starts at s + max(H, W)/m. This is transformers'
    ``Qwen2VLModel.get_rope_index`` (5.23.0); the paper starts the next segment one past the largest id, which
    differs only for a video with more frames than rows and columns.
    Paper: Wang et al. 2024 (Qwen2-VL), arXiv:2409.12191, §2.1.
    """
    merge = as_int("spatial_merge_size", spatial_merge_size, lo=1, hi=64)
    interval = as_float("time_interval", time_interval, ge=0.0)
    if isinstance(segments, str | bytes) or not isinstance(segments, Sequence):
        raise PosEncError(f"segments must be a list of (kind, size) pairs, got {type(segments).__name__}")
    blocks, start, total = [], 0, 0
    for number, segment in enumerate(segments):
        kind, size = _segment(number, segment)
        if kind == "text":
            count = as_int(f"segments[{number}] text length", size, lo=0, hi=_MAX_TOKENS)
            total += count
            check_elements("mrope_position_ids", (3, total))
            blocks.append(np.broadcast_to(start + np.arange(count), (3, count)))
            start += count
            continue
        frames, rows, cols = _grid(number, kind, size, merge)
        total += frames * rows * cols
        check_elements("mrope_position_ids", (3, total))
        t, h, w = np.meshgrid(
            (np.arange(frames) * interval).astype(np.int64), np.arange(rows), np.arange(cols), indexing="ij"
        )
        blocks.append(np.stack([t.ravel(), h.ravel(), w.ravel()]) + start)
        start += max(rows, cols)
    if not blocks:
        return np.zeros((3, 0), dtype=np.int64)
    return np.concatenate(blocks, axis=1).astype(np.int64)


def mrope_angles(
    position_ids: object, inv_freq: object, mrope_section: object, *, interleaved: bool = False
) -> np.ndarray:
    r"""(L, d/2) angles :math:`\phi_{p,i} = \mathrm{pos}_{a(i)}(p)\,\theta_i`, pair i reading axis a(i)
    (:func:`mrope_pair_axes`) of the (3, L) ``position_ids``; ``apply_rope`` with these angles is M-RoPE.

    Paper: Wang et al. 2024 (Qwen2-VL), arXiv:2409.12191, §2.1.
    """
    positions = as_array("position_ids", position_ids, ndim=2, allow_empty=True)
    inv_freq = as_array("inv_freq", inv_freq, ndim=1)
    if positions.shape[0] != 3:
        raise PosEncError(f"position_ids must have 3 rows (t, h, w), got shape {positions.shape}")
    axes = mrope_pair_axes(mrope_section, interleaved=interleaved, pairs=inv_freq.shape[0])
    check_elements("mrope_angles", (positions.shape[1], inv_freq.shape[0]))
    # φ_{p,i} = pos_{a(i)}(p) · θ_i
    return positions[axes].T.astype(np.float64) * inv_freq


def mrope_offset_scores(
    offsets: object, inv_freq: object, mrope_section: object, *, interleaved: bool = False
) -> np.ndarray:
    r"""(N,) score of a query and key of all ones at the (Δt, Δh, Δw) ``offsets`` (3, N) apart under M-RoPE, divided by
    the head size: :math:`\frac{1}{d/2}\sum_i \cos(\Delta_{a(i)}\,\theta_i)`, pair i reading axis a(i).

    The all-ones score is RoFormer's long-range-decay curve (Su et al. 2021, arXiv:2104.09864, §3.4.3), here over three
    axes: 1 at (0, 0, 0), and each axis' pairs fall with that axis' offset alone. Each offset is key − query.
    Paper: Wang et al. 2024 (Qwen2-VL), arXiv:2409.12191, §2.1.
    """
    angles = mrope_angles(offsets, inv_freq, mrope_section, interleaved=interleaved)  # (N, d/2)
    # (1/(d/2)) Σ_i cos(Δ_{a(i)} θ_i)
    return np.cos(angles).mean(axis=1)


def mrope_grid_scores(
    dt: float, dh: object, dw: object, inv_freq: object, mrope_section: object, *, interleaved: bool = False
) -> np.ndarray:
    r"""(len(dh), len(dw)): :func:`mrope_offset_scores` at every offset (Δt, dh[r], dw[c]), a grid of patch offsets
    one frame gap Δt apart.

    Each pair reads one axis, so d/2 times the score is a sum of three parts, :math:`T(\Delta t) + H(\Delta h) +
    W(\Delta w)`, each the cosines of one axis' pairs. Hence

    .. math::
        S(\Delta t, \Delta h, \Delta w) = S(\Delta t, \Delta h, 0) + S(\Delta t, 0, \Delta w) - S(\Delta t, 0, 0),

    since :math:`T + H(\Delta h) + W(0)` plus :math:`T + H(0) + W(\Delta w)` minus :math:`T + H(0) + W(0)` leaves
    :math:`T + H(\Delta h) + W(\Delta w)`. Two lines and one point of :func:`mrope_offset_scores` make the grid:
    O((H + W)·d) cosines instead of O(H·W·d) (33 MB of angles for 257 × 257 offsets at d = 128). It agrees with the
    grid evaluated point by point to rounding (tested).
    Paper: Wang et al. 2024 (Qwen2-VL), arXiv:2409.12191, §2.1.
    """
    dt = as_float("dt", dt)
    dh = as_array("dh", dh, ndim=1).astype(np.float64)
    dw = as_array("dw", dw, ndim=1).astype(np.float64)
    check_elements("mrope_grid_scores", (dh.shape[0], dw.shape[0]))

    def line(t: np.ndarray, h: np.ndarray, w: np.ndarray) -> np.ndarray:
        return mrope_offset_scores(np.stack([t, h, w]), inv_freq, mrope_section, interleaved=interleaved)

    along_h = line(np.full(dh.shape, dt, dtype=np.float64), dh, np.zeros_like(dh))  # S(Δt, Δh, 0)
    along_w = line(np.full(dw.shape, dt, dtype=np.float64), np.zeros_like(dw), dw)  # S(Δt, 0, Δw)
    origin = line(np.array([dt], dtype=np.float64), np.zeros(1), np.zeros(1))  # S(Δt, 0, 0)
    # S(Δt, Δh, Δw) = S(Δt, Δh, 0) + S(Δt, 0, Δw) − S(Δt, 0, 0)
    return along_h[:, None] + (along_w - origin)[None, :]


def mrope_axis_wavelengths(inv_freq: object, mrope_section: object, *, interleaved: bool = False) -> np.ndarray:
    r"""(3, 3): for each axis t, h, w the shortest and longest wavelength :math:`2\pi/\theta_i` among the pairs that
    read it, and how many pairs do (0, 0, 0 for an axis with none; a pair with θ = 0 has no wavelength and is left out).

    Which wavelengths an axis gets is the layout's whole effect: contiguous sections give t the fastest pairs and w
    the slowest; interleaved ones give every axis pairs across the spectrum. VideoRoPE argues that time should take
    the slowest pairs (Wei et al. 2025, "VideoRoPE: What Makes for Good Video Rotary Position Embedding?",
    arXiv:2502.05173, §3).
    Paper: Wang et al. 2024 (Qwen2-VL), arXiv:2409.12191, §2.1; interleaved: Qwen3-VL.
    """
    inv_freq = as_array("inv_freq", inv_freq, ndim=1)
    if np.any(inv_freq < 0):
        raise PosEncError("inv_freq must be ≥ 0 (a frequency)")
    axes = mrope_pair_axes(mrope_section, interleaved=interleaved, pairs=inv_freq.shape[0])
    out = np.zeros((3, 3))
    for axis in range(3):
        theta = inv_freq[(axes == axis) & (inv_freq > 0)]
        if theta.size:
            with np.errstate(over="ignore"):  # a subnormal θ has an infinite wavelength, as it should
                # λ_i = 2π / θ_i
                out[axis] = (2 * np.pi / theta.max(), 2 * np.pi / theta.min(), theta.size)
    return out


def _section(value: object) -> tuple[int, int, int]:
    if isinstance(value, np.ndarray):
        value = value.tolist() if value.ndim == 1 else None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != 3:
        raise PosEncError(f"mrope_section must be three pair counts (t, h, w), got {value!r:.60}")
    return tuple(as_int(f"mrope_section[{i}]", item, lo=0, hi=4096) for i, item in enumerate(value))


def _segment(number: int, segment: object) -> tuple[str, object]:
    if (
        not isinstance(segment, tuple | list)
        or len(segment) != 2
        or not isinstance(segment[0], str)  # before `in`: an array's `in` asks for its truth value
        or segment[0] not in ("text", "image", "video")
    ):
        raise PosEncError(
            f"segments[{number}] must be ('text', n), ('image', (H, W)) or ('video', (T, H, W)), got {segment!r:.60}"
        )
    return segment[0], segment[1]


def _grid(number: int, kind: str, size: object, merge: int) -> tuple[int, int, int]:
    want = 2 if kind == "image" else 3
    if not isinstance(size, tuple | list) or len(size) != want:
        raise PosEncError(f"segments[{number}]: an {kind} needs {want} grid sizes, got {size!r:.60}")
    dims = [as_int(f"segments[{number}] {kind} size", item, lo=1, hi=_MAX_TOKENS) for item in size]
    frames, rows, cols = [1, *dims] if kind == "image" else dims
    if rows % merge or cols % merge:
        raise PosEncError(f"segments[{number}]: grid {rows} × {cols} is not divisible by spatial_merge_size {merge}")
    return frames, rows // merge, cols // merge
