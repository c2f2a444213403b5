"""Optimal transport algorithms on arrays: exact W₁ and W_p between weighted angles on S¹ (and on an
interval), exact and sliced W_p between weighted unit vectors on S^{d-1}. The distance between measures,
:func:`meanfield.wasserstein`, asks the space of the measures (:mod:`meanfield.domains._geometry`), which
calls these."""

from __future__ import annotations

from ._circle import circle_w1, circle_w1_cells, circle_wp, interval_wp
from ._sphere import sphere_emd, sphere_sliced

__all__ = ["circle_w1", "circle_w1_cells", "circle_wp", "interval_wp", "sphere_emd", "sphere_sliced"]
