"""An exponential for compiled loops that the compiler can vectorise.

numba calls the C library's scalar ``exp``, which keeps a loop over pair
kernels e^{β(<x_i,x_j> - 1)} scalar. :func:`exp_nonpositive` is written in
arithmetic only, so that LLVM vectorises such loops (SIMD lanes):

    e^x = 2^k e^r,   k = round(x / ln 2),   r = x - k ln 2 ∈ [-ln2/2, ln2/2],

with ln 2 split into a high part exact in the product k·ln2_hi and a low part
(Cody–Waite reduction), e^r by its Taylor polynomial of degree 13 (remainder
≤ (ln2/2)^14/14! < 4e-18, below half an ulp), and 2^k built from the bits of
the double (exponent field k + 1023). Arguments below -708 are taken as -708
(e^{-708} ≈ 3.3e-308: a term of a sum whose other terms are O(1) changes its
value by less than 1e-300); the function is meant for x ≤ 0 (the shifted
exponents β(<x_i,x_j> - 1) ≤ 0 of the attention kernels). Measured: relative
error ≤ 2.3e-16 against ``numpy.exp`` on [-700, 0].
"""

from __future__ import annotations

import math

import llvmlite.ir as ir
import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic

__all__ = ["exp_nonpositive", "LOWEST_ARGUMENT"]

#: arguments below this are clamped (2^k must stay a normal double)
LOWEST_ARGUMENT = -708.0
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 with its low 32 mantissa bits zero: k·_LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10  # ln 2 - _LN2_HI
(_C0, _C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13) = (
    1.0 / math.factorial(k) for k in range(14))


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
    p = _C13 * r + _C12
    p = p * r + _C11
    p = p * r + _C10
    p = p * r + _C9
    p = p * r + _C8
    p = p * r + _C7
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + _C1
    p = p * r + _C0
    return p * _float_from_bits((np.int64(k) + 1023) << 52)
