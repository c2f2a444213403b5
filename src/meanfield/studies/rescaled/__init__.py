"""Paper 1's limit sets of the rescaled tokens z = e^{-tV} x: the hypotheses of Theorems 4.2 and 5.2 on
(Q, K, V), random instances, detectors of hyperplanes and of polytope × subspace, a classifier of the
limit set by the spectrum of V, and the rank of the attention matrix at the end of a run."""

from __future__ import annotations

from ._good_triples import TripleCheck, check_good_triple, check_mixed_triple, random_good_triple, random_mixed_triple
from ._hyperplanes import group_levels, hyperplanes, polytope_vertices
from ._limit_sets import limit_attention_rank, limit_set

__all__ = ["TripleCheck", "check_good_triple", "check_mixed_triple", "group_levels", "hyperplanes",
           "limit_attention_rank", "limit_set", "polytope_vertices", "random_good_triple", "random_mixed_triple"]
