"""Argument checks of the schemes.

Every check names the argument, the value given and what is allowed, and
distinguishes the two kinds of mistake:

* ``TypeError`` — the value is not of an admissible type (a string, None or
  a bool where a real number is needed; a float where an integer is needed;
  multipliers that are not numeric arrays);
* ``ValueError`` — the type is right but the value is not (NaN, infinity,
  out of range, wrong shape, complex multipliers where real ones are needed).

Real numbers are Python ints and floats and NumPy integer and floating
scalars (``numbers.Real``); bools are refused.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence

import numpy as np

from ._velocity import ConvolutionVelocity

__all__ = [
    "real_number",
    "positive",
    "nonnegative",
    "positive_int",
    "boolean",
    "choice",
    "multipliers",
    "instance",
    "sphere_velocity",
    "velocity_multipliers",
    "velocity_potential",
]


def real_number(name: str, value: object) -> float:
    """``value`` as a float; ``TypeError`` unless it is a real number (not a bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return float(value)


def positive(name: str, value: object) -> float:
    """``value`` as a float, required finite and > 0."""
    out = real_number(name, value)
    if not (np.isfinite(out) and out > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return out


def nonnegative(name: str, value: object) -> float:
    """``value`` as a float, required finite and ≥ 0."""
    out = real_number(name, value)
    if not (np.isfinite(out) and out >= 0):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return out


def positive_int(name: str, value: object) -> int:
    """``value`` as an int, required an integer ≥ 1 (Python or NumPy integer, not a bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def boolean(name: str, value: object) -> bool:
    """``value`` as a bool, required True or False (Python or NumPy bool)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """``value``, required one of the strings ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        options = " or ".join(repr(a) for a in allowed) if len(allowed) == 2 else f"one of {list(allowed)!r}"
        raise ValueError(f"{name} must be {options}, got {value!r}")
    return value


def multipliers(
    func: Callable[[np.ndarray], np.ndarray],
    index: np.ndarray,
    name: str,
    *,
    real: bool,
    index_name: str = "wavenumbers",
) -> np.ndarray:
    """Evaluate kernel multipliers ``func(index)`` and check them.

    Parameters
    ----------
    func : callable
        Integer wavenumbers k ≥ 0 (or degrees l ≥ 0) ↦ multipliers.
    index : ndarray of int
        Where to evaluate, e.g. k = 0, …, N/2 or l = 0, …, lmax.
    name : str
        Name of the argument in messages, e.g. ``"velocity.numerator"``.
    real : bool
        Require real multipliers: Funk–Hecke coefficients of zonal kernels on
        spheres are real, whereas the S¹ numerators carry the ik of a
        derivative. Complex values with a zero imaginary part are accepted.
    index_name : str
        What ``index`` is, for messages ("wavenumbers", "degrees").

    Returns
    -------
    ndarray
        float (``real``) or complex array of ``index.shape``.

    Raises
    ------
    TypeError
        The values are not numeric.
    ValueError
        Wrong shape, NaN/infinity, or (``real``) a nonzero imaginary part.
    """
    index = np.asarray(index)
    span = f"{index_name} {index.min()}..{index.max()}" if index.size else f"no {index_name}"
    values = np.asarray(func(index))
    if values.dtype.kind not in "biufc":
        raise TypeError(f"{name} must return numeric multipliers for {span}, got dtype {values.dtype}")
    if values.shape != index.shape:
        raise ValueError(
            f"{name} must return finite multipliers of shape {index.shape} for {span}, got shape {values.shape}"
        )
    if not np.all(np.isfinite(values)):
        raise ValueError(
            f"{name} must return finite multipliers of shape {index.shape} for {span}, got NaN or infinity"
        )
    if not real:
        return values.astype(complex)
    if values.dtype.kind == "c":
        imag = float(np.max(np.abs(values.imag), initial=0.0))
        if imag != 0:
            raise ValueError(
                f"{name} must return real multipliers (Funk–Hecke coefficients) for {span}, got complex values "
                f"with max |Im| = {imag:.3g} (multipliers of the circle, with the ik of a derivative?)"
            )
    return values.real.astype(float)


def instance(
    name: str,
    value: object,
    types: type | tuple[type, ...],
    what: str | None = None,
    *,
    error: type[Exception] = TypeError,
) -> object:
    """``value``, required an instance of ``types``.

    Otherwise raises ``error`` (``TypeError``; the zonal schemes raise
    ``ValueError`` for a grid of the other kind) "``name`` must be ``what``,
    got <type>", ``what`` by default "a T" or "a T or U" from the class names.
    """
    if not isinstance(value, types):
        if what is None:
            classes = types if isinstance(types, tuple) else (types,)
            what = "a " + " or ".join(cls.__name__ for cls in classes)
        raise error(f"{name} must be {what}, got {type(value).__name__}")
    return value


def sphere_velocity(velocity: object, *, one_species: bool = False) -> ConvolutionVelocity:
    """``velocity`` for a scheme on a sphere: a :class:`ConvolutionVelocity` with zero drift.

    On S^{d-1} the velocity X = ∇(A ⋆ ρ̄)/(B ⋆ ρ̄) has no natural
    frequencies (ω ≡ 0); ``one_species`` further requires m = 1 (the S²
    schemes).

    Raises
    ------
    TypeError
        ``velocity`` is not a ConvolutionVelocity.
    ValueError
        More than one species (``one_species``) or a non-zero drift.
    """
    instance("velocity", velocity, ConvolutionVelocity, "a ConvolutionVelocity (Funk–Hecke multipliers)")
    if one_species and velocity.n_species != 1:
        raise ValueError(f"velocity must describe one species on S², got {velocity.n_species}")
    if np.any(velocity.drift != 0):
        raise ValueError(f"velocity.drift must be zero on spheres, got {velocity.drift!r}")
    return velocity


def velocity_multipliers(
    velocity: ConvolutionVelocity,
    index: np.ndarray,
    *,
    real: bool,
    index_name: str = "wavenumbers",
) -> tuple[np.ndarray, np.ndarray | None]:
    """Checked multipliers (a_k, b_k) of ``velocity``'s numerator and denominator at ``index``.

    :func:`multipliers` of ``velocity.numerator`` and, unless it is None,
    ``velocity.denominator`` (None is returned for B ⋆ ρ̄ ≡ 1); ``real`` and
    ``index_name`` as there: complex on S¹ (wavenumbers), real Funk–Hecke
    coefficients on spheres (``real=True, index_name="degrees"``).
    """
    numerator = multipliers(velocity.numerator, index, "velocity.numerator", real=real, index_name=index_name)
    if velocity.denominator is None:
        return numerator, None
    return numerator, multipliers(velocity.denominator, index, "velocity.denominator", real=real, index_name=index_name)


def velocity_potential(velocity: ConvolutionVelocity, shape: tuple[int, ...], where: str) -> np.ndarray | None:
    """``velocity.potential`` (U on the grid), checked to have the grid's ``shape`` (``where`` names the grid's
    values: node values or cell averages); None for U ≡ 0."""
    potential = velocity.potential
    if potential is not None and potential.shape != tuple(shape):
        raise ValueError(f"velocity.potential must hold {where} of shape {tuple(shape)}, got shape {potential.shape}")
    return potential
