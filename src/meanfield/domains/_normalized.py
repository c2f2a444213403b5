r"""Token normalisations beyond the unit sphere: RMS norm with a diagonal gain, and the centred LayerNorm.

Paper 2 (arXiv:2312.10794), §2.2 and its footnote: practical Transformers normalise every token after a
layer, by RMS normalisation with a trained diagonal gain D (tokens on an axis-aligned ellipsoid) or by the
original LayerNorm (subtract the mean of the token's coordinates, divide by their standard deviation). The
papers take D = I, the unit sphere S^{d-1}. Both normalisations here are the image y = G x of a unit sphere
under a diagonal G = diag(g), g_k > 0:

* ``"rms"`` (gain D = diag(g)): y = D z/|z|. Convention: unit norm, as paper 2 writes it ("divides each token
  by its Euclidean norm and multiplies by a diagonal matrix"); the RMS norm of Zhang & Sennrich,
  D z/rms(z) with rms(z) = |z|/√d, is the gain √d·g. The tokens live on the ellipsoid

      E_D = {y : |D^{-1} y| = 1},  the image of S^{d-1} under x ↦ D x.

* ``"centred"`` (γ = 1, b = 0): y = LN(z) = (z - mean(z) 1)/std(z), std(z) = (Σ_k (z_k - mean z)²/d)^{1/2}
  (the population standard deviation, no ε), i.e. LN(z) = √d C z/|C z| with the centring C = I - 1 1ᵀ/d.
  The tokens live on the (d-2)-sphere of radius √d in the hyperplane {Σ_k y_k = 0}: G = √d I and the unit
  sphere is S^{d-1} ∩ 1^⊥. It needs d ≥ 3 (for d = 2 it is two points).

The layer map and its continuous limit
--------------------------------------
A discrete layer normalises the residual step, y_{k+1} = N(y_k + h w(y_k)), and for the map to be a
consistent step (the identity at h = 0) the normalisation must fix its own image. For "centred" it does:
LN(y) = y on the centred sphere, and N = LN. The gain of "rms" does not (y ↦ D y/|y| moves points of E_D
when D ≠ cI), so the consistent layer is the normalisation read in the coordinates x = D^{-1} y of the unit
sphere, then mapped through D:

    y_{k+1} = D (x_k + h v_k)/|x_k + h v_k|,  x_k = D^{-1} y_k,  v_k = D^{-1} w(y_k)
            = (y_k + h w)/|D^{-1}(y_k + h w)|,

the radial retraction of E_D. Its derivative at h = 0 (|D^{-1} y| = 1) is the velocity of the flow:

    d/dh (y + h w)/|D^{-1}(y + h w)| |_{h=0} = w - y <D^{-2} y, w> =: Π_y w,

so ẏ_i = Π_{y_i} w_i, with Π_y = I - y nᵀ, n = D^{-2} y the normal of E_D at y (<n, y> = 1): the
projection onto the tangent plane T_y E_D = n^⊥ *along the radial direction y*. It is oblique in the
Euclidean metric unless D = cI (then n ∥ y and Π_y = P⊥_y). Read in x = D^{-1} y it is the sphere's
projection: ẋ_i = P⊥_{x_i} D^{-1} w_i, the flow of the layers x_{k+1} = (x_k + h v_k)/|x_k + h v_k|.
For "centred" the same derivative gives, with ŷ = y/√d,

    d/dh LN(y + h w) |_{h=0} = C w - ŷ <ŷ, C w> =: Π_y w,

the orthogonal projection onto the tangent space of the centred sphere (orthogonal to 1 and to y).
Both layers are Π(y + h w) = flow + O(h²) per layer: order 1 in h, as on S^{d-1}.

The geometry
------------
:class:`NormalizedGeometry` carries these maps for the particle engine: ``layer`` (the normalised residual
step above), ``tangent`` (Π_y), and charts for Runge–Kutta methods in the coordinates x = G^{-1} y of the
unit sphere: exp_p(u) = G exp^S_{G^{-1} p}(G^{-1} u) (the sphere's exponential map carried by G; a great
sphere of S^{d-1} ∩ 1^⊥ stays in it), dexpinv likewise, so every stage is exactly on the manifold.
:class:`TokenNormalization` is the model's choice (kind and gain); it makes the geometry of tokens of
dimension d (``geometry(d)``) and is what a model hands the reader of particles as its ``particle_domain``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._geometry import SphereGeometry, TransportResult, _Components

__all__ = ["LAYER_NORMS", "NormalizedGeometry", "TokenNormalization"]

#: the normalisations, by name, in words (for a result's attrs)
LAYER_NORMS = {
    "rms": "RMS norm with gain D, unit-norm convention: y = D z/|z|; tokens on the ellipsoid |D^{-1} y| = 1",
    "centred": "LayerNorm y = (z - mean(z))/std(z), gamma = 1, b = 0; tokens on the sphere |y| = sqrt(d) in "
               "sum_k y_k = 0",
}


@dataclass(frozen=True, eq=False)
class NormalizedGeometry(_Components):
    r"""Tokens y = G x, G = diag(gains), x on the unit sphere S^{d-1} (``kind="rms"``: the ellipsoid
    |G^{-1} y| = 1) or on S^{d-1} ∩ 1^⊥ (``kind="centred"``, G = √d I: the centred sphere of radius √d).

    Maps (module docstring): ``layer(p, v, h)`` = G N(G^{-1}(p + h v)) with N(z) = z/|z| ("rms") or
    N(z) = C z/|C z| ("centred"); ``tangent(y, w)`` = Π_y w; ``exp`` and ``dexpinv`` those of the unit
    sphere carried by G.
    """

    dimension: int
    kind: str
    gains: np.ndarray
    atom_ndim: ClassVar[int] = 2
    unit_vectors: ClassVar[bool] = False
    transport_methods: ClassVar[tuple[str, ...]] = ()

    @property
    def name(self) -> str:
        """"ellipsoid" (RMS norm with gain) or "centred-sphere" (LayerNorm): a result's ``domain``."""
        return "ellipsoid" if self.kind == "rms" else "centred-sphere"

    @property
    def manifold(self) -> str:
        """The manifold and its distance function in words (for messages)."""
        if self.kind == "rms":
            return "the ellipsoid |D^{-1} y| = 1 of the gain: max | |D^{-1} y_i| - 1 |"
        return ("the centred sphere |y| = sqrt(d), sum_k y_k = 0: max of | |y_i|/sqrt(d) - 1 | and "
                "|sum_k y_ik|/d")

    def _unit(self, y: np.ndarray) -> np.ndarray:
        return y / self.gains

    def _sphere(self) -> SphereGeometry:
        return SphereGeometry(self.dimension)

    def _centre(self, x: np.ndarray) -> np.ndarray:
        """C x = x - mean(x) 1 for "centred" (removes round-off off the hyperplane), x itself for "rms"."""
        return x - np.mean(x, axis=-1, keepdims=True) if self.kind == "centred" else x

    def normalize(self, z: np.ndarray) -> np.ndarray:
        """G N(G^{-1} z): the normalisation of the layer (module docstring); D z/|z| for "rms" with D = I, the
        LayerNorm √d C z/|C z| for "centred"."""
        x = self._centre(self._unit(z))
        return x / np.linalg.norm(x, axis=-1, keepdims=True) * self.gains

    def layer(self, p: np.ndarray, v: np.ndarray, h: float) -> np.ndarray:
        """The layer map N(p + h v) of a velocity v at p (module docstring)."""
        return self.normalize(p + h * v)

    def tangent(self, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Π_y w: w - y <D^{-2} y, w> ("rms", oblique along y) or C w - ŷ <ŷ, C w>, ŷ = y/√d ("centred",
        orthogonal), along the last axis."""
        if self.kind == "rms":
            normal = y / self.gains**2
            return w - np.sum(normal * w, axis=-1, keepdims=True) * y
        cw = w - np.mean(w, axis=-1, keepdims=True)
        return cw - np.sum(y * cw, axis=-1, keepdims=True) * y / self.dimension

    def exp(self, p: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.gains * self._sphere().exp(self._unit(p), self._unit(u))

    def dexpinv(self, p: np.ndarray, u: np.ndarray, f: np.ndarray) -> np.ndarray:
        x = self._sphere().dexpinv(self._unit(p), self._unit(u), self._unit(f))
        return self.gains * self._centre(x)

    def deviation(self, y: np.ndarray) -> float:
        """Distance from the manifold: max_i | |G^{-1} y_i| - 1 |, for "centred" also max_i |Σ_k y_ik|/d
        (that of x = y/√d from the hyperplane, /√d); 0 for no points."""
        if not y.size:
            return 0.0
        x = self._unit(y)
        out = float(np.max(np.abs(np.linalg.norm(x, axis=-1) - 1.0)))
        if self.kind == "centred":
            out = max(out, float(np.max(np.abs(np.sum(y, axis=-1)))) / self.dimension)
        return out

    def wasserstein(self, xa: np.ndarray, wa: np.ndarray, xb: np.ndarray, wb: np.ndarray, p: float, method: str,
                    **options: Any) -> TransportResult:
        raise ValueError(f"Wasserstein distances of measures on the {self.name} are not available (the geodesic "
                         f"ones are on S^1 and S^(d-1))")


@dataclass(frozen=True, eq=False)
class TokenNormalization:
    """A model's token normalisation: ``kind`` ("rms" or "centred") and, for "rms", the diagonal ``gain`` g
    (None: D = I, the unit sphere). ``geometry(d)`` is the :class:`NormalizedGeometry` of tokens in R^d.

    Raises
    ------
    ValueError
        ``kind`` not "rms" or "centred"; ``gain`` with "centred" (γ = 1 there), or not a 1-D array of
        positive finite numbers.
    """

    kind: str
    gain: Any = None

    def __post_init__(self) -> None:
        if self.kind not in LAYER_NORMS:
            raise ValueError(f"layer_norm must be None or one of {sorted(LAYER_NORMS)}, got {self.kind!r}")
        if self.gain is None:
            return
        if self.kind != "rms":
            raise ValueError("gain is the diagonal D of layer_norm='rms'; the centred LayerNorm is taken with "
                             "gamma = 1, b = 0 (pass gain=None)")
        try:
            gain = np.array(self.gain, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"gain must be a 1-D array of positive finite numbers (the diagonal of D), got "
                             f"{self.gain!r}") from None
        if gain.ndim != 1 or gain.size == 0 or not np.all(np.isfinite(gain)) or not np.all(gain > 0):
            raise ValueError(f"gain must be a 1-D array of positive finite numbers (the diagonal of D), got "
                             f"{self.gain!r}")
        gain.setflags(write=False)
        object.__setattr__(self, "gain", gain)

    @property
    def name(self) -> str:
        """The ``domain`` of its tokens."""
        return "ellipsoid" if self.kind == "rms" else "centred-sphere"

    @property
    def scalar_gain(self) -> float | None:
        """g when G = g I (the "rms" gain cI, or √d of "centred" is not known without d): the "rms" case only;
        None for a gain whose entries differ."""
        if self.kind != "rms":
            return None
        if self.gain is None:
            return 1.0
        return float(self.gain[0]) if np.all(self.gain == self.gain[0]) else None

    def check_dimension(self, d: int) -> None:
        """Refuse a dimension d the normalisation does not fit (a gain of another length; "centred" with d < 3)."""
        if self.gain is not None and self.gain.size != d:
            raise ValueError(f"gain has {self.gain.size} entries but the tokens have dimension d = {d}")
        if self.kind == "centred" and d < 3:
            raise ValueError(f"layer_norm='centred' needs d >= 3 (the centred sphere of R^d is a (d-2)-sphere; at "
                             f"d = {d} it has no dimension to move in), got d = {d}")

    def geometry(self, d: int) -> NormalizedGeometry:
        """The geometry of tokens in R^d."""
        self.check_dimension(d)
        if self.kind == "centred":
            gains = np.full(d, np.sqrt(d))
        else:
            gains = np.ones(d) if self.gain is None else self.gain
        return NormalizedGeometry(d, self.kind, gains)

    def holds(self, geometry: Any) -> bool:
        """Whether ``geometry`` is the geometry of this normalisation."""
        return (isinstance(geometry, NormalizedGeometry) and geometry.kind == self.kind
                and np.array_equal(geometry.gains, self.geometry(geometry.dimension).gains))

    def onto(self, states: np.ndarray, name: str, tolerance: float, renormalize: bool) -> np.ndarray:
        """``states`` (systems, n, d) checked to lie on the manifold within ``tolerance`` (its ``deviation``), or
        normalised onto it with ``renormalize``; a ValueError naming ``name`` otherwise."""
        geometry = self.geometry(states.shape[-1])
        if renormalize:
            unit = geometry._centre(geometry._unit(states))
            if np.any(np.linalg.norm(unit, axis=-1) == 0):
                raise ValueError(f"{name} include a point that the {self.kind} normalisation cannot normalise "
                                 f"(zero, or a multiple of (1, ..., 1) for 'centred')")
            return geometry.normalize(states)
        deviation = geometry.deviation(states)
        if deviation <= tolerance:
            return states
        raise ValueError(f"{name} must lie on {geometry.manifold} = {deviation:.3g} exceeds sphere_tolerance = "
                         f"{tolerance:.3g}; normalise them or pass renormalize=True to project them")

    @property
    def attrs(self) -> dict[str, Any]:
        """``layer_norm`` and ``gain`` (the list, or "identity") for a result's attrs."""
        gain = "identity" if self.gain is None else repr(self.gain.tolist())
        return {"layer_norm": self.kind, "layer_norm_map": LAYER_NORMS[self.kind],
                "gain": gain if self.kind == "rms" else "none"}
