r"""Page 11 — position inside a real language model, on the reader's own text.

SmolLM2-135M-Instruct (Allal et al. 2025, arXiv:2502.02737; Apache-2.0): a Llama decoder of 30 layers trained with
RoPE (θ = 100,000, 8,192 positions). The page runs the instruct checkpoint as the package index carries it, its
weights stored in 4 bits (Q4_1) and dequantized to float32 by transformers' GGUF reader, through transformers' own
Llama code (:mod:`posenc_real`). No forward pass of our own: positions are moved with ``position_ids``.

One module per section, each declaring its ``PARAMS``, ``FIGURES``, ``CHECKS``, ``SWEEPS`` (the slider an exported
figure keeps) and ``STATIC`` (why the others export still: each is forwards of the model); this view collects them.
The text box and the model are shared (:mod:`.model`), the shipped passage's results are :mod:`.shipped`'s, and the
first load's progress message is :mod:`.runner`'s.
"""

from __future__ import annotations

from posenc_real import forward, load_model

from ...lesson import Explain, PageEntry, View
from . import beyond, distance, frequencies, relativity, rescaling, sinks
from .model import PassageParam
from .shipped import DEFAULT_TEXT

SECTIONS = (relativity, distance, sinks, frequencies, rescaling, beyond)
PARAMS = (PassageParam("text", DEFAULT_TEXT), *(param for section in SECTIONS for param in section.PARAMS))

VIEW = View(
    page_id="real",
    params=PARAMS,
    figures={name: fn for section in SECTIONS for name, fn in section.FIGURES.items()},
    sweeps={name: param for section in SECTIONS for name, param in section.SWEEPS.items()},
    static={name: why for section in SECTIONS for name, why in section.STATIC.items()},
    checks={name: fn for section in SECTIONS for name, fn in section.CHECKS.items()},
    explain=Explain(
        latex=(
            r"q_m^\top k_n \;\to\; (R_{m}q)^\top (R_{n}k) = q^\top R_{n-m}\, k, \qquad "
            r"R_{p}\ \text{rotates pair } i \text{ by } p\,\theta_i,\ \theta_i = 100000^{-2i/64}",
            r"(m+\Delta) - (n+\Delta) = m - n",
            r"\mathrm{fl}_{32}(p\,\theta_i) = p\,\theta_i\,(1+\epsilon),\quad |\epsilon| \le 2^{-24}",
            r"\mathcal{L} = -\frac{1}{L-1}\sum_{t=1}^{L-1} \log p(x_{t+1}\mid x_{\le t})",
            r"\mathrm{mass}_h(d) = \frac{1}{L-1}\sum_{i=d+1}^{L-1} A_{h,i,i-d}, \qquad "
            r"\mathrm{uniform}(d) = \frac{1}{L-1}\sum_{i=d+1}^{L-1} \frac{1}{i+1}",
            r"\mathrm{first}_h = \frac{1}{L-1}\sum_{i=1}^{L-1} A_{h,i,0}",
            r"\text{cache at step } t:\ [x_0,\dots,x_{S-1},\, x_{t-W+1},\dots,x_t] \text{ at positions } 0,\dots,S+W-1",
            r"\bar n^{(l)}_i = \operatorname{mean}_{t,h} \sqrt{q_{t,h,i}^2 + q_{t,h,i+32}^2}, \qquad "
            r"\lambda_i = 2\pi/\theta_i",
            r"\text{stopped: } \theta_i \to 0 \ \Rightarrow\ \cos = 1,\ \sin = 0 \text{ for pair } i",
            r"\text{base}\times k:\ \theta_i = (k b)^{-2i/d};\quad \text{PI}:\ \theta_i/k;\quad "
            r"\text{YaRN}:\ \theta_i\big(1-\gamma_i + \gamma_i/k\big),\ \cos,\sin \times (0.1\ln k + 1)",
            r"d_b = \mathcal{L}_b^{\text{rescaled}} - \mathcal{L}_b^{\text{as trained}}, \quad "
            r"\text{shift} = \bar d_{\,b<L} - \bar d_{\,b \ge L} \ \text{ against } \ "
            r"2\, s_{b<L} \sqrt{1/n_{<L} + 1/n_{\ge L}}",
        ),
        sources=(load_model, forward, *(fn for section in SECTIONS for fn in section.SOURCES)),
        paper="Su et al. 2021 (RoPE), arXiv:2104.09864, §3.4; Allal et al. 2025 (SmolLM2), arXiv:2502.02737; "
        "Barbero et al. 2024, arXiv:2410.06205, §5–6; Chen et al. 2023 (PI), arXiv:2306.15595; "
        "Peng et al. 2023 (YaRN), arXiv:2309.00071; "
        "Xiao et al. 2023 (StreamingLLM, attention sinks), arXiv:2309.17453, §3; "
        "transformers 5.23, models/llama/modeling_llama.py (LlamaRotaryEmbedding, apply_rotary_pos_emb) and "
        "modeling_rope_utils.py (ROPE_INIT_FUNCTIONS)",
    ),
)

PAGE = PageEntry("pages/11_Real_model.py", VIEW, preview="shift", runs_model=True)
