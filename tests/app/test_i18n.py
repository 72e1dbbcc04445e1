r"""The two catalogues hold the same keys with the same placeholders, and every key the code asks for exists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from posenc_ui import catalog
from posenc_ui.i18n import LANGS, catalogue, every_page_words, lang_from_locale, shared_words, t
from posenc_ui.lessons import VIEWS
from posenc_ui.state import ChoiceParam

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [*ROOT.glob("posenc_ui/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
CJK = re.compile(r"[\u4e00-\u9fff]")
PLACEHOLDER = re.compile(r"(?<!\{)\{([a-z_]+)(?:[:!][^{}]*)?\}(?!\})")


def placeholders(text: str) -> set[str]:
    r"""``{name}`` fields (texts shown without formatting may hold LaTeX braces, so no strict parse)."""
    return set(PLACEHOLDER.findall(text))


def test_both_languages_have_exactly_the_same_keys() -> None:
    zh, en = set(catalogue("zh")), set(catalogue("en"))
    assert not zh - en, f"only in zh: {sorted(zh - en)}"
    assert not en - zh, f"only in en: {sorted(en - zh)}"


def test_every_words_file_has_the_same_keys_in_both_languages() -> None:
    r"""Parity per file, not only overall: a key in the wrong language's page file would pass the test above."""
    files = [shared_words("en"), *every_page_words("en")]
    assert len(files) > 1
    for en in files:
        zh = en.with_name(en.name.replace(".en.json", ".zh.json"))
        assert set(json.loads(zh.read_text(encoding="utf-8"))) == set(json.loads(en.read_text(encoding="utf-8")))


@pytest.mark.parametrize("key", sorted(catalogue("en")))
def test_placeholders_agree_and_text_is_not_empty(key: str) -> None:
    assert catalogue("zh")[key].strip() and catalogue("en")[key].strip()
    assert placeholders(catalogue("zh")[key]) == placeholders(catalogue("en")[key])


def literal_keys() -> set[str]:
    r"""Every ``t("a.b")`` / ``self.t("a.b")`` literal in the app's sources."""
    pattern = re.compile(r"""\bt\(\s*["']([a-z_]+\.[a-z_.]+)["']""")
    return {key for path in SOURCES for key in pattern.findall(path.read_text(encoding="utf-8"))}


def page_keys() -> set[str]:
    r"""Keys the pages use indirectly: ``page.text("x")``, widget labels, option labels, page titles."""
    keys = {f"page.{p.id}.{part}" for p in catalog.PAGES for part in ("title", "promise")}
    for view in VIEWS:
        for param in view.params:
            keys.add(f"{view.page_id}.{param.name}")
            if isinstance(param, ChoiceParam) and isinstance(param.options[0], str):
                prefix = param.labels or f"{view.page_id}.{param.name}"
                keys.update(f"{prefix}.{option}" for option in param.options)
        keys.update(view_check_keys(view))
    call = re.compile(r"""page\.(?:text|heading)\(\s*["']([a-z_]+)["']""")
    for script in [*ROOT.glob("pages/*.py"), ROOT / "app.py"]:
        page_id = next((v.page_id for v in VIEWS if f"lessons.{v.page_id}.view" in script.read_text()), "home")
        page_id = "home" if "lessons.home.view" in script.read_text() else page_id
        keys.update(f"{page_id}.{name}" for name in call.findall(script.read_text(encoding="utf-8")))
    return keys


def view_check_keys(view) -> set[str]:
    from posenc_ui.state import defaults

    values = defaults(view.params)
    return {check(values).key for check in view.checks.values()}


@pytest.mark.parametrize("lang", LANGS)
def test_every_key_the_code_uses_exists(lang: str) -> None:
    missing = sorted((literal_keys() | page_keys()) - set(catalogue(lang)))
    assert not missing


def english_words(text: str) -> list[str]:
    r"""Lower-case words outside LaTeX (``$…$``) and HTML tags: what makes a string English prose."""
    return re.findall(r"\b[a-z]{3,}\b", re.sub(r"\$[^$]*\$|<[^>]+>", " ", text))


def test_chinese_catalogue_is_chinese() -> None:
    prose = [k for k, v in catalogue("en").items() if len(english_words(v)) > 5]  # "the dog bit the man" is data
    assert prose and all(CJK.search(catalogue("zh")[k]) for k in prose)


def test_t_formats_and_fails_loudly_on_unknown_keys() -> None:
    assert t("nav.next", "en", title="X") == "Next: X"
    with pytest.raises(KeyError):
        t("no.such.key", "zh")


@pytest.mark.parametrize(
    ("locale", "lang"), [("zh-CN", "zh"), ("zh_Hant_TW", "zh"), ("en-US", "en"), ("fr-FR", None), (None, None)]
)
def test_lang_from_locale(locale, lang) -> None:
    assert lang_from_locale(locale) == lang


@pytest.mark.parametrize("lang", LANGS)
def test_markdown_emphasis_renders_in_every_string(lang: str) -> None:
    r"""No ``**`` survives CommonMark rendering (what Streamlit's markdown follows).

    In Chinese a closing ``**`` after full-width punctuation and before a character (``**插值（PI）**把``) is
    not right-flanking, so the asterisks would show literally: bold the words, not the punctuation.
    """
    markdown_it = pytest.importorskip("markdown_it")  # installed with streamlit (via rich)
    md = markdown_it.MarkdownIt("commonmark")
    literal = [key for key, text in catalogue(lang).items() if "**" in md.render(text)]
    assert not literal, f"unrendered ** in {literal}"


#: Readers never saw the source articles as numbered files: cite them by title (and author / link), never as
#: "syllabus 002", "大纲文章 001", "课程材料 000" or "article 003".
UNSEEN_DOCUMENT = re.compile(
    r"syllabus|大纲|课程材料|课程文章|课程里|seed article|(?:article|文章|材料|课程|errata for|勘误)\s*0\d\d",
    re.IGNORECASE,
)


@pytest.mark.parametrize("lang", LANGS)
def test_no_string_cites_a_source_by_number_or_as_the_syllabus(lang: str) -> None:
    cited = {key: m.group(0) for key, text in catalogue(lang).items() if (m := UNSEEN_DOCUMENT.search(text))}
    assert not cited, f"cite the article by its title instead: {cited}"


@pytest.mark.parametrize("lang", LANGS)
def test_no_string_holds_a_code_block(lang: str) -> None:
    r"""A fenced or indented code block makes the browser fetch Streamlit's syntax highlighter (1.5 MB of script,
    loaded on the page's first visit); RoPE's pairing table did, on every visit. Inline code and tables do not."""
    block = re.compile(r"```|~~~|(^|\n\n)( {4}|\t)\S")
    assert not [key for key, text in catalogue(lang).items() if block.search(text)]


#: A widget's label is the words under ``<page>.<param>``. The longest in either language is 56 characters
#: (extension's α = beta_slow, with what it does); a paragraph under that key means a text took the param's name.
LABEL_CHARS = 64
PAGE_TEXT = re.compile(r"""page\.text\(\s*["'](\w+)["']""")


@pytest.mark.parametrize("lang", LANGS)
def test_every_widget_label_is_a_label(lang: str) -> None:
    too_long = {
        f"{view.page_id}.{param.name}": label
        for view in VIEWS
        for param in view.params
        if len(label := t(f"{view.page_id}.{param.name}", lang)) > LABEL_CHARS or "**" in label or "\n" in label
    }
    assert too_long == {}


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_no_page_text_shares_its_key_with_a_widget_label(view) -> None:
    r"""RoPE's "trained" paragraph once sat under the key of the "trained" pairing's label, so the widget showed
    the paragraph as its label."""
    script = (ROOT / catalog.BY_ID[view.page_id].script).read_text(encoding="utf-8")
    texts = set(PAGE_TEXT.findall(script))
    assert texts, "the pattern no longer finds this page's texts"
    assert texts & {param.name for param in view.params} == set()


def test_no_words_file_holds_a_key_twice() -> None:
    r"""json.load keeps the last of two equal keys silently: an edit that appended a key beside its old entry would
    leave the old sentence in the file, unseen."""
    import json

    from posenc_ui.paths import ROOT

    files = [*ROOT.glob("posenc_ui/lessons/*/words.*.json"), *ROOT.glob("assets/i18n/*.json")]
    assert files
    for path in files:
        keys = [k for k, _ in json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=lambda pairs: pairs)]
        assert len(keys) == len(set(keys)), (path.name, sorted({k for k in keys if keys.count(k) > 1}))
