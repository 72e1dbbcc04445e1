"""Test-suite settings shared by every directory.

Under CI (``CI=true``) hypothesis runs derandomized: the same examples on every run, so a red CI always means a
change broke something, never that a new random draw found an old rare case. Locally it keeps exploring new
examples (and ``POSENC_FUZZ_EXAMPLES`` raises the fuzz budget) — that is where new bugs are meant to be found.
"""

from __future__ import annotations

import os
import tempfile

from hypothesis import settings

# The lab's run cache (posenc_lab.queue) is per test session: no result left by an earlier run, or by a reader of
# this machine's app, can stand in for a run a test expects to happen. Servers the tests start inherit it.
os.environ["POSENC_LAB_CACHE"] = tempfile.mkdtemp(prefix="posenc-lab-cache-")

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")
