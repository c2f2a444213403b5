"""FFTW plans that compiled (numba) code executes: one plan per layout and thread, made once per process.

The plans are made through FFTW's C interface in the library pyfftw loaded (so
they share its wisdom, :func:`solvers._fft.wisdom_path`), on SIMD-aligned buffers
that belong to the plan, and a compiled loop executes them by passing
:data:`EXECUTE` (``fftw_execute``) and :attr:`RawPlan.pointer` as arguments:

    fftw_execute(plan)        the plan's own buffers, no Python in between.

A :class:`RawPlan` of the real transform of length n over a batch of ``rows``
sequences maps, with the normalisation of :mod:`solvers._fft` (unnormalised
both ways),

    forward:   coefficients[r, k] = Σ_j values[r, j] e^{-2πijk/n},   k = 0, …, n//2,
    backward:  values[r, j] = Σ_{|k| ≤ n/2} c_{r,k} e^{2πijk/n},      c_{r,-k} = conj(c_{r,k}),

and :func:`raw_plan` returns the one of the calling thread (its buffers are
scratch space: whoever fills them executes the plan before anyone else may),
building it on first use. Plans are made single-threaded, with ``FFTW_MEASURE``,
under the planner lock of :mod:`solvers._fft`. Where the library cannot be found
(pyfftw not importable, or a pyfftw built without a library file beside it),
:func:`available` is False and the schemes use :class:`solvers._fft.RealFFT`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import _fft

__all__ = ["EXECUTE", "RawPlan", "available", "raw_plan"]

logger = logging.getLogger(__name__)

_FFTW_MEASURE = 0
_FFTW_DESTROY_INPUT = 1
_INTS = ctypes.POINTER(ctypes.c_int)
_PLAN_MANY = [ctypes.c_int, _INTS, ctypes.c_int, ctypes.c_void_p, _INTS, ctypes.c_int, ctypes.c_int,
              ctypes.c_void_p, _INTS, ctypes.c_int, ctypes.c_int, ctypes.c_uint]


def _library_files(stem: str) -> list[Path]:
    """Candidate files of the FFTW library ``stem`` (e.g. ``fftw3``) that pyfftw links: the copies bundled
    with its wheel first, then the system's."""
    if _fft.pyfftw is None:
        return []
    package = Path(_fft.pyfftw.__file__).parent
    found = [p for folder in (package.parent / "pyfftw.libs", package / ".dylibs")
             for p in sorted(folder.glob(f"lib{stem}-*")) + sorted(folder.glob(f"lib{stem}.*"))]
    system = ctypes.util.find_library(stem)
    return found + ([Path(system)] if system else [])


def _load() -> tuple[ctypes.CDLL, object] | None:
    """The double-precision FFTW library with its planner functions typed, and ``fftw_execute``; None when
    not found. The threads library's ``fftw_plan_with_nthreads`` is bound when present (pyfftw sets the
    planner's thread count globally; these plans are made with one thread)."""
    for path in _library_files("fftw3"):
        try:
            lib = ctypes.CDLL(str(path))
            lib.fftw_plan_many_dft_r2c.restype = ctypes.c_void_p
            lib.fftw_plan_many_dft_c2r.restype = ctypes.c_void_p
        except (OSError, AttributeError):
            continue
        lib.fftw_plan_many_dft_r2c.argtypes = _PLAN_MANY
        lib.fftw_plan_many_dft_c2r.argtypes = _PLAN_MANY
        execute = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(("fftw_execute", lib))
        lib.nthreads = None
        for threads_path in _library_files("fftw3_omp") + _library_files("fftw3_threads"):
            try:
                lib.nthreads = ctypes.CDLL(str(threads_path)).fftw_plan_with_nthreads
                break
            except (OSError, AttributeError):
                continue
        logger.debug("compiled FFTs through %s", path)
        return lib, execute
    return None


_LOADED = _load()
EXECUTE = None if _LOADED is None else _LOADED[1]
"""``fftw_execute(plan)`` as a ctypes function, passed to compiled loops (None without the library)."""


def available() -> bool:
    """Whether compiled loops can execute FFTW plans in this process."""
    return _LOADED is not None


class RawPlan(NamedTuple):
    """One FFTW real transform on its own buffers (module docstring).

    Attributes
    ----------
    values : ndarray, shape (rows, n), float64
        Node values (input of ``forward``, output of ``backward``).
    coefficients : ndarray, shape (rows, n//2 + 1), complex128
        Fourier coefficients (output of ``forward``, input of ``backward``; destroyed by it).
    pointer : int
        The ``fftw_plan``, for ``fftw_execute``.
    """

    values: np.ndarray
    coefficients: np.ndarray
    pointer: int


_THREAD_PLANS = threading.local()
_OWNED: list[RawPlan] = []  # every plan made keeps its buffers alive for the life of the process


def raw_plan(n: int, rows: int, direction: str) -> RawPlan:
    """The calling thread's plan of the real ``direction`` ("forward" or "backward") transform of length
    ``n`` over ``rows`` sequences, made on first use (:func:`solvers._fft.plan_builds` counts it)."""
    plans = getattr(_THREAD_PLANS, "plans", None)
    if plans is None:
        plans = _THREAD_PLANS.plans = {}
    key = (int(n), int(rows), direction)
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = _make(*key)
    return plan


def _make(n: int, rows: int, direction: str) -> RawPlan:
    if _LOADED is None:
        raise RuntimeError("no FFTW library for compiled transforms (solvers._fftw_compiled.available() is False)")
    lib = _LOADED[0]
    values = _fft.pyfftw.empty_aligned((rows, n), dtype="float64")
    coefficients = _fft.pyfftw.empty_aligned((rows, n // 2 + 1), dtype="complex128")
    size = (ctypes.c_int * 1)(n)
    with _fft.planning(((rows, n), direction, 1)):
        if lib.nthreads is not None:
            lib.nthreads(1)
        if direction == "forward":
            pointer = lib.fftw_plan_many_dft_r2c(1, size, rows, values.ctypes.data, None, 1, n,
                                                 coefficients.ctypes.data, None, 1, n // 2 + 1, _FFTW_MEASURE)
        else:
            pointer = lib.fftw_plan_many_dft_c2r(1, size, rows, coefficients.ctypes.data, None, 1, n // 2 + 1,
                                                 values.ctypes.data, None, 1, n,
                                                 _FFTW_MEASURE | _FFTW_DESTROY_INPUT)
    if not pointer:
        raise RuntimeError(f"FFTW could not plan the {direction} real transform of length {n} over {rows} rows")
    values[...] = 0.0
    coefficients[...] = 0.0
    plan = RawPlan(values, coefficients, int(pointer))
    _OWNED.append(plan)
    return plan
