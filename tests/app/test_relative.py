r"""Page 5 (relative positions): figure builders, live checks and URL state, without a browser."""

from __future__ import annotations

import numpy as np
import plotly.io as pio
from drawn import shown_checks

from posenc_ui.lessons.relative import figures as figs
from posenc_ui.lessons.relative.view import VIEW, bias_matrix_figure, check_cross, shaw_index_figure, t5_matrix_figure
from posenc_ui.state import defaults

DEFAULTS = defaults(VIEW.params)


def test_shaw_index_runs_from_zero_to_2k_with_k_on_the_diagonal() -> None:
    fig = shaw_index_figure({**DEFAULTS, "query_length": 5, "key_length": 9, "max_relative": 2}, "en")
    z = np.asarray(fig.data[0].z)
    assert z.shape == (5, 9) and z.min() == 0 and z.max() == 4
    assert list(fig.data[0].y) == [4, 5, 6, 7, 8]  # queries are the last Lq positions
    assert z[0, 4] == 2  # query 4, key 4: offset 0 → index k
    assert fig.data[0].texttemplate  # small matrices are labelled


def test_bias_matrix_is_constant_along_diagonals() -> None:
    z = np.asarray(bias_matrix_figure({**DEFAULTS, "query_length": 6, "key_length": 6}, "zh").data[0].z)
    assert np.allclose(np.diag(z), z[0, 0]) and np.allclose(np.diag(z, 2), z[0, 2])


def test_t5_chart_marks_max_exact_and_max_distance() -> None:
    relative = np.arange(-40, 41)
    fig = figs.t5_buckets(
        relative,
        np.abs(relative),
        np.maximum(-relative, 0),
        max_exact_bidirectional=8,
        max_exact_causal=16,
        max_distance=32,
        lang="en",
    )
    xs = sorted(shape.x0 for shape in fig.layout.shapes)
    assert xs == [-32, -16, -8, 8, 32]
    assert any("max_exact = 8" in a.text for a in fig.layout.annotations)


def test_t5_matrix_is_sampled_to_screen_resolution_at_max_length() -> None:
    fig = t5_matrix_figure({**DEFAULTS, "t5_length": 512}, "en")
    assert np.asarray(fig.data[0].z).size <= 120_000
    assert len(pio.to_json(fig, validate=False)) < 1_000_000


def test_cross_check_claims_non_toeplitz_for_random_and_toeplitz_for_identity() -> None:
    random = check_cross({**DEFAULTS, "projection": "random"})
    identity = check_cross({**DEFAULTS, "projection": "identity"})
    assert random.passed and not random.expect_zero and random.residual > 0.1
    assert identity.passed and identity.expect_zero and identity.residual < 1e-9


def test_deep_link_restores_state_and_lq_follows_lk(open_page) -> None:
    params = {"key_length": "20", "query_length": "30", "max_relative": "5", "projection": "identity"}
    at = open_page("pages/5_Relative.py", lang="zh", params=params)
    assert not at.exception
    assert at.slider(key="relative.query_length").value == 20  # clamped to L_k, with a notice
    assert len(at.warning) == 1
    assert at.segmented_control(key="relative.projection").value == "identity"
    checks = [line for line in shown_checks(at) if line.startswith("✓")]
    assert len(checks) == 4  # Shaw's two forms, the Toeplitz bias, T5, the identity projection


def test_the_cross_term_check_holds_for_every_seed_the_slider_offers() -> None:
    r"""``relative.check_cross``: random projections leave S far from Toeplitz for every seed 0–20, at the smallest
    and largest widths and lengths (worst measured 1.37, at seed 12, L = 8, d = 8); the identity stays at rounding."""
    for seed in range(VIEW.param("seed").lo, VIEW.param("seed").hi + 1):
        for length in (8, 48, 256):
            for d_model in (4, 8, 32, 256):
                v = {**DEFAULTS, "seed": seed, "cross_length": length, "d_model": d_model}
                random, identity = (
                    check_cross({**v, "projection": "random"}),
                    check_cross({**v, "projection": "identity"}),
                )
                assert random.passed and random.residual > 0.5, (seed, length, d_model, random.residual)
                assert identity.passed and identity.residual < 1e-12
