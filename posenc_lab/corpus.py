r"""The text task's corpus: human-written text that every Python installation carries, so nothing is downloaded."""

from __future__ import annotations

import functools
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["TextCorpus", "text_corpus"]


@dataclass(frozen=True)
class TextCorpus:
    r"""The text task's bytes: training and held-out streams, each a concatenation of whole documents."""

    train: np.ndarray  # uint8
    held_out: np.ndarray  # uint8
    documents: int
    held_out_documents: int
    source: str

    def describe(self) -> dict[str, object]:
        return {
            "source": self.source,
            "documents": self.documents,
            "held_out_documents": self.held_out_documents,
            "train_bytes": int(self.train.size),
            "held_out_bytes": int(self.held_out.size),
        }


@functools.cache
def text_corpus() -> TextCorpus:
    r"""``pydoc_data.topics`` (English prose) and the standard library's top-level ``*.py`` files, as UTF-8 bytes.

    Documents are sorted by name (topic, then file name) and every tenth goes to the held-out stream, so the model is
    scored on text it never saw. Sizes depend on the Python version (3.11: about 5 MB); runs record them.
    """
    from pydoc_data.topics import topics

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    docs = [(f"topic:{name}", text.encode("utf-8")) for name, text in sorted(topics.items())]
    docs += [(f"stdlib:{path.name}", path.read_bytes()) for path in sorted(stdlib.glob("*.py"))]
    train = [body for n, (_, body) in enumerate(docs) if n % 10]
    held_out = [body for n, (_, body) in enumerate(docs) if not n % 10]
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return TextCorpus(
        train=np.frombuffer(b"\n\n".join(train), dtype=np.uint8),
        held_out=np.frombuffer(b"\n\n".join(held_out), dtype=np.uint8),
        documents=len(docs),
        held_out_documents=len(held_out),
        source=f"Python {version}: pydoc_data.topics ({len(topics)} topics) + {len(docs) - len(topics)} stdlib modules",
    )
