r"""Particle velocities and energies of the aggregation–diffusion model :class:`Interaction`.

For particles x_i with weights w_i (Σ w_i = 1), a kernel W = e^{s} W̃ and a potential U
(:mod:`._kernels`, :mod:`._potentials`):

    N_i = Σ_j w_j W̃'(<x_i, x_j>) x_j,     S_i = Σ_j w_j W̃'(<x_i, x_j>),
    unnormalised: ẋ_i = -e^{s} P⊥_{x_i} N_i - ∇_S U(x_i),
    normalised:   ẋ_i = -P⊥_{x_i} N_i / (σ_W S_i) - ∇_S U(x_i)      (σ_W = ±1 the sign of W' on [-1, 1]),

the particle form of X[μ] = -P⊥∇(W ⋆ μ) (divided by ∫|W'(<x, y>)| dμ(y) when normalised) - ∇_S U; on S¹ in
angles the rate θ̇_i is the component along e_θ = (-sin θ_i, cos θ_i). Energy:
E = (e^{s}/2) Σ_ij w_i w_j W̃(<x_i, x_j>) + Σ_i w_i U(x_i).

Paths
-----
``direct``   O(n²) blocked sums: one Gram block of at most ``block_elements`` entries, W̃' applied to it and
             one matrix product with (w x, w), as :func:`meanfield.models._self_attention_sums.attention_sums`.
             The Gram entries are clipped to [-1, 1] (<x, x> = 1 + 4e-16 would leave the domain of
             (1 - t)^p, √(1 - t), acos). A pair at |<x_i, x_j>| ≥ 1 - :data:`COINCIDENT` (a particle with
             itself, two particles within 4.5e-8 of each other or of antipodes) contributes nothing when W' is
             unbounded on [-1, 1] (|x - y|^s, s < 2; acos t): its P⊥ factor vanishes there, so the term is 0·∞
             in floating point but 0 in the limit.
``fourier``  S¹, kernels with finitely many harmonics (W(cos θ) = Σ_{|k|≤K} Ŵ_k e^{ikθ}): exact, O(nK), from
             the moments Z_k = Σ_j w_j e^{ikθ_j} (:class:`~meanfield.models._kuramoto_moments.KuramotoVelocity`
             with ĥ_k = ik Ŵ_k, since θ̇_i = Σ_j w_j h(θ_j - θ_i) for h(u) = d/du W(cos u)).
``nufft``    S¹, harmonics decaying: the sums truncated at the smallest K whose dropped multipliers are below
             ``accuracy``/2 of their total, by a type-1 and a type-2 NUFFT (:class:`NufftSums`).
"""

from __future__ import annotations

import logging

import numpy as np

from ._kernels import Kernel
from ._kuramoto_moments import KuramotoVelocity, fourier_moments
from ._potentials import Potential
from ._self_attention_sums import BLOCK_ELEMENTS, NufftSums, blocks

__all__ = ["COINCIDENT", "InteractionSums", "energy_sums", "fourier_truncation_of", "scaled_energy"]

logger = logging.getLogger(__name__)

#: pairs with <x_i, x_j> ≥ 1 - COINCIDENT count as coincident (module docstring)
COINCIDENT = 1e-15
#: the most harmonics the NUFFT path sums (the truncation is searched among the first 256, then the first 1024)
MAX_NUFFT_MODES = 1024


def _embed(x: np.ndarray, angles: bool) -> np.ndarray:
    return np.stack([np.cos(x), np.sin(x)], axis=-1) if angles else x


class InteractionSums:
    """ẋ (module docstring) by the path ``path`` ("direct", "fourier" or "nufft"), callable as X(t, x) on states
    (systems, n[, d]); attributes ``path``, ``collapse_rate`` (|W'(1)| e^{s}, or 1 normalised; 0 when W'(1)
    is unbounded) and ``fourier_modes`` (K of the Fourier paths, -1 otherwise)."""

    def __init__(self, kernel: Kernel, potential: Potential | None, normalized_sign: float | None,
                 weights: np.ndarray, angles: bool, path: str = "direct", accuracy: float = 1e-10,
                 block_elements: int = BLOCK_ELEMENTS) -> None:
        self.derivative = kernel.derivative_kernel()
        self.potential = potential
        self.sign = normalized_sign
        # e^{s'} of the sums of W̃' (direct path) and e^{s} of the harmonics of W̃ (Fourier paths), unnormalised
        self.factor = 1.0 if normalized_sign is not None else float(np.exp(self.derivative.log_scale))
        self.fourier_factor = 1.0 if normalized_sign is not None else float(np.exp(kernel.log_scale))
        self.weights, self.angles, self.block_elements = weights, angles, block_elements
        self.masks_coincident = not kernel.bounded_derivative
        self.path = path
        self.fourier_modes = -1
        if normalized_sign is not None:
            self.collapse_rate = 1.0
        else:  # |W'(1)| = e^{s'} |W̃'(1)|, 0 (unknown) when W' is unbounded at t = 1
            at_one = float(np.abs(self.derivative.scaled_value(np.ones(1)))[0]) if kernel.bounded_derivative else 0.0
            self.collapse_rate = self.factor * at_one
        if path == "fourier":
            self._fourier = self._moment_velocities(kernel)
        elif path == "nufft":
            self.fourier_modes = fourier_truncation_of(kernel, self.sign is not None, accuracy / 2)
            self._nufft = NufftSums(self._nufft_rows(kernel), weights, max(accuracy / 2, 1e-15))

    # ------------------------------------------------------------------ Fourier paths
    def _harmonics(self, kernel: Kernel, n_modes: int) -> tuple[np.ndarray, np.ndarray | None]:
        """ĥ_k = ik Ŵ_k e^{s} (unnormalised) or ik Ŵ_k/σ_W and the normaliser's ĝ_k = σ_W Ŵ'_k, k < n_modes,
        both in the scale of W̃ (Ŵ_k = λ_k/2π)."""
        k = np.arange(n_modes)
        values = kernel.multipliers(n_modes, 2).values / (2 * np.pi)
        if self.sign is None:
            return 1j * k * values * self.fourier_factor, None
        normaliser = self.derivative.multipliers(n_modes, 2)
        scale = np.exp(kernel.log_scale - normaliser.log_scale)
        return 1j * k * values * scale, self.sign * normaliser.values / (2 * np.pi)

    def _moment_velocities(self, kernel: Kernel) -> tuple[KuramotoVelocity, KuramotoVelocity | None]:
        numerator, denominator = self._harmonics(kernel, int(kernel.fourier_harmonics))
        zero = np.zeros(self.weights.shape)
        return (KuramotoVelocity(1.0, numerator, zero, self.weights),
                None if denominator is None else KuramotoVelocity(1.0, denominator.astype(complex), zero, self.weights))

    def _nufft_rows(self, kernel: Kernel) -> np.ndarray:
        """The rows c_k = ĥ_{-k}, k = -K, …, K, of :class:`NufftSums` (Σ_j w_j h(θ_j - θ_i) =
        Σ_k ĥ_{-k} e^{ikθ_i} Σ_j w_j e^{-ikθ_j}, ĥ_{-k} = conj ĥ_k for a real h)."""
        rows = [row for row in self._harmonics(kernel, self.fourier_modes + 1) if row is not None]
        return np.stack([np.concatenate([row[:0:-1], np.conj(row)]) for row in rows])

    # ------------------------------------------------------------------ evaluation
    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        if self.path == "fourier":
            numerator, denominator = self._fourier
            rate = numerator(t, x)
            field = rate if denominator is None else rate / denominator(t, x)
        elif self.path == "nufft":
            sums = self._nufft(x)
            field = sums[:, 0] if self.sign is None else sums[:, 0] / sums[:, 1]
        else:
            field = self._direct(x)
        if self.potential is not None:
            field = field - self._potential_rate(x)
        return field

    def _direct(self, x: np.ndarray) -> np.ndarray:
        points = _embed(x, self.angles)
        n_sys, n, d = points.shape
        num = np.empty_like(points)
        den = np.empty(points.shape[:2])
        basis = np.concatenate([self.weights[..., None] * points, self.weights[..., None]], axis=-1)
        for ss, rs in blocks(n_sys, n, n, self.block_elements):
            gram = np.matmul(points[ss, rs], np.swapaxes(points[ss], 1, 2))
            np.clip(gram, -1.0, 1.0, out=gram)  # <x, x> = 1 + 4e-16 would leave the domain of (1 - t)^p, sqrt, acos
            if self.masks_coincident:  # W' is infinite (or ∞ - ∞) at coincident pairs, which are dropped
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    slope = np.where(np.abs(gram) >= 1.0 - COINCIDENT, 0.0, self.derivative.scaled_value(gram))
            else:
                slope = self.derivative.scaled_value(gram)
            sums = np.matmul(slope, basis[ss])
            num[ss, rs] = sums[..., :d]
            den[ss, rs] = sums[..., d]
        if self.angles:  # the e_θ component of -P⊥ N
            field = -(points[..., 0] * num[..., 1] - points[..., 1] * num[..., 0])
        else:
            field = -(num - np.sum(num * points, axis=-1, keepdims=True) * points)
            den = den[..., None]
        return field * self.factor if self.sign is None else field / (self.sign * den)

    def _potential_rate(self, x: np.ndarray) -> np.ndarray:
        """∇_S U at the particles (its e_θ component on S¹)."""
        points = _embed(x, self.angles)
        gradient = self.potential.surface_gradient(points)
        if self.angles:
            return points[..., 0] * gradient[..., 1] - points[..., 1] * gradient[..., 0]
        return gradient


def fourier_truncation_of(kernel: Kernel, normalized: bool, accuracy: float) -> int:
    """Smallest K with Σ_{k>K} k|Ŵ_k| ≤ ``accuracy`` Σ_k k|Ŵ_k| (and the same for the normaliser's Ŵ'_k when
    ``normalized``), searched among the first 256 harmonics, then among the first :data:`MAX_NUFFT_MODES`.

    Raises
    ------
    ValueError
        The harmonics do not decay that far by :data:`MAX_NUFFT_MODES` (a kernel like |x - y|^s, whose
        velocity harmonics k Ŵ_k ~ k^{-s} are not summable for s ≤ 1): use path="direct".
    """
    for size in (257, MAX_NUFFT_MODES + 1):
        k = np.arange(size)
        rows = [k * np.abs(kernel.multipliers(size, 2).values)]
        if normalized:
            rows.append(np.abs(kernel.derivative_kernel().multipliers(size, 2).values))
        found = [_truncation(row, accuracy) for row in rows]
        if all(value is not None for value in found):
            return max(1, *found)
    raise ValueError(f"the kernel's harmonics do not decay to {accuracy:g} of their sum within {MAX_NUFFT_MODES} "
                     f"modes, so path='nufft' cannot truncate them; use path='direct'")


def _truncation(row: np.ndarray, accuracy: float) -> int | None:
    """Smallest K < len(row) - 1 with Σ_{k>K} row_k ≤ accuracy Σ row (checked against the last quarter too)."""
    total = row.sum()
    if total == 0:
        return 1
    tail = np.cumsum(row[::-1])[::-1]  # tail[m] = Σ_{k ≥ m}
    ok = np.nonzero(tail[1:] <= accuracy * total)[0]
    if ok.size == 0 or ok[0] > 3 * row.size // 4:
        return None
    return int(ok[0])


def interaction_energy_sums(kernel: Kernel, potential: Potential | None, points: np.ndarray, weights: np.ndarray,
                            block_elements: int = BLOCK_ELEMENTS) -> np.ndarray:
    """E = (e^{s}/2) Σ_ij w_i w_j W̃(<x_i, x_j>) + Σ_i w_i U(x_i) per system of ``points`` (systems, n, d), in
    blocks of at most ``block_elements`` Gram entries."""
    n_sys, n, _ = points.shape
    total = np.zeros(n_sys)
    for ss, rs in blocks(n_sys, n, n, block_elements):
        gram = np.clip(np.matmul(points[ss, rs], np.swapaxes(points[ss], 1, 2)), -1.0, 1.0)
        total[ss] += np.einsum("sij,si,sj->s", kernel.scaled_value(gram), weights[ss, rs], weights[ss])
    energy = scaled_energy(kernel.log_scale, 0.5 * total)
    if potential is not None:
        energy = energy + np.sum(weights * potential.values(points), axis=-1)
    return energy


def scaled_energy(log_scale: float, scaled: np.ndarray) -> np.ndarray:
    """e^{s} · ``scaled``, formed as sign · exp(s + log|scaled|) where e^{s} overflows (s > 709.78): ±inf, with a
    logged warning, for an energy beyond the largest double."""
    scaled = np.asarray(scaled, dtype=float)
    if log_scale <= np.log(np.finfo(float).max):
        return np.exp(log_scale) * scaled
    with np.errstate(over="ignore", divide="ignore"):
        out = np.sign(scaled) * np.exp(log_scale + np.log(np.abs(scaled)))
    if not np.all(np.isfinite(out)):
        logger.warning("the energy of a kernel of scale e^%g exceeds the largest double: returned as ±inf", log_scale)
    return out


def fourier_energy_sums(kernel: Kernel, potential: Potential | None, angles: np.ndarray,
                        weights: np.ndarray) -> np.ndarray:
    """The energy of angles (systems, n) for a kernel of finitely many harmonics: (e^{s}/2) Σ_{|k|≤K} Ŵ_k |Z_k|²
    + Σ_i w_i U(θ_i), O(nK)."""
    harmonics = int(kernel.fourier_harmonics)
    values = kernel.multipliers(harmonics, 2).values / (2 * np.pi)
    total = values[0] * np.sum(weights, axis=-1) ** 2
    for k, _, moment in fourier_moments(angles, weights, harmonics - 1):
        total = total + 2 * values[k] * np.abs(moment) ** 2
    energy = scaled_energy(kernel.log_scale, 0.5 * total)
    if potential is not None:
        energy = energy + np.sum(weights * potential.values(_embed(angles, True)), axis=-1)
    return energy


def energy_sums(kernel: Kernel, potential: Potential | None, states: np.ndarray, weights: np.ndarray,
                angles: bool) -> np.ndarray:
    """The energy of every system: the moments for a kernel of few harmonics on S¹, else the blocked sums."""
    if angles and kernel.fourier_harmonics is not None and kernel.fourier_harmonics <= 64:
        return fourier_energy_sums(kernel, potential, states, weights)
    return interaction_energy_sums(kernel, potential, _embed(states, angles), weights)

