"""Particle velocities and energy sums of self-attention.

Conventions (paper 2, arXiv:2312.10794, (SA), (USA) and (3.2); on S¹ in angles (7.1)): the weights
a_ij = e^{β(<x_i,x_j> - 1)} and the SA/USA rule of :mod:`meanfield.models._attention_weights`, for particles
x_i with weights w_i (Σ_i w_i = 1, w_i = 1/n by default):

    N_i = Σ_j w_j a_ij x_j,   D_i = Σ_j w_j a_ij,   SA: ẋ_i = P⊥_{x_i} N_i / D_i,   USA: ẋ_i = e^β P⊥_{x_i} N_i,

and USA in the rescaled time s = e^β t (``time="rescaled"``): dx_i/ds = P⊥_{x_i} N_i.

P⊥_x y = y - <x, y> x; on S¹, P⊥_{x_i} N_i is the angle rate Σ_j w_j a_ij sin(θ_j - θ_i).

Paths
-----
``direct``  O(n²) sums by BLAS (matmul of Gram blocks) with the exponent
            shifted by -β (e^{β(<x_i,x_j> - 1)} ≤ 1, no overflow); rows are
            processed in blocks so that at most ``block_elements`` Gram
            entries are alive at once (bounded memory for any n).
``nufft``   S¹ only. With h_β(u) = e^{β cos u} = Σ_k I_k(β) e^{iku},
            Σ_j w_j h_β'(θ_i-θ_j)/β = Σ_{|k|≤K} (ik I_k(β)/β) c_k e^{ikθ_i},
            c_k = Σ_j w_j e^{-ikθ_j}: one type-1 NUFFT (c_k) and one type-2
            NUFFT (values at θ_i) per evaluation, O(n + K log K). K is the
            smallest truncation whose dropped tail is below the requested
            accuracy (I_k(β) decays like (β/2)^k/k!).
"""

from __future__ import annotations

import logging

import finufft
import numpy as np
from scipy.special import ive

from ..domains._geometry import tangent_projection
from ._attention_weights import attention_velocity, check_unnormalized_beta, velocity_factor

__all__ = [
    "BLOCK_ELEMENTS",
    "DirectSelfAttention",
    "NufftSelfAttention",
    "NufftSums",
    "attention_sums",
    "blocks",
    "circle_attention_sums",
    "fourier_kernel_sums",
    "fourier_truncation",
]

logger = logging.getLogger(__name__)

BLOCK_ELEMENTS = 1 << 16  # 64 Ki float64 Gram entries = 512 KiB per block (cache-sized; fastest measured)
#: fewest rows per Gram block: above n = block_elements / MIN_BLOCK_ROWS particles a block holds
#: MIN_BLOCK_ROWS · n > block_elements entries (memory 8 · 64 · n bytes, e.g. 51 MB at n = 10⁵)
#: so that the Python loop over blocks has at most n / 64 iterations
MIN_BLOCK_ROWS = 64

def blocks(n_systems: int, n_rows: int, n_cols: int, block_elements: int):
    """Yield (system slice, row slice) covering all systems × rows in bounded blocks.

    A block holds at most max(block_elements, MIN_BLOCK_ROWS · n_cols) entries.
    """
    per_system = n_rows * n_cols
    if per_system <= block_elements:
        step = max(1, block_elements // per_system)
        for s0 in range(0, n_systems, step):
            yield slice(s0, min(n_systems, s0 + step)), slice(0, n_rows)
    else:
        rows = max(MIN_BLOCK_ROWS, block_elements // n_cols)
        for s in range(n_systems):
            for r0 in range(0, n_rows, rows):
                yield slice(s, s + 1), slice(r0, min(n_rows, r0 + rows))


def attention_sums(
    points: np.ndarray, weights: np.ndarray, beta: float, block_elements: int = BLOCK_ELEMENTS
) -> tuple[np.ndarray, np.ndarray]:
    """N_i = Σ_j w_j a_ij x_j and D_i = Σ_j w_j a_ij with a_ij = e^{β(<x_i,x_j>-1)}.

    The weights of :mod:`meanfield.models._attention_weights` with their exponent formed by BLAS as
    (β x_i)·x_j - β (one n² pass less than β(<x_i,x_j> - 1); equal to round-off). ``points``
    (systems, n, d), ``weights`` (systems, n). Returns N of shape (systems, n, d) and D of shape
    (systems, n). Memory: one Gram block of at most ``block_elements`` entries.
    """
    n_sys, n, d = points.shape
    num = np.empty_like(points)
    den = np.empty(points.shape[:2])
    scaled = beta * points
    basis = np.concatenate([weights[..., None] * points, weights[..., None]], axis=-1)  # (w x, w)
    for ss, rs in blocks(n_sys, n, n, block_elements):
        gram = np.matmul(scaled[ss, rs], np.swapaxes(points[ss], 1, 2))
        gram -= beta
        np.exp(gram, out=gram)
        sums = np.matmul(gram, basis[ss])
        num[ss, rs] = sums[..., :d]
        den[ss, rs] = sums[..., d]
    return num, den


def circle_attention_sums(
    theta: np.ndarray, weights: np.ndarray, beta: float, block_elements: int = BLOCK_ELEMENTS
) -> tuple[np.ndarray, np.ndarray]:
    """S_i = Σ_j w_j e^{β(cos(θ_j-θ_i)-1)} sin(θ_j-θ_i) and D_i = Σ_j w_j e^{β(cos(θ_j-θ_i)-1)}.

    ``theta`` and ``weights`` of shape (systems, n); cos(θ_j-θ_i) = c_i c_j + s_i s_j
    and sin(θ_j-θ_i) = c_i s_j - s_i c_j with c = cos θ, s = sin θ (no n² trigonometric
    calls): these are :func:`attention_sums` of the points (c, s) ∈ S¹, S_i = c_i N_i,2 - s_i N_i,1.
    """
    cos, sin = np.cos(theta), np.sin(theta)
    num, den = attention_sums(np.stack([cos, sin], axis=-1), weights, beta, block_elements)
    return cos * num[..., 1] - sin * num[..., 0], den


class _SelfAttentionVelocity:
    """Settings shared by the SA/USA velocities (``fourier_modes``: -1, no Fourier truncation).

    ``collapse_rate`` is :func:`meanfield.models._attention_weights.velocity_factor`, f = 1 (SA), e^β
    (USA in t) or 1 (USA in s = e^β t, ``time="rescaled"``): the factor of the unnormalized sums and the
    decay rate of the velocity's linearisation at a single cluster (all x_i equal: X_i ≈ f (x̄ - x_i),
    eigenvalue -f).
    """

    def __init__(self, beta: float, normalized: bool, time: str) -> None:
        check_unnormalized_beta(beta, normalized, time)
        self.beta = beta
        self.normalized = normalized
        self.collapse_rate = velocity_factor(beta, normalized, time)
        self.fourier_modes = -1


class DirectSelfAttention(_SelfAttentionVelocity):
    """SA/USA velocities by direct (blocked BLAS) summation on S¹ or S^{d-1}."""

    path = "direct"

    def __init__(self, beta: float, normalized: bool, weights: np.ndarray, angles: bool,
                 block_elements: int = BLOCK_ELEMENTS, *, time: str = "t") -> None:
        super().__init__(beta, normalized, time)
        self.weights = weights
        self.angles = angles
        self.block_elements = block_elements

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        if self.angles:
            rate, den = circle_attention_sums(x, self.weights, self.beta, self.block_elements)
            return attention_velocity.py_func(rate, den, self.normalized, self.collapse_rate)
        num, den = attention_sums(x, self.weights, self.beta, self.block_elements)
        return attention_velocity.py_func(tangent_projection(x, num), den[..., None], self.normalized,
                                          self.collapse_rate)


def fourier_truncation(beta: float, accuracy: float, k_max: int = 100_000) -> int:
    """Smallest K ≥ 1 with Σ_{k>K} 2 (k/β + 1) e^{-β} I_k(β) ≤ accuracy · e^{-β} I_0(β).

    The left side bounds the dropped tail of both Fourier series used by the
    NUFFT path (of h_β'/β and of h_β, scaled by e^{-β}); the right side is
    the size of the scaled kernel's mean, so ``accuracy`` is relative.
    """
    if beta == 0:
        return 1
    k = np.arange(1, int(min(k_max, beta + 40 + 20 * np.sqrt(beta + 1) * np.sqrt(max(1.0, -np.log10(accuracy))))))
    terms = 2 * (k / beta + 1) * ive(k, beta)
    tail = np.cumsum(terms[::-1])[::-1]  # tail[m] = Σ_{k ≥ m+1}
    ok = np.nonzero(tail <= accuracy * ive(0, beta))[0]
    if ok.size == 0:
        return int(k[-1])
    return max(1, int(ok[0]))  # tail beyond K = ok[0] (terms k ≥ ok[0]+1 dropped)


class NufftSums:
    """Real parts of Σ_{|k|≤K} c_{r,k} e^{ikθ_i} Σ_j w_j e^{-ikθ_j} for the rows r of ``coefficients``
    (rows, 2K + 1), per system: one type-1 NUFFT (the moments) and one type-2 NUFFT of ``rows`` transforms
    (the values at θ_i) with tolerance ``eps``, O(n + K log K). Plans (``finufft.Plan``) are built once per
    system with ``nthreads`` threads and reused (only ``setpts`` per evaluation)."""

    def __init__(self, coefficients: np.ndarray, weights: np.ndarray, eps: float, nthreads: int = 1) -> None:
        self.coefficients = np.ascontiguousarray(coefficients, dtype=complex)
        self.weights = np.ascontiguousarray(weights, dtype=complex)
        n_modes = self.coefficients.shape[1]
        n_sys = weights.shape[0]
        self._type1 = [finufft.Plan(1, (n_modes,), eps=eps, isign=-1, nthreads=nthreads) for _ in range(n_sys)]
        self._type2 = [finufft.Plan(2, (n_modes,), n_trans=self.coefficients.shape[0], eps=eps, isign=1,
                                    nthreads=nthreads) for _ in range(n_sys)]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The sums at the angles ``x`` (systems, n), shape (systems, rows, n)."""
        out = np.empty((x.shape[0], self.coefficients.shape[0], x.shape[1]))
        wrapped = np.remainder(x + np.pi, 2 * np.pi) - np.pi
        for s in range(x.shape[0]):
            pts = np.ascontiguousarray(wrapped[s])
            p1, p2 = self._type1[s], self._type2[s]
            p1.setpts(pts)
            c = p1.execute(self.weights[s])
            p2.setpts(pts)
            out[s] = p2.execute(np.ascontiguousarray(self.coefficients * c)).real
        return out


class NufftSelfAttention(_SelfAttentionVelocity):
    """SA/USA angle velocities on S¹ by a type-1 and a type-2 NUFFT per system (:class:`NufftSums`).

    ``accuracy`` is the relative accuracy requested for the kernel sums (Fourier truncation and NUFFT
    tolerance each get half). The Fourier coefficients are those of the shifted
    weights, e^{-β} I_k(β); the USA factor (e^β in t, 1 in s = e^β t) multiplies the
    coefficients of the numerator, so the SA/USA rule is applied in Fourier space.
    """

    path = "nufft"

    def __init__(self, beta: float, normalized: bool, weights: np.ndarray, accuracy: float,
                 nthreads: int = 1, *, time: str = "t") -> None:
        super().__init__(beta, normalized, time)
        self.fourier_modes = fourier_truncation(beta, accuracy / 2)
        kk = np.arange(-self.fourier_modes, self.fourier_modes + 1)
        ik = np.abs(kk)
        scaled = ive(ik, beta)  # e^{-β} I_k(β); [1, 0, 0, …] at β = 0
        # I_k(β)/β → 1/2 for k = 1 and 0 for k ≥ 2 as β → 0 (the k = 0 term is multiplied by k = 0)
        over_beta = scaled / beta if beta > 0 else np.where(ik == 1, 0.5, 0.0)
        deriv = 1j * kk * over_beta * self.collapse_rate
        coeffs = np.stack([deriv, scaled]).astype(complex) if normalized else deriv[None].astype(complex)
        self.sums = NufftSums(coeffs, weights, max(accuracy / 2, 1e-15), nthreads)

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        vals = self.sums(x)
        return vals[:, 0] / vals[:, 1] if self.normalized else vals[:, 0]


def fourier_kernel_sums(angles: np.ndarray, weights: np.ndarray, beta: float, accuracy: float) -> np.ndarray:
    r"""S_s = Σ_ij w_i w_j e^{β(cos(θ_i - θ_j) - 1)} per system by a type-1 NUFFT.

    With e^{β cos u} = Σ_k I_k(β) e^{iku} and c_k = Σ_j w_j e^{-ikθ_j},

        S = Σ_{|k|≤K} e^{-β} I_k(β) |c_k|²,

    K from :func:`fourier_truncation` (the truncation of the NUFFT
    velocity) at ``accuracy``/2. For weights w ≥ 0 every term is ≥ 0 and
    S ≥ e^{-β} I_0(β) (Σ w)², so the dropped tail is ≤ ``accuracy``/2 · S;
    the NUFFT tolerance ε = ``accuracy`` e^{-β} I_0(β) / 4 changes each |c_k|²
    by at most 2ε (Σ w)² and the sum (Σ_k e^{-β} I_k(β) = 1) by ≤ ``accuracy``/2 · S.
    Cost O(n + K log K) per system.

    Parameters
    ----------
    angles, weights : ndarray, shape (systems, n)
    beta : float, > 0
    accuracy : float, relative accuracy of S, in [1e-15, 1)

    Returns
    -------
    ndarray, shape (systems,)
    """
    half = fourier_truncation(beta, accuracy / 2)
    scaled = ive(np.abs(np.arange(-half, half + 1)), beta)
    eps = max(accuracy * scaled[half] / 4, 1e-15)
    angles = np.remainder(np.asarray(angles, dtype=float) + np.pi, 2 * np.pi) - np.pi
    strengths = np.asarray(weights, dtype=complex)
    out = np.empty(angles.shape[0])
    for s in range(angles.shape[0]):
        c = finufft.nufft1d1(np.ascontiguousarray(angles[s]), np.ascontiguousarray(strengths[s]), 2 * half + 1,
                             eps=eps, isign=-1)
        out[s] = float(np.dot(scaled, np.abs(c) ** 2))
    return out
