"""Which scheme a PDE run uses, and its options, read once.

``method`` is a name of a scheme on the domain's grid (``domain.schemes``: the scheme classes of
:mod:`solvers` whose ``grid_type`` the grid is), a scheme class itself (in the manner of
``scipy.integrate.solve_ivp``), or "auto". "auto" asks the model and the domain:

* without noise (``model.concentrates(velocity)``) the density concentrates into Diracs — clusters of
  tokens, locked oscillators of a Kuramoto model — which no spectral grid can resolve: finite volume, which
  stays positive and converges in the grid, where the grid has it;
* with noise σ > 0 the density stays smooth (its narrowest feature is bounded below through σ), and so does
  the marginal of a frequency law averaged exactly by its Cauchy pole (a Lorentzian law with one-harmonic
  coupling, :class:`solvers.ConvolutionVelocity`): spectral, which converges spectrally and checks its own
  resolution every step;
* a grid with one scheme (a ZonalSphere: Gauss nodes or cells) takes that one.

The choice and its reason are recorded in the result (attrs ``method``, ``method_requested``,
``method_reason``). Options are the keywords of the scheme class's ``__init__`` (documented there),
refused by name when the scheme does not take them.
"""

from __future__ import annotations

import inspect
from typing import Any

from solvers import Scheme

__all__ = ["METHOD_AUTO", "choose_method", "scheme_options"]

METHOD_AUTO = "auto"
_NOT_OPTIONS = ("self", "grid", "velocity", "diffusion")


def choose_method(model: Any, domain: Any, method: str | type[Scheme], velocity: Any) -> tuple[type[Scheme], str]:
    """The scheme class of ``method`` on ``domain`` for the velocity specification ``velocity`` of ``model``, and
    the reason it runs.

    Raises
    ------
    ValueError
        A name the domain's grid has no scheme of, or a scheme class for another grid (the message lists the
        schemes of the grid and says which grid the others need).
    """
    schemes = domain.schemes
    if isinstance(method, type) and issubclass(method, Scheme):
        if not isinstance(domain.grid, method.grid_type):
            raise ValueError(f"method {method.__name__} discretises on a {method.grid_type.__name__}, but "
                             f"{domain!r} has a {type(domain.grid).__name__}; its schemes are {sorted(schemes)}")
        return method, f"given: {method.__name__}"
    if method != METHOD_AUTO:
        if method not in schemes:
            hint = domain.method_hint()
            raise ValueError(f"method must be 'auto' or one of {sorted(schemes)} on {domain!r}, got {method!r}"
                             + (f" ({hint})" if hint else ""))
        return schemes[method], f"given: {method!r}"
    if len(schemes) == 1:
        cls = next(iter(schemes.values()))
        hint = domain.method_hint()
        return cls, f"auto: the only scheme on {domain!r} ({hint})" if hint else f"auto: the only scheme on {domain!r}"
    if model.concentrates(velocity) and "finite_volume" in schemes:
        return schemes["finite_volume"], f"auto: {model.concentration_reason(velocity)}"
    if velocity.cauchy_drift:
        why = ("the density is the marginal over a Lorentzian frequency law, taken exactly at its pole, whose "
               "damping k*gamma of mode k keeps it smooth although each frequency's density concentrates")
    elif model.noise > 0:
        why = "with noise the density stays smooth"
    else:
        why = f"{model.name} says its density does not concentrate (concentrates() is False)"
    return schemes["spectral"], f"auto: {why}; the spectral scheme converges spectrally and checks its resolution every step"


def scheme_options(cls: type[Scheme], given: dict[str, Any]) -> dict[str, Any]:
    """Every option of the scheme ``cls`` with the value this run uses: ``given``, else the default.

    Raises
    ------
    ValueError
        An option the scheme does not take (named, with those it takes), or ``diffusion`` (the model's noise).
    """
    if "diffusion" in given:
        raise ValueError("diffusion is the model's noise σ: pass noise= to the model, not diffusion= to solve")
    params = inspect.signature(cls.__init__).parameters
    accepted = {name: p.default for name, p in params.items() if name not in _NOT_OPTIONS
                and p.kind is not inspect.Parameter.VAR_KEYWORD}
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        raise ValueError(f"method {cls.name!r} ({cls.__name__}) does not take the option(s) {unknown}; it "
                         f"accepts {sorted(accepted)} (see its docstring)")
    return {**accepted, **given}
