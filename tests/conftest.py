"""Test-suite settings shared by every directory.

Under CI (``CI=true``) hypothesis runs derandomized: the same examples on every run, so a red CI always means a
change broke something, never that a new random draw found an old rare case. Locally it keeps exploring new
examples (and ``POSENC_FUZZ_EXAMPLES`` raises the fuzz budget) — that is where new bugs are meant to be found.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")
