r"""Where the app's files live: the repository root and the folders read from it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREVIEWS = ROOT / "assets" / "previews"
#: Numbers the core computes the same for every reader, computed once and committed (each file names its settings).
COMPUTED = ROOT / "assets" / "computed"
