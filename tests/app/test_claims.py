r"""Issue 35's sentences that rest on a named source rather than a number: each says who wrote what.

* ``relative.shaw_derive``: Shaw et al. motivate a^K, a^V as edge representations; the expand-then-replace derivation
  is Su Jianlin's reading (kexue.fm/archives/8130), cited as such and listed in the page's sources;
* ``rope.complex``: the column-vector identity :math:`R_m^\top R_n = R_{n-m}` is not attributed to the article that
  writes row vectors (``rope.errata_row`` corrects that article's sign), in both languages;
* ``sinusoidal.errata_expressive``: neither sinusoids nor RoPE dominate in the lab's committed runs.
"""

from __future__ import annotations

import math

import pytest

from posenc_ui.i18n import t

ROW_ARTICLE = "从零学习大模型--旋转位置编码"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shaw_derivation_is_attributed_to_su_and_shaw_to_edge_representations(lang: str) -> None:
    text = t("relative.shaw_derive", lang)
    assert "kexue.fm/archives/8130" in text and "苏剑林" in text
    assert ("edge representations" if lang == "en" else "边的表示") in text
    assert "kexue.fm/archives/8130" in t("relative.sources", lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rope_complex_and_errata_row_agree_on_the_row_vector_article(lang: str) -> None:
    complex_text, errata = t("rope.complex", lang), t("rope.errata_row", lang)
    identity = complex_text.index("R_m^\\top R_n = R_{n-m}")
    article = complex_text.index(ROW_ARTICLE)
    assert article > identity  # the article comes after the identity, not as its source …
    assert ("row vectors" if lang == "en" else "行向量") in complex_text[article - 40 : article + 80]  # … as row form
    assert ROW_ARTICLE in errata


def _reach(verdict) -> float:
    r"""How far past L a lab verdict holds: 0 not learned, 1 fails at 1–2·L, k for ◐ k·L, ∞ holds to the end."""
    return {"not_learned": 0.0, "fails": 1.0, "holds": math.inf}.get(verdict.state, float(verdict.until or 0))


def test_sinusoids_and_rope_each_hold_further_on_one_task() -> None:
    r"""``sinusoidal.errata_expressive``: in the lab neither dominates — sinusoids reach further on passkey retrieval,
    RoPE on copy ℓ = 8 (the committed runs, every seed, page 13's verdicts)."""
    from posenc_ui.lessons.compare.view import lab_verdicts

    sin, rope = lab_verdicts()["sinusoidal"], lab_verdicts()["rope"]
    assert _reach(sin["retrieval"]) > _reach(rope["retrieval"])
    assert _reach(rope["lag8"]) > _reach(sin["lag8"])


def test_t5_and_nope_recall_to_the_end_where_alibi_fails_past_eight_l() -> None:
    r"""``relative.bias_errata``: on passkey retrieval T5 and NoPE hold to 32·L on every seed, ALiBi fails past 8·L
    (the committed runs, page 13's verdicts)."""
    from posenc_ui.lessons.compare.view import lab_verdicts

    retrieval = {e: verdicts["retrieval"] for e, verdicts in lab_verdicts().items()}
    assert all(retrieval[e].state == "holds" and retrieval[e].until == 32 for e in ("t5", "none"))
    assert (retrieval["alibi"].state, retrieval["alibi"].until) == ("until", 8)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_relative_errata_names_only_encodings_the_lab_ran(lang: str) -> None:
    text = t("relative.bias_errata", lang)
    assert "T5" in text and "NoPE" in text and "32·L" in text and "8·L" in text
    assert "T5, relative," not in text  # the lab has no Shaw run to back such a claim
