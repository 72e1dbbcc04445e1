r"""The real-model page under AppTest, on the model the session loaded once: its figures and checks from the reader's
text, refusals of bad text in both languages with the last good figure kept, and the page without a model (a fresh
server that cannot fetch it) saying what is missing while every other page works as before."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from posenc_real import RealModel, tokenize
from posenc_ui import catalog
from posenc_ui.i18n import t
from posenc_ui.lessons.real import model as page_model
from posenc_ui.lessons.real.shipped import DEFAULT_TEXT

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = catalog.BY_ID["real"].script
TEXT = (
    "The little boat crossed the lake every morning, carrying letters, bread and news from the town to the island "
    "and back again before noon, whatever the weather."
)


def _open(lang: str, text: str = TEXT) -> AppTest:
    at = AppTest.from_file(str(ROOT / catalog.HOME_SCRIPT), default_timeout=900)
    at.switch_page(SCRIPT)
    at.query_params.update({"lang": lang, "text": text})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _charts(at: AppTest) -> list[dict]:
    sys.path.insert(0, str(ROOT / "tests" / "app"))
    from drawn import sent_charts

    return sent_charts(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_draws_both_figures_and_passing_checks_from_the_readers_text(real: RealModel, lang: str) -> None:
    at = _open(lang)
    charts = _charts(at)
    titles = [chart["figure"]["layout"]["title"]["text"] for chart in charts]
    tokens = tokenize(real, TEXT).size
    view = catalog.BY_ID["real"].view
    assert len(charts) == len(view.figures) and all(str(tokens) in title for title in titles[:2])
    lines = [line for box in [*at.success, *at.error] for line in box.value.split("\n\n")]
    assert not [line for line in lines if line.startswith("✗")], [box.value for box in at.error]
    # this text is too short for the far keys of section 2: that check gives way to a sentence saying so
    assert len([line for line in lines if line.startswith("✓")]) == len(view.checks) - 1
    assert any(t("real.decay_short", lang, tokens=tokens, reach=32) in m.value for m in at.markdown)
    assert any(t("real.tokens", lang, tokens=tokens, limit=512) == c.value for c in at.caption)
    # The model is named for what it is wherever the page names it.
    assert t("real.model_name", lang) in at.markdown[0].value or any(
        t("real.model_name", lang) in m.value for m in at.markdown
    )


def test_a_shift_far_past_the_training_length_keeps_the_claim(real: RealModel) -> None:
    at = _open("en")
    at.select_slider(key="real.delta").set_value(100_000).run()
    assert not at.exception
    assert any("Δ = 100,000" in box.value and box.value.startswith("✓") for box in at.success)
    assert at.query_params["delta"] == "100000"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_text_is_refused_in_the_readers_language_and_the_last_figures_stay(real: RealModel, lang: str) -> None:
    at = _open(lang)
    before = [chart["figure"]["layout"]["title"]["text"] for chart in _charts(at)]
    long_text = "position " * 600  # one token a word: past 512
    cases = {
        "": t("real.refuse_empty", lang),
        "Too short.": t("real.refuse_short", lang, tokens=tokenize(real, "Too short.").size, least=16),
        long_text: t("real.refuse_long", lang, tokens=f"{tokenize(real, long_text).size:,}", limit=512),
        "x" * 9_000: t("real.refuse_chars", lang, chars="9,000", limit="8,192"),
    }
    for text, said in cases.items():
        at.text_area(key="real.text").set_value(text).run()
        assert not at.exception, [e.value for e in at.exception]
        said = f"{said} {t('real.reads_last', lang)}"  # the figures go on with the reader's last accepted text
        assert any(said in box.value for box in at.error), (text[:20], [e.value for e in at.error])
        assert [chart["figure"]["layout"]["title"]["text"] for chart in _charts(at)] == before  # the last good ones


def test_a_link_with_a_text_too_long_opens_on_the_shipped_passage_and_says_so(real: RealModel) -> None:
    long_text = "position " * 600
    at = _open("en", long_text)
    said = t("real.refuse_long", "en", tokens=f"{tokenize(real, long_text).size:,}", limit=512)
    assert any(box.value.endswith(f"{said} {t('real.reads_default', 'en')}") for box in at.error)
    tokens = tokenize(real, DEFAULT_TEXT).size
    assert len(_charts(at)) == len(catalog.BY_ID["real"].view.figures)  # every section drawn, from the passage
    assert any(t("real.tokens_instead", "en", tokens=f"{tokens:,}") == c.value for c in at.caption)
    assert at.text_area(key="real.text").value == long_text  # the reader's text stays in the box and in the link
    assert at.query_params["text"] == long_text


def test_the_text_refusals_need_the_models_tokens(real: RealModel) -> None:
    from posenc_core import PosEncError

    with pytest.raises(PosEncError) as caught:
        page_model.passage_ids("word " * 600)
    assert caught.value.key == "real.refuse_long"
    ids = page_model.passage_ids(TEXT)
    assert list(ids) == list(tokenize(real, TEXT)) and not ids.flags.writeable


def test_without_the_model_the_page_draws_the_shipped_passage_and_says_what_is_missing(tmp_path: Path) -> None:
    r"""A fresh server process whose cache is empty and whose pip reaches no index: the shipped passage draws every
    figure from its shipped results; a reader's own text gets, in the reader's language, that the model could not be
    downloaded and which command gets it, while the figures go on reading the passage; no traceback; the RoPE page
    draws as always; torch was never imported."""
    script = textwrap.dedent(
        f"""
        import sys
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file({str(ROOT / catalog.HOME_SCRIPT)!r}, default_timeout=300)
        at.query_params["lang"] = "zh"
        at.run()
        at.switch_page("pages/6_RoPE.py")
        at.run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        at.switch_page({SCRIPT!r})
        at.run()
        assert not at.exception and not at.error, [e.value for e in at.exception]
        print(len([c for c in at.get("bidi_component") if c.proto.bytes]))
        at.text_area(key="real.text").set_value({TEXT!r}).run()
        assert not at.exception, [e.value for e in at.exception]
        print(any("模型无法下载" in e.value for e in at.error))  # real.unavailable.pip_failed, in Chinese
        print(any("python -m posenc_real" in e.value and "pip" in e.value for e in at.error))
        print(len([c for c in at.get("bidi_component") if c.proto.bytes]))
        print(at.text_area(key="real.text").value == {TEXT!r})
        print("torch" in sys.modules)
        """
    )
    env = {
        **os.environ,
        "POSENC_MODEL_CACHE": str(tmp_path / "empty-cache"),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "2",
    }
    env.pop("PIP_FIND_LINKS", None)
    env.pop("PIP_EXTRA_INDEX_URL", None)
    env.pop("POSENC_REAL_MODEL", None)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    figures = str(len(catalog.BY_ID["real"].view.figures))
    assert out.stdout.split()[-6:] == [figures, "True", "True", figures, "True", "False"]


def test_junk_as_the_readers_text_is_refused_or_read_and_nothing_breaks(real: RealModel) -> None:
    r"""The query-parameter sweep's junk (``tests/app/test_hostile.py``), pasted as the text: each short or long one
    is refused in words with every figure still drawn from the last accepted text; none raises. (400 nines, a valid
    400-token text, is left out: minutes of forwards that test nothing the others do not.)"""
    sys.path.insert(0, str(ROOT / "tests" / "app"))
    from test_hostile import HOSTILE

    at = _open("en")
    figures = len(catalog.BY_ID["real"].view.figures)
    for kind, junk in HOSTILE.items():
        if kind == "huge":
            continue
        at.text_area(key="real.text").set_value(junk).run()
        assert not at.exception, (kind, [e.value for e in at.exception])
        assert len(_charts(at)) == figures, kind
        refused = [box.value for box in at.error if box.value.endswith(t("real.reads_last", "en"))]
        assert refused or len(tokenize(real, junk)) >= 16, kind
