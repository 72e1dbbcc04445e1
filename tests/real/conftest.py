r"""The real model, fetched once per machine (into the model cache, ``~/.cache/posenc/models`` unless
``$POSENC_MODEL_CACHE`` moves it) and loaded once per test session: a load takes 15–40 s, so the tests that need
the model share this one.

Outside CI a machine that cannot reach the package index skips these tests and says why; under CI (``CI=true``) the
fetch must work, and its failure fails the tests.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from posenc_real import ModelUnavailable, RealModel, ensure_model, model_choice

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def model_file() -> Path:
    r"""The verified GGUF file in this machine's model cache (fetched on the first session that needs it)."""
    try:
        return ensure_model()
    except ModelUnavailable as err:
        if IN_CI:
            raise
        pytest.skip(f"the real model could not be fetched here ({err.code}): {err}")


@pytest.fixture(scope="session")
def real(model_file: Path) -> RealModel:
    r"""The model loaded by transformers (eval mode, float32, eager attention), shared by the session's tests and by
    the page's own process-wide holder (:func:`posenc_ui.lessons.real.model.shared_model`), so it loads once."""
    from posenc_ui.lessons.real import model

    assert model_choice() is None, "the tests run the wheel's model: unset $POSENC_REAL_MODEL"
    return model.shared_model()
