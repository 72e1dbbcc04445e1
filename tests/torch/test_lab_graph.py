"""The lab's training step replayed as a CUDA graph against the same step launched op by op (``posenc_lab.train``).

The CUDA tests run only where a CUDA device is present (the device machine); a CPU machine checks the refusals and
that the precision switch leaves nothing behind.

Tolerance. A replay runs the kernels that the eager step would launch, on the same batches, so the two runs differ
only where a kernel's sums can come out in another order (cuBLAS picks its algorithm per call) and in Adam's bias
correction, which the capturable Adam computes on the device and the eager one on the host. That is the same kind of
difference ``tests/torch/test_lab_stack.py`` bounds between the stack and its models trained one by one: rounding
that Adam amplifies step by step (its update is ±lr wherever a gradient is near zero), 2.3e-4 at most there after 60
steps, against a move of 0.058–0.063. The same 1e-3, and the same floor on the move, hold here.
"""

from __future__ import annotations

import dataclasses

import pytest

torch = pytest.importorskip("torch")

from posenc_core.errors import PosEncError  # noqa: E402
from posenc_lab.tasks import ENCODINGS, PRESETS, TASKS, LabConfig, batches_for, for_task  # noqa: E402
from posenc_lab.train import _train, products, run_lab  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
CUDA = torch.device("cuda") if torch.cuda.is_available() else None


def _weights(models: dict) -> dict:
    return {(e, n): p.detach().clone() for e, m in models.items() for n, p in m.named_parameters()}


@cuda
@pytest.mark.parametrize("task", TASKS)
def test_a_replayed_run_is_the_eager_run(task):
    r"""Every encoding, 60 steps: the weights and the training losses of the two runs agree to 1e-3, and training moved
    the weights far beyond that (a replay of a stale batch or learning rate, or of no step at all, fails)."""
    config = dataclasses.replace(for_task(PRESETS["tiny"], task), encodings=ENCODINGS, steps=60)
    eager, eager_stats = _train(config, batches_for(config, CUDA), None, done=0, total=60, graphed=False)
    replayed, replayed_stats = _train(config, batches_for(config, CUDA), None, done=0, total=60, graphed=True)
    torch.manual_seed(config.seed)
    start = {name: p.detach() for name, p in type(eager["rope"])(config, "rope").named_parameters()}
    a, b = _weights(eager), _weights(replayed)
    for key, weight in a.items():
        assert torch.allclose(weight, b[key], rtol=0, atol=1e-3), key
    for encoding in config.encodings:
        first, last = eager_stats[encoding]["train_loss"], replayed_stats[encoding]["train_loss"]
        assert max(abs(x - y) for x, y in zip(first, last, strict=True)) < 1e-3, encoding
        assert first[-1] < first[0]
    moved = max((a[("rope", name)] - weight.to(CUDA)).abs().max().item() for name, weight in start.items())
    assert moved > 0.04


@cuda
def test_tf32_products_run_and_the_setting_is_put_back():
    before = torch.get_float32_matmul_precision()
    config = dataclasses.replace(PRESETS["tiny"], steps=20, precision="tf32")
    results = run_lab(config, device="cuda")
    assert results["graphed"] and results["config"]["precision"] == "tf32"
    assert torch.get_float32_matmul_precision() == before
    with products("tf32", CUDA):
        assert torch.get_float32_matmul_precision() == "high"
    assert torch.get_float32_matmul_precision() == before


@cuda
def test_bf16_autocast_reaches_the_replayed_products():
    r"""A bf16 run's replayed step computes in bfloat16 (its losses are not the float32 run's), trains (the loss falls)
    and leaves autocast off behind it."""
    config = dataclasses.replace(PRESETS["tiny"], steps=40)
    full = run_lab(config, device="cuda")
    half = run_lab(dataclasses.replace(config, precision="bf16"), device="cuda")
    assert half["graphed"] and not torch.is_autocast_enabled("cuda")
    for encoding in config.encodings:
        a, b = full["runs"][encoding]["train_loss"], half["runs"][encoding]["train_loss"]
        assert a != b, encoding
        assert b[-1] < b[0], encoding


def test_a_cpu_run_is_launched_op_by_op_and_precision_is_a_cuda_setting():
    before = torch.get_float32_matmul_precision()
    with products("tf32", torch.device("cpu")):
        assert torch.get_float32_matmul_precision() == before
    results = run_lab(dataclasses.replace(PRESETS["tiny"], steps=2, encodings=("rope",)), device="cpu")
    assert results["graphed"] is False


def test_a_graph_off_cuda_and_an_unknown_precision_are_refused():
    with pytest.raises(PosEncError, match="CUDA"):
        _train(PRESETS["tiny"], batches_for(PRESETS["tiny"], torch.device("cpu")), None, done=0, total=1, graphed=True)
    with pytest.raises(PosEncError, match="precision"):
        LabConfig(precision="fp16")
