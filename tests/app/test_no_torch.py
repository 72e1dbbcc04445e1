r"""No page but the lab imports torch (it costs ~2 s and ~230 MB); the lab starts importing it as soon as it opens,
freezes what the import left in the heap, and then times a few steps of its default run. The real-model page imports
torch and transformers only when a reader's own text needs its model: on the shipped passage it draws the shipped
results (``posenc_ui/lessons/real/shipped.py``), and its live path has its own tests (``tests/real/test_page.py``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from posenc_lab.tasks import ENCODINGS
from posenc_ui.lessons.lab.runner import EVALUATION

ROOT = Path(__file__).resolve().parents[2]


def test_no_page_but_the_lab_imports_torch_and_the_lab_warms_it_up() -> None:
    script = textwrap.dedent(
        """
        import sys
        from streamlit.testing.v1 import AppTest
        from posenc_ui import catalog
        at = AppTest.from_file("app.py", default_timeout=60)
        at.run()
        for page in catalog.PAGES:
            if page.id != "lab":
                at.switch_page(page.script)
                at.run()
                assert not at.exception, page.script
        import posenc_ui.export, posenc_ui.lessons
        print("torch" in sys.modules)
        at.switch_page(catalog.BY_ID["lab"].script)
        at.run()
        assert not at.exception
        from posenc_ui.lessons.lab import runner as lab_runner
        assert lab_runner._WARM_DONE.wait(120)  # started in the background when the lab opened
        print("torch" in sys.modules, lab_runner._WARM.get("device"))
        import gc, torch  # torch's import, frozen: no full collection walks its objects (get_objects lists the rest)
        print(any(o is torch.nn.Module.__init__ for o in gc.get_objects()))
        from posenc_ui.lessons.lab import view as lab  # the warm-up also timed the default run, for the first estimate
        print(*sorted(lab.queue().timing(lab_runner._WARM["device"], "lag")))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    before, after, tracked, timed = out.stdout.strip().splitlines()[-4:]
    assert before == "False"
    assert after.startswith("True ")
    assert tracked == "False"
    assert timed.split() == sorted([*ENCODINGS, EVALUATION])
