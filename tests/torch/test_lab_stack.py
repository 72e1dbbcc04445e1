"""The lab's stacked trainer against its models trained one by one: the same logits, the same gradients, the same
training run (tiny preset, CPU).

Tolerances. Stacking changes only the order in which float32 sums are taken (a batched product instead of one per
model; the members' attention biases side by side). One such sum of n terms of size ~|s| carries at most ~n·ε·|s|
with ε = 2⁻²⁴ ≈ 6e-8: for the widest sum here (4·d = 128 hidden units, each ≲ 4) that is ~3e-5, and a whole forward
adds a few of them. The checks allow 1e-4 on logits of size ~1–5, and relative 1e-3 on gradients (their sums run over
the batch's 8·15 positions as well). Training amplifies rounding step by step, and Adam most where a gradient is near
zero (its update is ±lr whatever the gradient's size), so no useful bound follows from ε there: after 60 steps the
members differed from the models trained alone by at most 2.3e-4 (measured over all six encodings), while training
moved their weights by 0.058–0.063. The test allows 1e-3 and asserts a move of at least 0.04: a member trained on
another's gradient, or not at all, fails it.
"""

from __future__ import annotations

import dataclasses

import pytest

torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402

from posenc_lab.stack import Stack  # noqa: E402
from posenc_lab.tasks import ENCODINGS, PRESETS, TASKS, batches_for, for_task  # noqa: E402
from posenc_lab.train import TinyLM, _learning_rate, _train  # noqa: E402

CPU = torch.device("cpu")
#: Every device here: the CPU always; CUDA and MPS where present (a GPU machine runs the same checks on its card).
DEVICES = ["cpu"] + ["cuda"] * torch.cuda.is_available() + ["mps"] * torch.backends.mps.is_available()


def _models(config, seeds=None) -> list[TinyLM]:
    r"""One model per encoding; distinct seeds unless given, so that no member can stand in for another."""
    models = []
    for index, encoding in enumerate(config.encodings):
        torch.manual_seed(index if seeds is None else seeds)
        models.append(TinyLM(config, encoding))
    return models


def _own_loss(model: TinyLM, tokens: torch.Tensor, task: str) -> torch.Tensor:
    r"""A model's loss written out for itself: next-token cross-entropy, or the answer's alone (a task scored by
    distance)."""
    logits = model(tokens[:, :-1])
    if TASKS[task].scored_by == "distance":
        return F.cross_entropy(logits[:, -1], tokens[:, -1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("task", TASKS)
def test_the_stack_gives_each_members_own_logits(task, device):
    config = for_task(PRESETS["tiny"], task)
    models = [model.to(device) for model in _models(config)]
    tokens = batches_for(config, torch.device(device)).batch(8, 2 * config.train_length)  # past the training length too
    stack = Stack(models[::-1])  # any order in: T5's member goes last
    assert [m.encoding for m in stack.members] == [*(e for e in ENCODINGS[::-1] if e != "t5"), "t5"]
    with torch.no_grad():
        for member, model in zip(stack(tokens), stack.members, strict=True):
            assert torch.allclose(member, model(tokens), rtol=0, atol=1e-4), model.encoding


@pytest.mark.parametrize("task", TASKS)
def test_each_members_gradient_is_its_own_losss_gradient(task):
    config = for_task(PRESETS["tiny"], task)
    models = _models(config)
    stack = Stack(models)
    tokens = batches_for(config, CPU).batch(8, config.train_length)
    stack.losses(tokens, TASKS[task].scored_by).sum().backward()
    for e, model in enumerate(stack.members):
        _own_loss(model, tokens, task).backward()
        own = dict(model.named_parameters())
        for name, stacked in zip(stack.names, stack.weights, strict=True):
            want = own[name].grad
            assert torch.allclose(stacked.grad[e], want, rtol=1e-3, atol=1e-3 * want.abs().max()), (
                model.encoding,
                name,
            )
    # the learned table and T5's bias are the members' own tensors: their gradients collect both backward passes
    assert any(p is dict(m.named_parameters()).get("positions.weight") for m in models for p in stack.own)


def test_training_the_stack_equals_training_each_model_alone():
    """Sixty steps of ``_train`` (the stack) against each model trained by its own Adam on the same batches."""
    config = dataclasses.replace(PRESETS["tiny"], steps=60)
    source = batches_for(config, CPU)
    trained, stats = _train(config, source, None, done=0, total=config.steps)
    for model in _models(config, seeds=config.seed):
        start = {name: weight.detach().clone() for name, weight in model.named_parameters()}
        optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
        generator = torch.Generator().manual_seed(config.seed)  # the batches _train draws, in its order
        for step in range(config.steps):
            for group in optimizer.param_groups:
                group["lr"] = _learning_rate(config, step)
            optimizer.zero_grad()
            _own_loss(model, source.batch(config.batch_size, config.train_length, generator), config.task).backward()
            optimizer.step()
        theirs = dict(trained[model.encoding].named_parameters())
        for name, weight in model.named_parameters():
            assert torch.allclose(theirs[name], weight, rtol=0, atol=1e-3), (model.encoding, name)
        moved = max((weight - start[name]).abs().max().item() for name, weight in model.named_parameters())
        assert moved > 0.04, (model.encoding, moved)  # training moved it far beyond the tolerance
        assert stats[model.encoding]["train_seconds"] > 0


def test_rows_past_the_training_length_are_never_trained_by_the_stack():
    config = dataclasses.replace(PRESETS["tiny"], encodings=("learned", "rope"), steps=10)
    (before,) = _models(dataclasses.replace(config, encodings=("learned",)), seeds=config.seed)
    trained, _ = _train(config, batches_for(config, CPU), None, done=0, total=config.steps)
    table, untouched = trained["learned"].positions.weight, before.positions.weight
    last = config.train_length - 1  # a sequence of L tokens feeds positions 0 … L − 2 to the model
    assert torch.equal(table[last:], untouched[last:])
    assert not torch.allclose(table[:last], untouched[:last])


def test_the_stack_refuses_nothing_a_single_encoding_run_needs():
    """Any subset of the encodings, one alone included, stacks and trains."""
    for encodings in (("t5",), ("rope", "alibi"), ENCODINGS):
        config = dataclasses.replace(PRESETS["tiny"], encodings=encodings, steps=2)
        trained, stats = _train(config, batches_for(config, CPU), None, done=0, total=2)
        assert list(trained) == list(encodings) and set(stats) == set(encodings)
