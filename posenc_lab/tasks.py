r"""The extrapolation lab's tasks and settings, without torch: what the app needs to describe a run and its optimum.

The task registry, :data:`TASKS`: one frozen :class:`Task` per task, which says everything the lab does differently
for it. Nothing else in the lab or the app names a task (``tests/test_lab_tasks.py``). Three tasks, each asking a
different thing of a position encoding:

**lag** — a noisy lag-copy source whose best possible loss is known in closed form. Tokens come from a vocabulary
of V; each of the first ``lag`` tokens is uniform, and every later token copies a fixed permutation of the token
``lag`` places back, :math:`x_t = \pi(x_{t-\text{lag}})`, except with probability ε, when it is uniform again.
Predicting it needs nothing but "look exactly ``lag`` tokens back" — a purely *relative*, *local* skill. The optimum
per position is :math:`\ln V` for t < lag and, after that, the entropy of the noisy copy,

.. math::
    H = -p\ln p - (V - 1)\,\tfrac{\varepsilon}{V}\ln\tfrac{\varepsilon}{V}, \qquad p = 1 - \varepsilon + \varepsilon/V.

**retrieval** — a passkey: one *value* token (from V values that appear nowhere else) is planted at the start of
random filler, and the last token must repeat it after a *query* token, ``distance`` tokens later. The answer is
fully determined (optimum 0 nats) and finding it needs no position at all, only content; what a position encoding can
do is get in the way. A bias that grows with distance (ALiBi) pushes a far value out of reach; a table with no row
for a far position (learned) breaks the query; a rotation (RoPE) or no encoding at all can still look it up.

**text** — byte-level language modelling of human-written text that every Python installation carries, so nothing is
downloaded: the English reference prose of ``pydoc_data.topics`` and the standard library's top-level modules.
Every tenth document (sorted by name) is held out for evaluation (:func:`posenc_lab.corpus.text_corpus`). There is
no closed-form optimum; the curve to read is loss against position, as in Press et al. (2022), Figure 1.

The batches are made with torch (:mod:`posenc_lab.batches`, imported only when a run starts); training and
evaluation are :mod:`posenc_lab.train`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from posenc_core.errors import PosEncError
from posenc_core.families import LAB, LAB_DEFAULT, P_ROPE_FRACTION
from posenc_core.rope_scaling import ROPE_REGISTRY

from .corpus import text_corpus

__all__ = [
    "ENCODINGS",
    "EXTENSIONS",
    "LIVE_DEFAULT",
    "PRESETS",
    "SCORED_BY",
    "TASKS",
    "LabConfig",
    "Task",
    "batches_for",
    "for_task",
    "optimal_loss",
    "retrieval_distances",
    "scored_at",
]

#: The encodings the lab trains: the registry's families marked ``lab`` (:data:`posenc_core.families.LAB`).
ENCODINGS = LAB
#: The encodings a live run trains unless the reader chooses others (:data:`posenc_core.families.LAB_DEFAULT`): the
#: six the page trained before the 2025 designs, whose default run takes about half a minute on 2 cores.
LIVE_DEFAULT = LAB_DEFAULT
#: Zero-shot context extension applied to the RoPE model at inference, by rope_type (None: plain RoPE): the
#: registry's types marked ``in_lab``.
EXTENSIONS = (None, *(name for name, entry in ROPE_REGISTRY.items() if entry.in_lab))
#: How a task is scored: ``"position"`` — every next token is predicted and scored, per position of the predicted
#: token; ``"distance"`` — only the last token (the answer) is, per distance between the query and what it needs.
SCORED_BY = ("position", "distance")


#: How float32 matrix products may run on CUDA (:attr:`LabConfig.precision`).
PRECISIONS = ("float32", "tf32", "bf16")


@dataclass(frozen=True)
class LabConfig:
    """Everything that decides a run of one seed; two runs with equal configs give equal results on one device."""

    task: str = "lag"
    encodings: tuple[str, ...] = ENCODINGS
    vocab_size: int = 16  # lag: the alphabet; retrieval: the filler alphabet and, separately, the values
    lag: int = 2  # x_t copies x_{t−2}: the query must find the previous token — position matters
    noise: float = 0.1  # ε: the probability that a token ignores the copy rule
    train_length: int = 32
    eval_factor: int = 8  # evaluate out to eval_factor × train_length
    extension_factor: int = 4  # zero-shot RoPE extension to this multiple
    d_model: int = 64
    n_heads: int = 8  # ALiBi's steepest slope is 2^(−8/H): 8 heads give a head with slope 1/2
    n_layers: int = 2
    steps: int = 300
    batch_size: int = 32
    lr: float = 3e-3
    eval_sequences: int = 64
    seed: int = 0
    t5_buckets: int = 32
    t5_max_distance: int = 128
    p_rope: float = P_ROPE_FRACTION  # p-RoPE's fraction of turning pairs (the fastest; the rest at frequency 0)
    # float32 products on CUDA: in full ("float32"), as TensorFloat-32 ("tf32") or autocast to bfloat16 ("bf16"); a
    # preset uses a reduced one only where runs on the device show that it changes no verdict. No effect elsewhere.
    precision: str = "float32"

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise PosEncError(f"task must be one of {tuple(TASKS)}, got {self.task!r}")
        unknown = set(self.encodings) - set(ENCODINGS)
        if not self.encodings or unknown:
            raise PosEncError(f"encodings must be a non-empty subset of {ENCODINGS}, got {self.encodings}")
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise PosEncError(f"d_model / n_heads must be an even integer, got {self.d_model} / {self.n_heads}")
        if not 0.0 < self.noise < 1.0 or self.lag < 1 or self.lag >= self.train_length:
            raise PosEncError("need 0 < noise < 1 and 1 ≤ lag < train_length")
        if not 0.0 < self.p_rope <= 1.0:
            raise PosEncError(f"p_rope must be in (0, 1], got {self.p_rope}")
        if self.train_length < 4:
            raise PosEncError(f"train_length must be at least 4, got {self.train_length}")
        if self.precision not in PRECISIONS:
            raise PosEncError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")

    @property
    def eval_length(self) -> int:
        return self.eval_factor * self.train_length

    @property
    def vocab(self) -> int:
        r"""Token ids the model embeds (the task's :attr:`Task.vocab`)."""
        return TASKS[self.task].vocab(self)


def _every_position(config: LabConfig, length: int) -> np.ndarray:
    return np.arange(1, length)


@dataclass(frozen=True)
class Task:
    r"""One lab task: what the model reads and predicts, how it is scored, and the best loss it can reach.

    ``vocab(config)``: the token ids the model embeds. ``batches(config, device)``: the task's batch maker for one
    seed (torch, imported when called): ``batch(n, length, generator)`` gives training sequences, and the fixed
    evaluation set is ``evaluation(length)`` for a task scored by position, ``at_distance(d)`` for one scored by
    distance (:data:`SCORED_BY`). ``scored_at(config, length)``: what the evaluation's losses are indexed by, up to a
    sequence of ``length`` tokens (positions 1 … length − 1 unless given). ``optimum(config, scored)``: the best
    achievable loss (nats) at each of those, or ``None`` where no optimum is known — never assumed. ``settings``:
    the :class:`LabConfig` fields the task sets whatever the preset (:func:`for_task`); ``own``: the fields that only
    this task reads (the page offers them for it alone, and a committed run is kept per value). ``about(config)``:
    the numbers its description (``lab.about.<name>``) is formatted with; ``record()``: what a run stores beside the
    curves. Its words, in both languages: :attr:`words`.
    """

    name: str
    scored_by: str
    vocab: Callable[[LabConfig], int]
    batches: Callable[[LabConfig, Any], Any]
    optimum: Callable[[LabConfig, np.ndarray], np.ndarray] | None = None
    scored_at: Callable[[LabConfig, int], np.ndarray] = _every_position
    settings: Mapping[str, Any] = field(default_factory=dict)
    own: tuple[str, ...] = ()
    about: Callable[[], Mapping[str, str]] = dict
    record: Callable[[], Mapping[str, Any]] = dict

    def __post_init__(self) -> None:
        if self.scored_by not in SCORED_BY:
            raise PosEncError(f"scored_by must be one of {SCORED_BY}, got {self.scored_by!r}")
        if not self.name.isidentifier():
            raise PosEncError(f"a task's name must be an identifier (it is a words key), got {self.name!r}")
        unknown = (set(self.settings) | set(self.own)) - {f.name for f in dataclasses.fields(LabConfig)}
        if unknown:
            raise PosEncError(f"settings and own must name LabConfig fields, got {sorted(unknown)}")

    @property
    def words(self) -> tuple[str, ...]:
        r"""The lab page's keys for this task: its name, what it asks, why the encodings behave as they do on it, and
        the title of its figure (``posenc_ui/lessons/lab/words.{en,zh}.json``)."""
        return tuple(f"lab.{part}.{self.name}" for part in ("task", "about", "why", "fig_by_position"))


# --- lag: x_t = π(x_{t−lag}), except with probability ε -------------------------------------------------------------


def _lag_optimum(config: LabConfig, positions: np.ndarray) -> np.ndarray:
    r"""ln V before the lag, then the entropy of the noisy copy (the formula above), at each position."""
    v, eps = config.vocab_size, config.noise
    p_hit = 1.0 - eps + eps / v
    copied = -p_hit * math.log(p_hit) - (v - 1) * (eps / v) * math.log(eps / v)
    return np.where(np.asarray(positions) < config.lag, math.log(v), copied)


def _lag_batches(config: LabConfig, device: Any) -> Any:
    from .batches import LagBatches

    return LagBatches(config, device)


# --- retrieval: a value planted at the start, asked for `distance` tokens later --------------------------------------

#: Retrieval is scored much further out: a distance costs one short batch, and ALiBi's gentlest slope (2⁻⁸ for any
#: head count) only costs a far value 1 nat at 256 tokens, so its locality shows at tens of training lengths.
RETRIEVAL_EVAL_FACTOR = 32


def retrieval_distances(config: LabConfig, limit: int | None = None) -> np.ndarray:
    r"""The distances (query position minus value position) at which the retrieval task is scored, up to ``limit``.

    Every distance inside the training length (the longest there is L − 2: value at 0, query at L − 2), then 24
    spaced evenly on a log scale out to the evaluation length (the figure's axis; ~6 per doubling at 32·L). A
    sequence costs its distance, so this scores 32·L for a fifth of what evenly spaced distances would cost.
    """
    limit = config.eval_length - 2 if limit is None else limit
    inside = np.arange(1, config.train_length - 1)
    beyond = np.geomspace(config.train_length - 1, limit, 24).round().astype(np.int64)
    return np.unique(np.concatenate([inside, beyond]))


def _retrieval_scored_at(config: LabConfig, length: int) -> np.ndarray:
    return retrieval_distances(config, length - 2)  # value at 0, query at length − 2, answer last


def _determined(config: LabConfig, scored: np.ndarray) -> np.ndarray:
    r"""0 nats everywhere: the answer is determined by the context."""
    return np.zeros(np.asarray(scored).size)


def _retrieval_batches(config: LabConfig, device: Any) -> Any:
    from .batches import RetrievalBatches

    return RetrievalBatches(config, device)


# --- text: bytes of human-written text ------------------------------------------------------------------------------

BYTES = 256  # the text task's vocabulary


def _text_batches(config: LabConfig, device: Any) -> Any:
    from .batches import TextBatches

    return TextBatches(config, device)


def _text_about() -> dict[str, str]:
    corpus = text_corpus()
    return {
        "corpus": corpus.source,
        "train_mb": f"{corpus.train.size / 1e6:.1f}",
        "held_mb": f"{corpus.held_out.size / 1e6:.1f}",
    }


def _text_record() -> dict[str, Any]:
    return {"corpus": text_corpus().describe()}


#: The lab's tasks, in the order the page offers them.
TASKS: Mapping[str, Task] = MappingProxyType(
    {
        task.name: task
        for task in (
            Task(
                "lag",
                "position",
                vocab=lambda config: config.vocab_size,
                batches=_lag_batches,
                optimum=_lag_optimum,
                own=("lag",),
            ),
            Task(
                "retrieval",
                "distance",
                vocab=lambda config: 2 * config.vocab_size + 1,  # V fillers, one query token, V values
                batches=_retrieval_batches,
                optimum=_determined,
                scored_at=_retrieval_scored_at,
                settings={"eval_factor": RETRIEVAL_EVAL_FACTOR},
            ),
            Task(
                "text",
                "position",
                vocab=lambda config: BYTES,
                batches=_text_batches,
                about=_text_about,
                record=_text_record,
            ),
        )
    }
)


#: Named configurations, each for any task: "cpu" is the page's default (about half a minute per seed and task on
#: 2 cores), "tiny" the CI test, "gpu" the run a CPU cannot do in reasonable time.
PRESETS = {
    "cpu": LabConfig(),
    "tiny": LabConfig(d_model=32, n_heads=4, train_length=16, eval_factor=4, steps=200, eval_sequences=32),
    "gpu": LabConfig(
        d_model=256, n_heads=8, n_layers=4, steps=2000, batch_size=64, train_length=128, lr=1e-3, eval_sequences=256
    ),
}


def for_task(config: LabConfig, task: str) -> LabConfig:
    r"""``config`` (a preset: one model and budget for every task) set up for ``task`` (its :attr:`Task.settings`)."""
    if task not in TASKS:
        raise PosEncError(f"task must be one of {tuple(TASKS)}, got {task!r}")
    return dataclasses.replace(config, task=task, **TASKS[task].settings)


def scored_at(config: LabConfig, length: int) -> np.ndarray:
    r"""What the evaluation of a run up to ``length`` tokens is indexed by: positions, or distances."""
    return TASKS[config.task].scored_at(config, length)


def optimal_loss(config: LabConfig, scored: int | np.ndarray) -> np.ndarray | None:
    r"""The best achievable cross-entropy (nats) at each scored position or distance (an int n: at 0 … n − 1), or
    ``None`` where the task has no known optimum (text).

    lag: from the formula above. retrieval: 0 at every scored distance (the answer is determined by the context).
    """
    positions = np.arange(scored) if isinstance(scored, int | np.integer) else np.asarray(scored)
    optimum = TASKS[config.task].optimum
    return None if optimum is None else optimum(config, positions)


def batches_for(config: LabConfig, device: Any) -> Any:
    r"""The batch maker of ``config``'s task for ``config.seed`` on ``device`` (torch: imported by this call)."""
    return TASKS[config.task].batches(config, device)
