r"""RoPE as a positional number system, and what each extension does to its "digits" (Su 2023).

Su Jianlin, 「Transformer升级之路：10、RoPE是一种β进制编码」 (科学空间 kexue.fm, 2023): position n written in base β
has digits :math:`\lfloor n/\beta^i \rfloor \bmod \beta`. RoPE with base b turns pair i at
:math:`\theta_i = b^{-2i/d} = \beta^{-i}` with :math:`\beta = b^{2/d}`: the angle :math:`n\beta^{-i}` is digit i made
continuous (mod 2π instead of mod β). To count s times further without adding digits:

* **PI** divides every digit's speed by s (:math:`\theta'_i = \theta_i/s`), so the fast digits, which tell
  neighbouring tokens apart, are crowded too;
* **NTK-aware** enlarges the base, :math:`b' = b\,s^{d/(d-2)}`: pair i is divided by :math:`s^{2i/(d-2)}`
  (:func:`ntk_divisors`), 1 for the fastest digit and exactly s for the slowest.

:func:`frequency_divisors` reads the division factor :math:`\theta_i/\theta'_i` off any method's frequencies.
"""

from __future__ import annotations

import numpy as np

from ..errors import as_float, as_int
from ..rope import MAX_ROTARY_DIM
from .formulas import MAX_FACTOR
from .pairs import check_scaled_inv_freq

__all__ = ["frequency_divisors", "ntk_divisors"]


def ntk_divisors(dim: int, *, factor: float) -> np.ndarray:
    r"""The (d/2,) factors by which NTK-aware scaling divides each frequency: :math:`\theta_i/\theta'_i = s^{2i/(d-2)}`.

    From :math:`b' = b\,s^{d/(d-2)}`: :math:`\theta'_i = b'^{-2i/d} = \theta_i\,s^{-2i/(d-2)}`, so pair 0 is divided by
    1 and the last pair, i = d/2 − 1, by exactly s. Paper: bloc97 2023, "NTK-Aware Scaled RoPE"; Peng et al. 2023,
    arXiv:2309.00071, §3.1; Su 2023, 「RoPE是一种β进制编码」.
    """
    dim = as_int("dim", dim, lo=4, hi=MAX_ROTARY_DIM, even=True)
    factor = as_float("factor", factor, ge=1.0, le=MAX_FACTOR)
    i = np.arange(dim // 2, dtype=np.float64)  # (d/2,)
    return factor ** (2.0 * i / (dim - 2))


def frequency_divisors(inv_freq: object, scaled_inv_freq: object) -> np.ndarray:
    r"""Per pair, the factor a method divides the frequency by: :math:`\theta_i/\theta'_i` (shape (d/2,)).

    PI gives s for every pair, NTK-aware :math:`s^{2i/(d-2)}`, YaRN 1 for the kept pairs, s for the interpolated ones
    and :math:`1/((1-\gamma)/s + \gamma)` in between (Peng et al. 2023, arXiv:2309.00071, eq. (18)).
    """
    theta, scaled = check_scaled_inv_freq(inv_freq, scaled_inv_freq)
    return theta / scaled
