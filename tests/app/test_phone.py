r"""What a phone (390 px wide) and a Chinese reader need from the words and figures, checked without a browser.

Titles fit a phone's width once wrapped, legends sit at the foot of their figure, no Chinese line starts with
closing punctuation, no English word is left in a Chinese figure label, and every page lists its sources.
The rendered side (line breaks after inline maths, the first screen) is checked in ``tests/e2e``.
"""

from __future__ import annotations

import functools
import re

import pytest
from drawn import line_units, title_lines
from hypothesis import given
from hypothesis import strategies as st

from posenc_ui import catalog
from posenc_ui.figures.style import TITLE_UNITS, _parts, _wrap, wrap_title
from posenc_ui.i18n import CLOSING_MARKS, CLOSING_PUNCTUATION, LANGS, WORD_JOINER, catalogue, glue_punctuation, t
from posenc_ui.lessons import PAGES, VIEWS
from posenc_ui.state import defaults

#: English words that mean something a Chinese label should say in Chinese. Names (RoPE, YaRN, Llama), code
#: identifiers (max_distance, mscale), units (nats) and the few terms Chinese ML writing keeps (logits, softmax)
#: are not here.
ENGLISH_WORDS = {
    "and",
    "in",
    "of",
    "the",
    "for",
    "with",
    "against",
    "per",
    "bucket",
    "buckets",
    "temperature",
    "dynamic",
    "position",
    "positions",
    "pair",
    "pairs",
    "key",
    "keys",
    "query",
    "queries",
    "value",
    "values",
    "head",
    "heads",
    "seed",
    "seeds",
    "loss",
    "step",
    "steps",
    "distance",
    "offset",
    "dimension",
    "dimensions",
    "training",
    "trained",
    "length",
    "token",
    "tokens",
    "mean",
    "panel",
    "residual",
    "wavelength",
    "angle",
    "weight",
    "weights",
}
ARXIV = re.compile(r"arXiv:\d{4}\.\d{4,5}")
LINK = re.compile(r"\]\((https?://[^)\s]+)\)")


@functools.cache
def drawn(page_id: str, lang: str) -> dict:
    r"""Every figure of a page at its defaults, as plotly.js reads it (``{name: figure dict}``)."""
    view = next(v for v in VIEWS if v.page_id == page_id)
    return {name: fn(defaults(view.params), lang).to_dict() for name, fn in view.figures.items()}


def _text(title: object) -> str:
    return (title.get("text") if isinstance(title, dict) else title) or ""


def labels(fig: dict) -> list[str]:
    r"""Every label a reader sees without hovering: title, axis and colour-bar titles, legend names, annotations."""
    layout = fig.get("layout", {})
    found = [_text(layout.get("title"))]
    for name, part in layout.items():
        if re.fullmatch(r"[xy]axis\d*", name) and isinstance(part, dict):
            found.append(_text(part.get("title")))
        if name.startswith("coloraxis") and isinstance(part, dict):
            found.append(_text(part.get("colorbar", {}).get("title")))
    found += [note.get("text", "") for note in layout.get("annotations", [])]
    for trace in fig.get("data", []):
        found += [trace.get("name") or "", _text(trace.get("colorbar", {}).get("title"))]
    return [re.sub(r"<[^>]*>", " ", text) for text in found if text]


PAGE_LANGS = [(v.page_id, lang) for v in VIEWS for lang in LANGS]


def test_wrap_title_breaks_at_spaces_and_between_chinese_characters_never_inside_a_name_value_pair() -> None:
    assert wrap_title("Sinusoidal encoding, L = 128, d = 128, base = 10000") == (
        "Sinusoidal encoding, L = 128,<br>d = 128, base = 10000"
    )
    chinese_title = wrap_title("正弦位置编码，L = 128，d = 128，base = 10000")
    assert chinese_title == "正弦位置编码，L = 128，<br>d = 128，base = 10000"
    # one word too long for one line: two even lines, not a full one and a lone "0" (ALiBi's, before)
    assert wrap_title("Two ways to write the causal bias of head 0") == "Two ways to write the<br>causal bias of head 0"
    assert wrap_title("a<br>b") == "a<br>b"  # a break the title has is kept
    assert wrap_title("M<sub>k</sub> short") == "M<sub>k</sub> short"  # tags take no room
    chinese = wrap_title("一" * 30 + "。")
    assert all(not line.startswith("。") for line in chinese.split("<br>"))


def test_chinese_titles_break_after_punctuation_or_at_a_space_not_inside_a_phrase() -> None:
    # each was split mid-word before ("最小基<br>数", "图<br>像"): the break moves to the bracket, the colon, the space
    bound = "各上下文长度所需的最小基数（d = 64）与真实模型"
    assert wrap_title(bound) == "各上下文长度所需的最小基数<br>（d = 64）与真实模型"
    assert wrap_title("(t, h, w) 编号：文本 | 图像 3×4 | 视频 3×3×4 | 文本") == (
        "(t, h, w) 编号：文本 | 图像<br>3×4 | 视频 3×3×4 | 文本"
    )
    wrapped = wrap_title("按未缩放绘制：此预设缺少参数，所以这里画出的是没有缩放的频率，不是模型的")
    assert all(line[-1] in "：，" for line in wrapped.split("<br>")[:-1]), wrapped
    # a break inside a phrase stays where no punctuation or space leaves the line half full
    assert wrap_title("一" * 30) == "一" * 15 + "<br>" + "一" * 15


@given(st.lists(st.text("abcdefghij一二三", min_size=1, max_size=14), min_size=1, max_size=16))
def test_even_lines_are_as_few_and_no_wider_than_greedy_ones(words: list[str]) -> None:
    r"""Evening the lines out never adds a line, never widens the widest, and keeps every word whole."""
    title = " ".join(words)
    greedy, even = _wrap(_parts(title), TITLE_UNITS).split("<br>"), wrap_title(title).split("<br>")
    assert len(even) == len(greedy)
    assert max(map(line_units, even)) <= max(map(line_units, greedy))
    assert "".join(even).replace(" ", "") == title.replace(" ", "")


@pytest.mark.parametrize(("page_id", "lang"), PAGE_LANGS)
def test_every_figure_title_fits_a_phone_once_wrapped(page_id: str, lang: str) -> None:
    for name, fig in drawn(page_id, lang).items():
        for line in title_lines(_text(fig["layout"].get("title"))):
            assert line_units(line) <= TITLE_UNITS, f"{page_id}.{name}: {line!r} is wider than a phone"


@pytest.mark.parametrize(("page_id", "lang"), PAGE_LANGS)
def test_no_legend_hangs_a_fraction_of_the_plot_below_it(page_id: str, lang: str) -> None:
    r"""A legend placed at a negative paper y lands on the x-axis title once a phone shrinks the plot."""
    for name, fig in drawn(page_id, lang).items():
        legend = fig["layout"].get("legend", {})
        if legend.get("yref", "paper") == "paper" and "y" in legend:
            assert legend["y"] >= 0, f"{page_id}.{name}: legend at paper y = {legend['y']}"


@pytest.mark.parametrize("page_id", [v.page_id for v in VIEWS])
def test_chinese_figure_labels_hold_no_english_words(page_id: str) -> None:
    for name, fig in drawn(page_id, "zh").items():
        for label in labels(fig):
            words = {w.lower() for w in re.findall(r"(?<![\w_])[A-Za-z]+(?![\w_])", label)}
            assert not words & ENGLISH_WORDS, f"{page_id}.{name}: English {sorted(words & ENGLISH_WORDS)} in {label!r}"


def test_no_line_starts_with_closing_punctuation() -> None:
    r"""Neither in the words as written (a line break before "。") nor as a browser lays them out after inline maths
    (:func:`~posenc_ui.i18n.glue_punctuation` moves the punctuation inside the maths)."""
    starts = re.compile(rf"\n[ \t]*[{CLOSING_PUNCTUATION}]")
    unglued = re.compile(rf"\$[{re.escape(CLOSING_MARKS)}]")
    for key, text in catalogue("zh").items():
        assert not starts.search(text), f"{key}: a line starts with closing punctuation"
    for lang in LANGS:
        for key, text in catalogue(lang).items():
            assert not unglued.search(text), f"{key} ({lang}): inline maths then punctuation outside it"


def test_glue_punctuation_moves_the_punctuation_after_maths_inside_it_and_nothing_else() -> None:
    glued = r"对 $i\footnotesize\text，$以及 $j\footnotesize\text）\text；$完"
    assert glue_punctuation("对 $i$，以及 $j$）；完") == glued
    assert glue_punctuation("cost $5 and $6") == "cost $5 and $6"
    assert glue_punctuation("a, b.") == "a, b."
    assert glue_punctuation("at $r = -L$, and $n$.") == r"at $r = -L\footnotesize\text,$ and $n\footnotesize\text.$"
    assert glue_punctuation("$$x$$，") == "$$x$$，"  # display maths stands on its own line
    assert glue_punctuation(r"\$a$，") == r"\$a$，"  # an escaped dollar opens nothing
    assert glue_punctuation("$q$、$k$") == rf"$q\footnotesize\text、${WORD_JOINER}$k$"  # "$$" would open display maths
    # no braces are added for str.format to read
    assert glue_punctuation("距离 $r = {n}$，").format(n=3) == r"距离 $r = 3\footnotesize\text，$"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.view.page_id)
def test_every_page_lists_its_sources_with_a_link_or_an_arxiv_id(page: catalog.PageEntry) -> None:
    counts = {}
    for lang in LANGS:
        text = t(f"{page.view.page_id}.sources", lang)
        entries = [line[2:] for line in text.splitlines() if line.startswith("- ")]
        assert entries, f"{page.view.page_id} has no sources in {lang}"
        for entry in entries:
            assert LINK.search(entry) or ARXIV.search(entry), f"{page.view.page_id} ({lang}): {entry!r}"
        counts[lang] = len(entries)
    assert len(set(counts.values())) == 1, f"{page.view.page_id}: {counts} sources per language"
    assert 'page.text("sources")' in (catalog.ROOT / page.script).read_text(encoding="utf-8")
