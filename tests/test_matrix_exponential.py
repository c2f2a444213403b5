"""The matrix exponential of the rescaled attention dynamics against closed forms and scipy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from meanfield.models._matrix_exponential import matrix_exponential

EPS = np.finfo(float).eps


@pytest.mark.parametrize("angle", [0.0, 0.3, np.pi / 2, 3.0, 40.0])
def test_rotation_generator_gives_the_rotation(angle):
    # e^{θJ} = [[cos θ, -sin θ], [sin θ, cos θ]]; squarings multiply the round-off by about ‖θJ‖/θ₁₃
    generator = np.array([[0.0, -angle], [angle, 0.0]])
    exact = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    error = np.abs(matrix_exponential(generator) - exact).max()
    assert error <= 8 * EPS * max(1.0, angle), error


def test_nilpotent_and_diagonal_matrices():
    nilpotent = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [0.0, 0.0, 0.0]])
    exact = np.eye(3) + nilpotent + nilpotent @ nilpotent / 2  # N³ = 0
    np.testing.assert_allclose(matrix_exponential(nilpotent), exact, rtol=4 * EPS, atol=8 * EPS)
    diagonal = np.diag([-30.0, -1.0, 0.5, 12.0])
    # backward error ≤ ε‖A‖ per Padé step, doubled by each of the s = 3 squarings: relative error
    # ≤ 2^s ‖A‖₁ ε = 5.3e-14 on e^{-30} (measured 3.5e-14)
    np.testing.assert_allclose(matrix_exponential(diagonal), np.diag(np.exp(np.diag(diagonal))),
                               rtol=8 * 30 * EPS)
    np.testing.assert_allclose(matrix_exponential(np.zeros((2, 2))), np.eye(2), rtol=EPS, atol=EPS)  # LU of b₀ I


def test_agrees_with_scipy_on_random_non_normal_matrices(rng):
    # both are the [13/13] Padé approximant with scaling and squaring; they differ by round-off amplified
    # by the conditioning of e^A (measured ≤ 3e-14 relative in the norm for ‖A‖ up to 16·3)
    for d in (2, 3, 5, 10):
        for scale in (1e-3, 1.0, 16.0):
            a = scale * rng.standard_normal((d, d)) / np.sqrt(d)
            reference = scipy.linalg.expm(a)
            error = np.linalg.norm(matrix_exponential(a) - reference) / np.linalg.norm(reference)
            assert error < 1e-12, (d, scale, error)


def test_inverse_and_semigroup_identities(rng):
    a = rng.standard_normal((3, 3))
    np.testing.assert_allclose(matrix_exponential(a) @ matrix_exponential(-a), np.eye(3), atol=1e-13)
    np.testing.assert_allclose(matrix_exponential(2 * a), matrix_exponential(a) @ matrix_exponential(a),
                               rtol=1e-13, atol=1e-13)
