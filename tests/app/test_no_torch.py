r"""The home page and pages 1–4 never import torch (it costs ~2 s and ~230 MB; only the lab page may)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_home_and_pages_1_to_4_never_import_torch() -> None:
    script = textwrap.dedent(
        """
        import sys
        from streamlit.testing.v1 import AppTest
        from posenc_ui import catalog
        at = AppTest.from_file("app.py", default_timeout=60)
        at.run()
        for page in catalog.PAGES:
            if page.built:
                at.switch_page(page.script)
                at.run()
                assert not at.exception, page.script
        import posenc_ui.export, posenc_ui.views
        print("torch" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"
