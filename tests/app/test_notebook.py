r"""``posenc_ui.figure``: every figure of every page from one call, its controls read as a link's values, its slider as
plotly frames, and the app's refusals in the chosen language (docs/notebooks.md).

The pages and figures come from the views' registry (:data:`posenc_ui.lessons.PAGES`), never from a list written here.
A real kernel running the committed example notebook is ``tests/test_notebook_kernel.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import plotly.graph_objects as go
import pytest

import posenc_ui
from posenc_core import PosEncError
from posenc_ui.export import download_builder, html_bytes
from posenc_ui.i18n import LANGS, t
from posenc_ui.lessons import PAGES
from posenc_ui.notebook import ValueChanged
from posenc_ui.state import IntParam, defaults
from posenc_ui.sweep import sweep_values

ROOT = Path(__file__).resolve().parents[2]
FIGURES = [(page.id, name) for page in PAGES for name in page.view.figures]
SWEPT = [(page.id, name, param) for page in PAGES for name, param in page.view.sweeps.items()]
VIEW = {page.id: page.view for page in PAGES}
#: A CJK ideograph: what makes a sentence Chinese.
HAN = re.compile(r"[\u4e00-\u9fff]")


def _json(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def test_the_call_is_the_packages_public_api() -> None:
    assert posenc_ui.__all__ == ["figure"]
    assert posenc_ui.figure is posenc_ui.notebook.figure
    with pytest.raises(AttributeError):
        _ = posenc_ui.no_such_name


@pytest.mark.parametrize(("page", "name"), FIGURES)
def test_every_figure_of_every_page_draws_at_the_defaults_what_the_page_draws(page: str, name: str) -> None:
    view = VIEW[page]
    drawn = posenc_ui.figure(page, name, lang="en")
    assert isinstance(drawn, go.Figure) and drawn.data
    assert _json(drawn) == _json(view.figures[name](defaults(view.params, "en"), "en"))


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.id)
def test_the_language_switches_the_words(page) -> None:
    english = _json(posenc_ui.figure(page.id, page.preview, lang="en"))
    chinese = _json(posenc_ui.figure(page.id, page.preview, lang="zh"))
    assert english != chinese
    assert HAN.search(json.dumps(chinese["layout"], ensure_ascii=False))
    assert not HAN.search(json.dumps(english["layout"], ensure_ascii=False))


@pytest.mark.parametrize(("page", "name", "swept"), SWEPT)
def test_keep_slider_keeps_the_declared_slider_as_frames(page: str, name: str, swept: str) -> None:
    view = VIEW[page]
    kept = posenc_ui.figure(page, name, keep_slider=True)
    [slider] = kept.layout.sliders
    assert 2 <= len(kept.frames) == len(slider.steps) <= len(sweep_values(view.param(swept), defaults(view.params)))
    assert slider.currentvalue.prefix.startswith(t(f"{page}.{swept}", "en"))
    assert not posenc_ui.figure(page, name).frames


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.id)
def test_a_figure_that_exports_still_comes_back_as_it_is(page) -> None:
    for name in page.view.static:  # RoPE's clocks carry frames of their own (their hands turn): kept as they are
        assert _json(posenc_ui.figure(page.id, name, keep_slider=True)) == _json(posenc_ui.figure(page.id, name))


@pytest.mark.parametrize(
    ("page", "name", "control", "value"),
    [("alibi", "slopes", "n_heads", 12), ("lab", "by_position", "task", "retrieval")],
)
def test_a_control_changes_the_figure(page: str, name: str, control: str, value: object) -> None:
    assert value != defaults(VIEW[page].params)[control]
    assert (
        _json(posenc_ui.figure(page, name, **{control: value}))["data"] != _json(posenc_ui.figure(page, name))["data"]
    )


def test_a_control_reaches_the_recipe() -> None:
    fig = posenc_ui.figure("rope", "clocks", dim=64, lang="zh")
    view = VIEW["rope"]
    assert _json(fig) == _json(view.figures["clocks"]({**defaults(view.params, "zh"), "dim": 64}, "zh"))
    # page 6 draws one clock per chosen pair, and d = 64 has pairs 0 … 31 only: pair 63 is dropped as a link's is
    assert _json(fig) != _json(posenc_ui.figure("rope", "clocks", lang="zh"))


def test_text_is_read_as_a_links_text() -> None:
    assert _json(posenc_ui.figure("rope", "clocks", dim="64")) == _json(posenc_ui.figure("rope", "clocks", dim=64))
    wrapped = _json(posenc_ui.figure("first", "binary", bits=3, wrap="yes"))
    assert wrapped == _json(posenc_ui.figure("first", "binary", bits=3, wrap=True))


def test_a_config_is_taken_as_a_mapping_or_as_its_json_text() -> None:
    config = {"hidden_size": 2048, "num_attention_heads": 16, "rope_theta": 500000.0, "max_position_embeddings": 8192}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        as_mapping = posenc_ui.figure("extension", "pasted", config=config)
    assert _json(as_mapping) == _json(posenc_ui.figure("extension", "pasted", config=json.dumps(config)))
    assert _json(as_mapping) != _json(posenc_ui.figure("extension", "pasted"))


def test_the_offline_html_of_a_kept_slider_is_the_export_panels_file() -> None:
    view = VIEW["alibi"]
    values = {**defaults(view.params, "zh"), "n_heads": 12}
    shown = view.figures["bias"](values, "zh")
    panel = download_builder(view, "bias", values, "zh", shown, "html")()
    mine = html_bytes(posenc_ui.figure("alibi", "bias", n_heads=12, lang="zh", keep_slider=True))
    assert _without_div_id(mine) == _without_div_id(panel) and b"addFrames" in mine


def _without_div_id(page: bytes) -> bytes:
    r"""An HTML page of a figure without the random id plotly gives its ``<div>`` (a UUID, new on every call)."""
    return re.sub(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", b"<id>", page)


def test_the_returned_figure_is_the_callers_own() -> None:
    fig = posenc_ui.figure("compare", "matrices")
    fig.update_layout(title_text="mine")
    assert posenc_ui.figure("compare", "matrices").layout.title.text != "mine"


@pytest.mark.parametrize("lang", LANGS)
def test_a_value_out_of_range_is_clamped_with_a_warning_naming_both(lang: str) -> None:
    top = VIEW["rope"].param("dim")
    assert isinstance(top, IntParam)
    with pytest.warns(ValueChanged) as caught:
        fig = posenc_ui.figure("rope", "clocks", dim=top.hi + 1000, lang=lang)
    [warning] = caught
    message = str(warning.message)
    assert f"dim={top.hi + 1000}" in message and str(top.hi) in message and "`" not in message
    assert bool(HAN.search(message)) == (lang == "zh")
    assert warning.filename == __file__  # it points at the caller's line, not at posenc_ui
    assert _json(fig) == _json(posenc_ui.figure("rope", "clocks", dim=top.hi, lang=lang))


def test_a_number_rounded_onto_the_grid_warns_and_an_allowed_value_does_not() -> None:
    with pytest.warns(ValueChanged, match=r"dim=63\b"):  # the grid is 2, 4, … (pairs of dimensions)
        posenc_ui.figure("rope", "clocks", dim=63)
    with pytest.warns(ValueChanged, match=r"length=16\.6"):
        posenc_ui.figure("compare", "matrices", length=16.6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        posenc_ui.figure("rope", "clocks", dim=64, base=500000)  # 500000 == 500000.0, an option of the base
        posenc_ui.figure("alibi", "bias", heads=[0, 1])


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(
    ("args", "kwargs", "what", "allowed"),
    [
        (("rpoe", "clocks"), {}, "page", [page.id for page in PAGES]),
        (("rope", "clok"), {}, "figure", list(VIEW["rope"].figures)),
        (("rope", "clocks"), {"dimm": 64}, "control", [param.name for param in VIEW["rope"].params]),
    ],
)
def test_an_unknown_name_is_refused_with_the_allowed_ones(args, kwargs, what, allowed, lang: str) -> None:
    with pytest.raises(PosEncError) as caught:
        posenc_ui.figure(*args, lang=lang, **kwargs)
    message = str(caught.value)
    assert caught.value.code == "not_choice" and caught.value.fields["name"] == what
    assert message.startswith(f"{what} ") and ", ".join(allowed) in message and "`" not in message
    assert bool(HAN.search(message)) == (lang == "zh")


def test_an_unknown_language_is_refused_in_english() -> None:
    with pytest.raises(PosEncError, match=r"lang must be one of zh, en; got 'fr'"):
        posenc_ui.figure("rope", "clocks", lang="fr")


@pytest.mark.parametrize("lang", LANGS)
def test_a_value_the_control_cannot_read_is_refused_not_replaced(lang: str) -> None:
    with pytest.raises(PosEncError) as caught:
        posenc_ui.figure("rope", "clocks", dim="many", lang=lang)
    assert "dim=many" in str(caught.value) and "128" in str(caught.value)  # page 6's default head size
    assert bool(HAN.search(str(caught.value))) == (lang == "zh")
    with pytest.raises(PosEncError, match=r"trained .*interleaved, half.*'diagonal'") as caught:
        posenc_ui.figure("rope", "mismatch", trained="diagonal", lang=lang)
    assert caught.value.code == "not_choice"


@pytest.mark.parametrize("lang", LANGS)
def test_a_core_refusal_says_what_was_wrong_in_the_chosen_language(lang: str) -> None:
    r"""Page 2: 16 positions need 4 bits; 3 bits hold 0 … 2³ − 1 = 7 (the lesson the page draws from the refusal)."""
    with pytest.raises(PosEncError) as caught:
        posenc_ui.figure("first", "binary", bits=3, length=16, lang=lang)
    err = caught.value
    assert err.code == "too_few_bits" and err.fields == {"length": 16, "dim": 3, "largest": 2**3 - 1}
    assert "0 … 7" in str(err) and "`" not in str(err)
    assert bool(HAN.search(str(err))) == (lang == "zh")
    assert isinstance(err.__context__, PosEncError) and err.__suppress_context__  # the core's own, kept, not shown


def test_no_control_is_named_as_a_keyword_of_the_call() -> None:
    reserved = {"lang", "keep_slider"}
    assert not [(view.page_id, param.name) for view in VIEW.values() for param in view.params if param.name in reserved]


def test_importing_the_package_loads_no_page_and_drawing_every_page_loads_no_streamlit_and_no_torch() -> None:
    script = (
        "import sys, posenc_ui\n"
        "assert 'posenc_ui.lessons' not in sys.modules\n"
        "from posenc_ui.lessons import PAGES\n"
        "for page in PAGES:  # the real model's page too: its shipped passage needs no model\n"
        "    posenc_ui.figure(page.id, page.preview)\n"
        "print(sorted(m for m in ('streamlit', 'torch') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
