"""Graphs as a model's coupling: reading an adjacency once (scipy.sparse, dense, networkx, Graph), the
generators' exact structure, the normalised operator, and every bad input refused by name before any work."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import meanfield as mf
from meanfield.models._graph_generators import upper_pairs


def test_every_form_of_an_adjacency_reads_to_the_same_graph():
    dense = np.array([[0, 1, 0, 2], [1, 0, 1, 0], [0, 1, 0, 0], [2, 0, 0, 0]], dtype=float)
    forms = [dense, dense.tolist(), scipy.sparse.csr_matrix(dense), scipy.sparse.coo_array(dense),
             scipy.sparse.csc_matrix(dense), mf.Graph(dense)]
    graphs = [mf.Graph(form) for form in forms]
    assert all(g == graphs[0] for g in graphs)
    g = graphs[0]
    assert (g.n_nodes, g.n_entries, g.n_edges, g.n_loops) == (4, 6, 3, 0)
    assert g.symmetric and not g.signed
    np.testing.assert_array_equal(g.degrees, [3, 2, 1, 2])
    assert g.adjacency.has_sorted_indices and not g.adjacency.data.flags.writeable


def test_duplicate_sparse_entries_are_summed_and_zeros_dropped():
    coo = scipy.sparse.coo_array(([1.0, 2.0, 0.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
    g = mf.Graph(coo, signed=False)
    assert g.adjacency.toarray().tolist() == [[0, 3], [0, 0]]
    assert not g.symmetric and g.n_edges == 1


def test_networkx_graphs_convert_once_with_their_weights():
    networkx = pytest.importorskip("networkx")
    karate = networkx.karate_club_graph()
    g = mf.Graph(karate, normalization="degree")
    assert g.n_nodes == 34 and g.n_edges == karate.number_of_edges() and g.symmetric
    expected = networkx.to_numpy_array(karate, weight="weight")
    np.testing.assert_array_equal(g.adjacency.toarray(), expected)
    directed = networkx.DiGraph([(0, 1), (1, 2)])
    assert not mf.Graph(directed).symmetric
    assert mf.Kuramoto(1.0, graph=karate).graph == mf.Graph(karate)


def test_upper_pairs_enumerate_the_strict_upper_triangle_exactly():
    for n in (2, 3, 7, 50):
        rows, cols = np.triu_indices(n, 1)
        i, j = upper_pairs(n, np.arange(n * (n - 1) // 2))
        np.testing.assert_array_equal(i, rows)
        np.testing.assert_array_equal(j, cols)
    n = 100_000  # the largest linear indices, where the float square root of the inverse is closest to rounding
    k = n * (n - 1) // 2 - 1 - np.arange(1000)
    i, j = upper_pairs(n, k)
    np.testing.assert_array_equal(i * (2 * n - i - 1) // 2 + (j - i - 1), k)


def test_erdos_renyi_is_g_n_p():
    n, p = 400, 0.05
    counts = [mf.Graph.erdos_renyi(n, p, seed=s).n_edges for s in range(20)]
    pairs = n * (n - 1) // 2
    # the mean of 20 Binomial(pairs, p) counts: within 5 standard errors
    assert abs(np.mean(counts) - pairs * p) < 5 * np.sqrt(pairs * p * (1 - p) / 20)
    g = mf.Graph.erdos_renyi(n, p, seed=1)
    assert g.symmetric and g.n_loops == 0 and g.adjacency.max() == 1
    assert mf.Graph.erdos_renyi(n, p, seed=1) == g and mf.Graph.erdos_renyi(n, p, seed=2) != g
    directed = mf.Graph.erdos_renyi(n, p, seed=3, directed=True)
    assert not directed.symmetric and directed.n_loops == 0
    assert mf.Graph.erdos_renyi(10, 1.0, seed=0).n_edges == 45 and mf.Graph.erdos_renyi(10, 0.0, seed=0).n_edges == 0


def test_ring_lattice_causal_and_complete_have_their_exact_structure():
    ring = mf.Graph.ring(12, 3)
    np.testing.assert_array_equal(ring.degrees, 6)
    assert ring.adjacency[0, 3] == 1 and ring.adjacency[0, 9] == 1 and ring.adjacency[0, 4] == 0
    torus = mf.Graph.lattice((4, 5))
    np.testing.assert_array_equal(torus.degrees, 4)
    grid = mf.Graph.lattice((4, 5), periodic=False)
    assert grid.n_edges == 3 * 5 + 4 * 4 and grid.degrees.min() == 2
    causal = mf.Graph.causal(6)
    np.testing.assert_array_equal(causal.adjacency.toarray(), np.tril(np.ones((6, 6))))
    assert mf.Graph.complete(5).n_edges == 15 and mf.Graph.complete(5, loops=False).n_edges == 10


def test_small_world_keeps_the_edge_count_and_scale_free_grows_by_m():
    sw = mf.Graph.small_world(200, 3, 0.3, seed=4)
    assert sw.n_edges == 600 and sw.n_loops == 0 and sw.symmetric and sw.adjacency.max() == 1
    assert sw != mf.Graph.ring(200, 3)  # some edges were rewired
    assert mf.Graph.small_world(200, 3, 0.0, seed=4).adjacency.nnz == mf.Graph.ring(200, 3).adjacency.nnz
    sf = mf.Graph.scale_free(500, 3, seed=5)
    assert sf.n_edges == 3 + (500 - 4) * 3 and sf.degrees.min() >= 3 and sf.symmetric and sf.n_loops == 0
    assert sf.degrees.max() > 30  # hubs: preferential attachment, far above the mean degree ≈ 6


def test_operator_normalises_by_n_or_by_degree():
    g = mf.Graph.ring(10, 2)
    w = np.full(10, 0.1)
    np.testing.assert_allclose(g.operator(w).matrix.toarray(), g.adjacency.toarray() / 10, rtol=0, atol=0)
    by_degree = g.with_normalization("degree").operator(w)
    np.testing.assert_allclose(by_degree.row_sums, 1.0, rtol=1e-15)
    values = np.random.default_rng(0).standard_normal((3, 10)) + 1j
    np.testing.assert_allclose(by_degree(values), (by_degree.matrix @ values.T).T, rtol=1e-14)


def test_disjoint_union_is_block_diagonal():
    union = mf.Graph.disjoint_union(mf.Graph.complete(3), mf.Graph.ring(5))
    expected = scipy.sparse.block_diag([np.ones((3, 3)), mf.Graph.ring(5).adjacency]).toarray()
    np.testing.assert_array_equal(union.adjacency.toarray(), expected)


def test_attrs_describe_the_graph():
    attrs = mf.Graph.erdos_renyi(50, 0.2, seed=3, normalization="degree").attrs
    assert attrs["graph"] == "erdos-renyi(n=50, p=0.2, directed=0, seed=3)"
    assert attrs["graph_normalization"] == "degree" and attrs["graph_nodes"] == 50 and attrs["graph_symmetric"] == 1
    assert len(attrs["graph_sha1"]) == 40


@pytest.mark.parametrize("adjacency, error, match", [
    (np.ones((3, 4)), ValueError, r"graph must be a square adjacency matrix \(n, n\), got .*\(3, 4\)"),
    (np.ones(3), ValueError, r"graph must be a square adjacency matrix"),
    (np.array([[0, np.nan], [1, 0]]), ValueError, r"graph must have finite weights, got 1 non-finite entries \(first A\[0, 1\]"),
    (np.array([[0, -1.0], [-1, 0]]), ValueError, r"graph has 2 negative weights \(first A\[0, 1\] = -1\); pass signed=True"),
    (np.array([[0, 1j], [1j, 0]]), TypeError, r"graph must be an adjacency matrix of real weights"),
    ("ring", TypeError, r"graph must be an adjacency matrix"),
    (np.zeros((0, 0)), ValueError, r"at least one node"),
])
def test_bad_adjacency_is_refused_by_name(adjacency, error, match):
    with pytest.raises(error, match=match):
        mf.Graph(adjacency)


def test_isolated_nodes_under_degree_normalisation_are_named():
    a = np.zeros((5, 5))
    a[0, 1] = a[1, 0] = 1
    with pytest.raises(ValueError, match=r"isolated nodes \(no edge, degree 0\) 2, 3, 4: normalization='degree'"):
        mf.Graph(a, normalization="degree")
    assert mf.Graph(a).isolated.tolist() == [2, 3, 4]  # allowed with normalisation by n
    with pytest.raises(ValueError, match=r"normalization must be one of \('n', 'degree'\)"):
        mf.Graph(a, normalization="mean")
    assert mf.Graph(-a, signed=True).signed


def test_generators_refuse_impossible_sizes():
    with pytest.raises(ValueError, match=r"k must be at most \(n - 1\)/2 = 4"):
        mf.Graph.ring(9, 5)
    with pytest.raises(ValueError, match=r"p must be a probability in \[0, 1\], got 1.5"):
        mf.Graph.erdos_renyi(10, 1.5, seed=0)
    with pytest.raises(ValueError, match=r"m must be below n = 4"):
        mf.Graph.scale_free(4, 4, seed=0)
    with pytest.raises(ValueError, match=r"a periodic lattice needs at least 3 nodes along each axis"):
        mf.Graph.lattice((2, 5))
    with pytest.raises(TypeError, match=r"seed must be a non-negative integer"):
        mf.Graph.erdos_renyi(10, 0.5, seed=-1)


# ---------------------------------------------------------------- files, descriptions and the command line
def test_edge_lists_and_npz_files_read_to_the_same_graph(tmp_path):
    ring = mf.Graph.ring(6, 1)
    (tmp_path / "ring.txt").write_text("# a ring\n0 1\n1,2\n2\t3\n\n3 4 1.0\n4 5\n5 0  # closing edge\n")
    scipy.sparse.save_npz(tmp_path / "ring.npz", scipy.sparse.csr_matrix(ring.adjacency))
    assert mf.Graph.from_file(tmp_path / "ring.txt") == ring
    assert mf.Graph.from_file(tmp_path / "ring.npz") == ring
    directed = mf.Graph.from_file(tmp_path / "ring.txt", directed=True)
    assert not directed.symmetric and directed.adjacency[0, 1] == 1 and directed.adjacency[1, 0] == 0
    assert mf.Graph.from_file(tmp_path / "ring.txt", n=8).isolated.tolist() == [6, 7]


@pytest.mark.parametrize("text, match", [
    ("0 1 2 3\n", r"line 1: expected 'i j' or 'i j weight'"),
    ("0 a\n", r"line 1: node indices must be integers"),
    ("0 -1\n", r"line 1: node indices start at 0"),
    ("0 9\n", r"names node 9, beyond n = 4 nodes"),
])
def test_bad_graph_files_are_refused_by_line(tmp_path, text, match):
    (tmp_path / "bad.txt").write_text(text)
    with pytest.raises(ValueError, match=match):
        mf.Graph.from_file(tmp_path / "bad.txt", n=4)


def test_descriptions_name_the_generators():
    assert mf.Graph.from_spec("ring:k=2", 20) == mf.Graph.ring(20, 2)
    assert mf.Graph.from_spec("erdos-renyi:p=0.1", 50, seed=3) == mf.Graph.erdos_renyi(50, 0.1, seed=3)
    assert mf.Graph.from_spec("lattice:shape=4x5", 20) == mf.Graph.lattice((4, 5))
    assert mf.Graph.from_spec("small-world:k=2,p=0.1", 30, seed=1) == mf.Graph.small_world(30, 2, 0.1, seed=1)
    assert mf.Graph.from_spec("scale-free:m=2", 30, seed=1) == mf.Graph.scale_free(30, 2, seed=1)
    for spec, match in (("star", r"graph must be a file or one of"), ("erdos-renyi", r"needs \['p'\]"),
                        ("ring:q=1", r"takes \['k'\]"), ("lattice:shape=4x4", r"has 16 nodes, but there are n = 20"),
                        ("erdos-renyi:p=x", r"p must be a number")):
        with pytest.raises(ValueError, match=match):
            mf.Graph.from_spec(spec, 20)


def test_kuramoto_command_runs_on_a_graph(tmp_path, monkeypatch, no_figure_files, capsys):
    """A run on a graph records it and compares with the theory of its dense-graph limit where one exists."""
    from meanfield.cli import main

    monkeypatch.chdir(tmp_path)
    argv = ["kuramoto", "--graph", "erdos-renyi:p=0.2", "--normalization", "degree", "--particles", "100",
            "--coupling", "3", "--t-final", "4", "--average-window", "2"]
    assert main(argv) == 0
    out = tmp_path / "kuramoto_lorentzian0.6_particles_n100_graph-erdos-renyi-p0.2-degree_K3_seed0_t4.nc"
    import xarray as xr

    with xr.open_dataset(out) as ds:
        assert ds.attrs["graph"] == "erdos-renyi(n=100, p=0.2, directed=0, seed=0)"
        assert ds.attrs["graph_normalization"] == "degree" and float(ds.r_inf) > 0
    # normalised by the degree, G(n, p) approaches the all-to-all model with K itself: r∞ = √(1 - 2γ/K) = 0.7746
    assert "theory of the dense-graph limit (all-to-all, K_eff = 3) 0.7746, K_c = 1.2" in capsys.readouterr().out
    (tmp_path / "edges.txt").write_text("\n".join(f"{i} {(i + 1) % 10}" for i in range(10)))
    assert main(["kuramoto", "--graph", "edges.txt", "--particles", "10", "--t-final", "2",
                 "--average-window", "1"]) == 0
    assert "no self-consistency theory on this graph" in capsys.readouterr().out
    for argv, match in ((["--graph", "ring", "--couplings", "1,2"], "needs --engine particles"),
                        (["--normalization", "degree"], "--normalization goes with --graph"),
                        (["--graph", "ring:k=2", "--directed"], "--directed goes with --graph FILE"),
                        (["--graph", "missing.txt"], "graph file 'missing.txt' does not exist")):
        with pytest.raises(SystemExit):
            main(["kuramoto", *argv])
        assert match in capsys.readouterr().err
    assert not list(tmp_path.glob("*ring*"))  # nothing written on bad input


def test_figure_titles_name_the_graph():
    from meanfield.plot._checks import run_title

    graph = mf.Graph.ring(12, normalization="degree")
    run = mf.simulate(mf.Kuramoto(1.0, graph=graph), np.linspace(0, 1, 12), [0.0, 0.5])
    assert run_title(run).endswith("\non the graph ring(n=12, k=1), normalised by degree")
