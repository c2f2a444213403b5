"""Exponential, sine and cosine for compiled loops that the compiler can vectorise.

numba calls the C library's scalar ``exp``, ``sin`` and ``cos``, which keeps a
loop over pair kernels e^{β(<x_i,x_j> - 1)} or over angles scalar. These
functions are written in arithmetic only, so that LLVM vectorises such loops
(SIMD lanes).

:func:`exp_nonpositive`:

    e^x = 2^k e^r,   k = round(x / ln 2),   r = x - k ln 2 ∈ [-ln2/2, ln2/2],

with ln 2 split into a high part exact in the product k·ln2_hi and a low part
(Cody–Waite reduction), e^r by its Taylor polynomial of degree 13 (remainder
≤ (ln2/2)^14/14! < 4e-18, below half an ulp), and 2^k built from the bits of
the double (exponent field k + 1023). Arguments below -708 are taken as -708
(e^{-708} ≈ 3.3e-308: a term of a sum whose other terms are O(1) changes its
value by less than 1e-300); the function is meant for x ≤ 0 (the shifted
exponents β(<x_i,x_j> - 1) ≤ 0 of the attention kernels). Measured: relative
error ≤ 2.3e-16 against ``numpy.exp`` on [-700, 0].

:func:`sincos`: x = k π/2 + r, |r| ≤ π/4, with π/2 in three pieces of 33
significant bits (Cody–Waite; k·piece is exact for |k| < 2^20, i.e. |x| < 1.6e6),
sin r and cos r by their Taylor polynomials to degree 17 and 18 (remainders
< 5e-17), and the quadrant k mod 4 chosen by selects. Measured: absolute error
≤ 2.3e-16 against ``numpy.sin``/``numpy.cos`` for |x| ≤ 1e6, and below half an
ulp of x (the uncertainty of the angle itself) up to 1e9.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir
import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic

__all__ = ["LOOP_FASTMATH", "LOWEST_ARGUMENT", "cos_sin", "exp_nonpositive", "sincos"]

#: the fastmath flags of the compiled loops: "reassoc" lets LLVM vectorise row sums (and "contract" use
#: FMA); the rounding of a result then depends on the compiled loop only, never on other systems of a
#: batch, so batches stay bit-identical
LOOP_FASTMATH = {"reassoc", "contract"}

#: arguments below this are clamped (2^k must stay a normal double)
LOWEST_ARGUMENT = -708.0
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 with its low 32 mantissa bits zero: k·_LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10  # ln 2 - _LN2_HI
_C13 = 1.0 / math.factorial(13)
_EXP_HORNER = tuple(1.0 / math.factorial(k) for k in range(12, -1, -1))  # 1/12!, ..., 1/0!
_TWO_OVER_PI = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e00  # π/2 in three pieces of 33 significant bits
_PIO2_2 = 6.07710050630396597660e-11
_PIO2_3 = 2.02226624871116645580e-21
(_S1, _S3, _S5, _S7, _S9, _S11, _S13, _S15, _S17) = ((-1) ** k / math.factorial(2 * k + 1) for k in range(9))
(_K0, _K2, _K4, _K6, _K8, _K10, _K12, _K14, _K16, _K18) = ((-1) ** k / math.factorial(2 * k) for k in range(10))


@intrinsic
def _float_from_bits(typingctx, bits):
    """The double whose IEEE-754 bit pattern is the int64 ``bits``."""
    if bits != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@numba.njit(cache=True, inline="always", fastmath={"contract"})
def exp_nonpositive(x: float) -> float:
    """e^x for x ≤ 0 (x < -708 is taken as -708), to ≤ 2.3e-16 relative error; vectorisable."""
    x = max(x, LOWEST_ARGUMENT)
    k = np.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = _C13
    for coefficient in _EXP_HORNER:
        p = p * r + coefficient
    return p * _float_from_bits((np.int64(k) + 1023) << 52)


@numba.njit(cache=True, inline="always", fastmath={"contract"})
def sincos(x: float) -> tuple[float, float]:
    """(sin x, cos x) to ≤ 2.3e-16 absolute error for |x| ≤ 1e6; vectorisable."""
    k = np.floor(x * _TWO_OVER_PI + 0.5)
    r = ((x - k * _PIO2_1) - k * _PIO2_2) - k * _PIO2_3
    z = r * r
    s = _S15 + z * _S17
    for coefficient in (_S13, _S11, _S9, _S7, _S5, _S3, _S1):
        s = coefficient + z * s
    s *= r
    c = _K16 + z * _K18
    for coefficient in (_K14, _K12, _K10, _K8, _K6, _K4, _K2, _K0):
        c = coefficient + z * c
    quadrant = np.int64(k) & 3
    sine = s if quadrant == 0 else (c if quadrant == 1 else (-s if quadrant == 2 else -c))
    cosine = c if quadrant == 0 else (-s if quadrant == 1 else (-c if quadrant == 2 else s))
    return sine, cosine


@numba.njit(cache=True, inline="always")
def cos_sin(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cos θ_i), (sin θ_i) of the angles x[:, 0] (inlined: compiled with the caller's flags)."""
    n = x.shape[0]
    cs = np.empty(n)
    sn = np.empty(n)
    for i in range(n):
        sn[i], cs[i] = sincos(x[i, 0])
    return cs, sn
