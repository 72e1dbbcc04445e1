r"""The app uses the core through its public names only: a private helper may change without notice."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_page_or_view_imports_a_private_core_name() -> None:
    private = []
    for path in [*ROOT.joinpath("posenc_ui").rglob("*.py"), *ROOT.joinpath("pages").glob("*.py"), ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("posenc_core"):
                private += [f"{path.relative_to(ROOT)}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert not private, private


def test_phones_and_tablets_are_told_apart_from_desktops_by_their_user_agent() -> None:
    from posenc_ui.frame import is_touch

    iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148"
    android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36"
    desktop = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36"
    assert is_touch(iphone) and is_touch(android) and not is_touch(desktop) and not is_touch("")
