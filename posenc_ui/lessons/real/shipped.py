r"""The real-model page's shipped passage, and what the model computes for it, shipped beside it.

Every number the page draws comes from a *recipe*: a function of the text (and of a setting or two that offer a few
values) that runs the model's forwards, decorated with :func:`model_result`, which registers it in :data:`RECIPES`.
For a text the reader wrote, a recipe runs the model live and keeps its result in the app's memory
(:data:`posenc_ui.memo.MODEL`). For the shipped passage, every recipe's result at every value its settings offer was
computed once, by the same recipes on the same model, and committed (:data:`RESULTS_FILE`, written by
``python -m posenc_ui.lessons.real``): a first visit then draws every section at once, without loading the
model, and a class of students opening the page costs the server nothing but the drawing.

The shipped results are used only when they are the ones this installation would compute: the file's passage, model
file and transformers release must be this checkout's (:func:`why_not_shipped` says which differs; the page then
runs the model, as for any other text), and no other checkpoint may be named in ``$POSENC_REAL_MODEL``.
``tests/real/test_shipped.py`` recomputes them with the model and compares.

The file is one ``.npz`` (NumPy's own format, read with ``allow_pickle=False``): a JSON manifest of each result's
structure (dataclasses of :mod:`posenc_real`, dicts, tuples, numbers) whose arrays are the file's other members.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import itertools
import json
import platform
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from posenc_real import SMOLLM2, model_choice

from ...memo import MODEL, memo

#: The shipped passage: prose written for this page (no source to credit; it is under the repository's licence).
DEFAULT_TEXT = (Path(__file__).with_name("passage.txt")).read_text(encoding="utf-8").strip()

#: The committed results of every recipe for :data:`DEFAULT_TEXT`.
RESULTS_FILE = Path(__file__).resolve().parents[3] / "assets" / "real" / "passage_results.npz"

#: Bumped when the file's layout changes; a file of another format is not read.
FORMAT = 1

#: The model's numbers the file records beside the results (the fields of :class:`posenc_real.RealModel`).
FACTS = (
    "name",
    "quantization",
    "num_layers",
    "num_heads",
    "num_kv_heads",
    "head_dim",
    "rope_theta",
    "max_position_embeddings",
)

#: Only these modules' dataclasses are rebuilt from the file.
_RESULT_MODULES = ("posenc_real.",)


@dataclass(frozen=True)
class Recipe:
    r"""A registered recipe: ``fn(text, *settings)``, and for each setting the values the page offers."""

    name: str  # "<section>.<function>", the key of its results in the file
    fn: Callable[..., Any]  # the undecorated function: runs the model
    domains: tuple[tuple[Any, ...], ...]

    def settings(self) -> Iterator[tuple[Any, ...]]:
        r"""Every combination of the settings' values: the results the file holds for this recipe."""
        return itertools.product(*self.domains)


#: Every recipe of the page, by name: what the file holds, what the writer computes and what the test recomputes.
RECIPES: dict[str, Recipe] = {}

_MISSING = object()


def model_result(*domains: tuple[Any, ...]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    r"""Register ``fn(text, *settings)`` as a recipe; ``domains`` are the values the page offers for each setting.

    The decorated function answers the shipped passage from :data:`RESULTS_FILE` and any other text by running
    ``fn``, kept in :data:`posenc_ui.memo.MODEL` (a result is the work of seconds to minutes of forwards)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        name = f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__.lstrip('_')}"
        if name in RECIPES:
            raise ValueError(f"two recipes named {name}")
        RECIPES[name] = Recipe(name, fn, tuple(tuple(domain) for domain in domains))
        computed = memo(fn, budget=MODEL)

        @functools.wraps(fn)
        def answer(text: str, *settings: Any) -> Any:
            found = _shipped_answer(name, text, settings)
            return computed(text, *settings) if found is _MISSING else found

        answer.cache = computed.cache  # type: ignore[attr-defined]  # the pool, as on every memoized function
        return answer

    return decorate


def _shipped_answer(name: str, text: str, settings: tuple[Any, ...]) -> Any:
    if text != DEFAULT_TEXT:
        return _MISSING
    found = results()
    return _MISSING if found is None else found.get((name, settings), _MISSING)


def answers(text: str) -> bool:
    r"""Whether every recipe's result for ``text`` is shipped: the page needs no model for it."""
    found = results() if text == DEFAULT_TEXT else None
    if found is None:
        return False
    return all((recipe.name, settings) in found for recipe in RECIPES.values() for settings in recipe.settings())


def facts() -> dict[str, Any] | None:
    r"""The model's numbers the figures quote (layers, head size, RoPE base, training length …) as the file records
    them from the loaded model, or ``None`` when the shipped results are not used."""
    return None if results() is None else manifest()["model"]


def why_not_shipped() -> str | None:
    r"""Why the shipped results are not this installation's (the page then runs the model for the shipped passage
    too), or ``None`` when they are."""
    if model_choice() is not None:
        return f"another checkpoint is named ({model_choice()})"
    try:
        recorded = manifest()["provenance"]
    except (OSError, ValueError, KeyError) as err:
        return f"{RESULTS_FILE.name} cannot be read: {err}"
    expected = expected_provenance()
    for field, value in expected.items():
        if recorded.get(field) != value:
            return f"its {field} is {recorded.get(field)!r}, this installation's {value!r}"
    return None


def expected_provenance() -> dict[str, Any]:
    r"""What the results depend on: the file's format, the passage, the model file and transformers' release."""
    return {
        "format": FORMAT,
        "text_sha256": hashlib.sha256(DEFAULT_TEXT.encode("utf-8")).hexdigest(),
        "model_sha256": SMOLLM2.member_sha256,
        "transformers": _version("transformers"),
    }


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def _archive() -> dict[str, np.ndarray]:
    with np.load(RESULTS_FILE, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


@functools.lru_cache(maxsize=1)
def manifest() -> dict[str, Any]:
    return json.loads(str(_archive()["manifest"]))


@functools.lru_cache(maxsize=1)
def results() -> dict[tuple[str, tuple[Any, ...]], Any] | None:
    r"""Every shipped result by (recipe, settings), arrays read-only; ``None`` when they are not this installation's."""
    if why_not_shipped() is not None:
        return None
    arrays = _archive()
    return {
        (entry["recipe"], tuple(entry["settings"])): _decode(entry["value"], arrays) for entry in manifest()["results"]
    }


# --- the file's codec: JSON for structure, the archive's members for arrays -------------------------------------


def _encode(value: Any, arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(value, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = value
        return {"array": key}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = type(value)
        fields = {field.name: _encode(getattr(value, field.name), arrays) for field in dataclasses.fields(value)}
        return {"dataclass": f"{kind.__module__}:{kind.__qualname__}", "fields": fields}
    if isinstance(value, dict):
        return {"dict": [[key, _encode(item, arrays)] for key, item in value.items()]}
    if isinstance(value, tuple):
        return {"tuple": [_encode(item, arrays) for item in value]}
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return value  # JSON keeps a float64 exactly (shortest repr that reads back the same)
    raise TypeError(f"cannot ship a {type(value).__name__}")


def _decode(node: Any, arrays: dict[str, np.ndarray]) -> Any:
    if not isinstance(node, dict):
        return node
    if "array" in node:
        array = arrays[node["array"]]
        array.setflags(write=False)  # shared by every session, like a memoized result
        return array
    if "dataclass" in node:
        module, _, qualname = node["dataclass"].partition(":")
        if not module.startswith(_RESULT_MODULES):
            raise ValueError(f"{node['dataclass']} is not a result type")
        kind = getattr(importlib.import_module(module), qualname)
        return kind(**{name: _decode(item, arrays) for name, item in node["fields"].items()})
    if "dict" in node:
        return {key: _decode(item, arrays) for key, item in node["dict"]}
    if "tuple" in node:
        return tuple(_decode(item, arrays) for item in node["tuple"])
    raise ValueError(f"unknown node {sorted(node)}")


# --- the writer ------------------------------------------------------------------------------------------------


def compute(recipe: Recipe, settings: tuple[Any, ...]) -> Any:
    r"""``recipe`` for the shipped passage at ``settings``, run live on the model (never read from the file)."""
    return recipe.fn(DEFAULT_TEXT, *settings)


def write(real: Any, path: Path = RESULTS_FILE, *, progress: Callable[[str], None] = print) -> None:
    r"""Run every recipe at every setting on the shipped passage and write the results to ``path``; ``real`` is the
    loaded model the recipes run (:func:`.model.shared_model`), whose numbers the file records beside them."""
    started = time.perf_counter()
    arrays: dict[str, np.ndarray] = {}
    results = []
    for recipe in RECIPES.values():
        for settings in recipe.settings():
            value = compute(recipe, settings)
            results.append({"recipe": recipe.name, "settings": list(settings), "value": _encode(value, arrays)})
        progress(f"[{time.perf_counter() - started:7.1f} s] {recipe.name}")
    manifest = {
        "provenance": expected_provenance(),
        "model": {name: getattr(real, name) for name in FACTS},
        "made": {
            "command": "python -m posenc_ui.lessons.real",
            "seconds": round(time.perf_counter() - started, 1),
            "device": real.device,
            "torch": _version("torch"),
            "python": platform.python_version(),
            "machine": platform.machine(),
        },
        "results": results,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        np.savez_compressed(out, manifest=np.array(json.dumps(manifest)), **arrays)
