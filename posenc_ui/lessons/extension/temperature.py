r"""Page 7 (context extension): the attention temperature each method applies against the extension factor s, and
the live check that the chart's curves are the core's own attention factors. Recipes only: :mod:`.view` puts
them into the page's view.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import rope_frequencies, temperature_curves

from ...lesson import Check, Values, uses
from ...memo import memo
from ...presets import load_presets, training_length
from . import figures as figs

#: The s axis of the temperature chart: 1 … 128 on a log scale.
TEMPERATURE_FACTORS = np.geomspace(1.0, 128.0, 160)


@memo
def _temperature(length: int):
    deepseek = load_presets()["deepseek_v3"].config()["rope_scaling"]
    return temperature_curves(
        TEMPERATURE_FACTORS,
        original_max_position_embeddings=length,
        mscale=deepseek["mscale"],
        mscale_all_dim=deepseek["mscale_all_dim"],
    )


@uses("model", "factor")
def temperature_figure(v: Values, lang: str) -> go.Figure:
    curves = _temperature(training_length(load_presets()[v["model"]].config()))
    return figs.temperature(TEMPERATURE_FACTORS, curves._asdict(), current=v["factor"], lang=lang)


@uses("model", "factor")
def check_temperature(v: Values) -> Check:
    r"""The plotted curves at s equal the attention factors of the core's own YaRN and LongRoPE code paths."""
    length = training_length(load_presets()[v["model"]].config())
    s = float(v["factor"])
    curves = temperature_curves(np.array([s]), original_max_position_embeddings=length)
    ones = [1.0] * 32
    yarn = rope_frequencies(
        64, rope_scaling={"rope_type": "yarn", "factor": s, "original_max_position_embeddings": length}
    )
    longrope = rope_frequencies(
        64,
        rope_scaling={
            "rope_type": "longrope",
            "factor": s,
            "short_factor": ones,
            "long_factor": ones,
            "original_max_position_embeddings": length,
        },
    )
    residual = max(abs(curves.yarn[0] - yarn.attention_factor), abs(curves.longrope[0] - longrope.attention_factor))
    return Check(
        "extension.check_temperature",
        residual,
        tolerance=1e-12,
        fmt={
            "factor": v["factor"],
            "yarn": f"{yarn.attention_factor:.4f}",
            "longrope": f"{longrope.attention_factor:.4f}",
        },
    )


FIGURES = {"temperature": temperature_figure}
SWEEPS = {"temperature": "factor"}
CHECKS = {"temperature": check_temperature}
