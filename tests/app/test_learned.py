r"""Page 4's trained-table section: the core measures against independent sums, the lab's committed tables, the page."""

from __future__ import annotations

import json
import math

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from drawn import sent_charts, shown_checks

from posenc_core import PosEncError, neighbour_cosine, random_cosine_band, row_distances, sinusoidal
from posenc_ui.figures.built import unwire
from posenc_ui.i18n import t
from posenc_ui.lessons.learned import figures as figs
from posenc_ui.lessons.learned.view import TRAINED_FILES, TWIN_FILE, VIEW, read_trained, trained_facts
from posenc_ui.state import defaults

SCRIPT = "pages/4_Learned_absolute.py"
DEFAULTS = defaults(VIEW.params)
NEW_FIGURES = ("trained_table", "trained_rows", "untouched")


# --- the core ------------------------------------------------------------------------------------------------------


def test_neighbour_cosine_matches_a_plain_loop() -> None:
    table = np.random.default_rng(1).normal(size=(40, 7)) * np.arange(1, 41)[:, None]  # rows of unequal length
    expected = [
        sum(a * b for a, b in zip(table[p], table[p + 1], strict=True))
        / math.sqrt(sum(a * a for a in table[p]) * sum(b * b for b in table[p + 1]))
        for p in range(len(table) - 1)
    ]
    np.testing.assert_allclose(neighbour_cosine(table), expected, rtol=1e-12, atol=1e-15)


def test_identical_and_opposite_rows_give_one_and_minus_one() -> None:
    row = np.random.default_rng(2).normal(size=16)
    np.testing.assert_allclose(neighbour_cosine(np.tile(row, (5, 1))), 1.0, atol=1e-15)
    np.testing.assert_allclose(neighbour_cosine(np.stack([row, -3 * row, row])), -1.0, atol=1e-15)


@pytest.mark.parametrize("dim", [16, 64, 256])
def test_random_rows_scatter_as_the_docstring_derives(dim: int) -> None:
    r"""Independent rows: mean 0, standard deviation 1/√d, about 95 % inside ±2/√d (20 000 pairs)."""
    cos = neighbour_cosine(np.random.default_rng(dim).normal(size=(20_001, dim)))
    band = random_cosine_band(dim)
    assert band == pytest.approx(2 / math.sqrt(dim))
    assert abs(np.mean(cos)) < 4 / math.sqrt(dim * cos.size)  # 4 standard errors of the mean
    assert np.std(cos) == pytest.approx(1 / math.sqrt(dim), rel=0.03)
    assert 0.94 < np.mean(np.abs(cos) <= band) < 0.97  # N(0, 1) gives 0.954; the Beta tails are a little lighter


def test_a_slow_sinusoid_table_is_smooth() -> None:
    assert np.min(neighbour_cosine(sinusoidal(64, 64)[:, 32:])) > 0.9  # the slower half of the frequencies


def test_row_distances_match_a_plain_loop_and_vanish_on_equal_rows() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(9, 5)), rng.normal(size=(9, 5))
    b[4:] = a[4:]
    expected = [math.sqrt(sum((x - y) ** 2 for x, y in zip(a[p], b[p], strict=True))) for p in range(9)]
    distance = row_distances(a, b)
    np.testing.assert_allclose(distance, expected, rtol=1e-12)
    assert np.all(distance[:4] > 0) and np.all(distance[4:] == 0)
    assert row_distances([[1e300, 0.0]], [[-1e300, 0.0]])[0] == pytest.approx(2e300)  # no overflow on the way


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: neighbour_cosine(np.ones((1, 4))), "at least 2 rows"),
        (lambda: neighbour_cosine([[1.0, 0.0], [0.0, 0.0]]), "row 1 .* all zeros"),
        (lambda: row_distances(np.ones((3, 2)), np.ones((2, 3))), "one shape"),
        (lambda: random_cosine_band(64, z=0), "z must be > 0"),
        (lambda: random_cosine_band(0), "dim"),
    ],
)
def test_bad_arguments_are_refused_with_a_sentence(call, match: str) -> None:
    with pytest.raises(PosEncError, match=match):
        call()


# --- the lab's committed tables ------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", sorted(TRAINED_FILES))
def test_committed_tables_are_4L_rows_of_d_model_and_lined_up_with_their_loss(model: str) -> None:
    results = json.loads(TRAINED_FILES[model].read_text(encoding="utf-8"))
    trained = read_trained(str(TRAINED_FILES[model]))
    length, d_model = results["config"]["train_length"], results["config"]["d_model"]
    assert trained.table.shape == (4 * length, d_model) and trained.train_length == length
    assert trained.trained == length - 1  # windows of L tokens, of which the model reads L − 1
    assert trained.loss[0] == results["runs"]["learned"]["loss"][0]  # predicting token 1 is done at row 0
    assert np.all(np.isfinite(trained.loss)) and not trained.table.flags.writeable


def test_the_twin_lag_models_share_every_untrained_row_and_no_trained_one() -> None:
    r"""Same seed, lag 2 and lag 8: the first untrained row is L − 1 (not L), bit for bit in the stored table."""
    lag2, lag8 = read_trained(str(TRAINED_FILES["lag"])), read_trained(str(TWIN_FILE))
    distance = row_distances(lag2.table, lag8.table)
    first = lag2.train_length - 1
    assert np.all(distance[first:] == 0) and np.all(distance[:first] > 0.1)
    check = VIEW.checks["untouched"](DEFAULTS)
    assert check.passed and check.residual == 0.0 and check.fmt["first"] == first


@pytest.mark.parametrize("model", sorted(TRAINED_FILES))
def test_neighbour_check_quotes_the_means_the_figure_shows(model: str) -> None:
    values = dict(DEFAULTS, model=model)
    trained = read_trained(str(TRAINED_FILES[model]))
    cos = np.asarray(
        VIEW.figures["trained_rows"](values, "en").data[0].y.tolist()
        + VIEW.figures["trained_rows"](values, "en").data[1].y.tolist()
    )
    np.testing.assert_allclose(cos, neighbour_cosine(trained.table), rtol=1e-12)
    inside, past = np.mean(cos[: trained.trained - 1]), np.mean(cos[trained.trained - 1 :])
    check = VIEW.checks["neighbours"](values)
    assert check.passed and check.tolerance == pytest.approx(0.25)
    assert check.fmt["inside"] == f"{inside:.2f}" and check.fmt["past"] == f"{past:.2f}"
    assert abs(past) < 0.25 and abs(inside) < 0.25  # the committed rows: both sides look random


# --- figures ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("model", sorted(TRAINED_FILES))
def test_new_figures_are_valid_plotly_with_the_wall_under_the_last_trained_row(model: str, lang: str) -> None:
    values = dict(DEFAULTS, model=model)
    first = read_trained(str(TRAINED_FILES[model])).trained
    for name in NEW_FIGURES:
        fig = VIEW.figures[name](values, lang)
        sent = json.loads(pio.to_json(fig, validate=False))
        assert json.loads(pio.to_json(go.Figure(unwire(fig.to_dict())), validate=False)) == sent, name
        walls = [s for s in fig.layout.shapes if s.type == "line"]
        assert [w.x0 if w.xref != "paper" else w.y0 for w in walls] == [first - 0.5], name
    band = next(s for s in VIEW.figures["trained_rows"](values, lang).layout.shapes if s.type == "rect")
    assert (band.y0, band.y1) == pytest.approx((-0.25, 0.25))


def test_trained_rows_builder_splits_pairs_at_the_first_untrained_row() -> None:
    fig = figs.trained_rows(np.zeros(9), np.arange(10), np.ones(10), 4, band=0.5, lang="en")
    cos_trained, cos_untouched, loss_trained, loss_untouched = fig.data
    assert list(cos_trained.x) == [0, 1, 2] and list(cos_untouched.x) == [3, 4, 5, 6, 7, 8]  # pair 3 holds row 4
    assert list(loss_trained.x) == [0, 1, 2, 3] and loss_untouched.x[0] == 4
    assert not loss_trained.showlegend and loss_trained.legendgroup == cos_trained.legendgroup


# --- the page ------------------------------------------------------------------------------------------------------


def _titles(at) -> list[str]:
    return [chart["figure"]["layout"]["title"]["text"] for chart in sent_charts(at)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_shows_the_trained_table_its_rows_and_both_checks(open_page, lang: str) -> None:
    at = open_page(SCRIPT, lang=lang)
    assert not at.exception
    assert len(sent_charts(at)) == len(VIEW.figures)
    titles = _titles(at)
    facts = trained_facts(DEFAULTS)
    model = t("learned.model.text", lang)
    assert t("learned.fig_trained", lang, model=model, rows=facts["rows"], dim=facts["dim"]) in titles
    assert t("learned.fig_trained_rows", lang) in titles and t("learned.fig_untouched", lang) in titles
    passed = [line for line in shown_checks(at) if line.startswith("✓")]
    neighbours, untouched = VIEW.checks["neighbours"](DEFAULTS), VIEW.checks["untouched"](DEFAULTS)
    for check in (neighbours, untouched):
        sentence = t(check.key, lang, residual=f"{check.residual:.1e}", **check.fmt)
        assert sum(sentence in box for box in passed) == 1, sentence  # inline once, not again in the explain panel
    assert not [box.value for box in at.error if box.value.startswith("✗")]
    text = " ".join(md.value for md in at.markdown)
    assert t("learned.trained", lang, **facts) in text and "neighbour_cosine" in text


def test_choosing_the_lag_model_redraws_the_section_from_its_table(open_page) -> None:
    at = open_page(SCRIPT, lang="en")
    at.segmented_control(key="learned.model").set_value("lag").run()
    assert not at.exception and at.query_params["model"] == "lag"
    assert t("learned.fig_trained", "en", model="copy 2 back", rows=128, dim=64) in _titles(at)
    check = VIEW.checks["neighbours"](dict(DEFAULTS, model="lag"))
    assert any(t(check.key, "en", residual="", **check.fmt) in box.value for box in at.success)


def test_a_deep_link_to_the_lag_model_opens_on_it(open_page) -> None:
    at = open_page(SCRIPT, lang="zh", params={"model": "lag"})
    assert not at.exception and at.segmented_control(key="learned.model").value == "lag"
