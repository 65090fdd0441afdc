"""NumPy's functions added to complete the namespace: arrays generated
from indices (windows, ``i0``, ``geomspace``, ``tri``, ``fromfunction``,
``ix_``, bit packing), polynomial coefficient arithmetic, ``histogramdd``
and ``histogram2d`` stay lazy and equal NumPy's; the functions computed
in NumPy (set operations, roots and fits, file and text input) return
lazyfuse arrays of NumPy's values; questions answer as NumPy does."""

import numpy as np
import pytest

import lazyfuse as lf


def check(mine, theirs, **tolerance):
    assert isinstance(mine, lf.Array), type(mine)
    theirs = np.asarray(theirs)
    assert mine.shape == theirs.shape
    np.testing.assert_allclose(np.asarray(mine), theirs, **tolerance)


def test_generated_arrays_are_numpys_and_lazy(backend):
    before = lf.stats()["evaluations"]
    windows = {name: getattr(lf, name)(12) for name in ("bartlett", "blackman", "hamming",
                                                         "hanning")}
    kaiser = lf.kaiser(12, 14.0)
    assert lf.stats()["evaluations"] == before
    for name, window in windows.items():
        check(window, getattr(np, name)(12), atol=1e-15)
        for M in (0, 1, 2):
            check(getattr(lf, name)(M), getattr(np, name)(M), atol=1e-15)
    check(kaiser, np.kaiser(12, 14.0), rtol=1e-12)
    x = np.array([0.0, 0.5, 3.0, 8.0, 8.5, 20.0, -4.0, 700.0])
    check(lf.i0(x), np.i0(x), rtol=1e-13)
    check(lf.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4))
    check(lf.geomspace(-1, -1000, 5, endpoint=False), np.geomspace(-1, -1000, 5, endpoint=False))
    check(lf.tri(3, 4, 1), np.tri(3, 4, 1))
    check(lf.fromfunction(lambda i, j: i * 10 + j, (3, 4)),
          np.fromfunction(lambda i, j: i * 10 + j, (3, 4)))


def test_ix_indexes_cross_products():
    m = np.arange(20).reshape(4, 5)
    rows, cols = lf.ix_([0, 2], [1, 3])
    check(rows, np.ix_([0, 2], [1, 3])[0])
    check(lf.asarray(m)[lf.ix_([0, 2], [1, 3])], m[np.ix_([0, 2], [1, 3])])
    check(lf.ix_(np.array([True, False, True]))[0], np.ix_(np.array([True, False, True]))[0])
    with pytest.raises(ValueError, match="1 dimensional"):
        lf.ix_(np.zeros((2, 2), int))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_and_unpackbits_are_numpys(backend, axis, bitorder):
    bits = np.random.default_rng(0).integers(0, 2, (3, 11)).astype(np.uint8)
    check(lf.packbits(bits, axis=axis, bitorder=bitorder),
          np.packbits(bits, axis=axis, bitorder=bitorder))
    check(lf.packbits(bits.astype(bool), axis=axis, bitorder=bitorder),
          np.packbits(bits.astype(bool), axis=axis, bitorder=bitorder))
    packed = np.packbits(bits, axis=axis, bitorder=bitorder)
    for count in (None, 3, -3, 20):
        if axis is not None and count == 20:
            continue
        check(lf.unpackbits(packed, axis=axis, count=count, bitorder=bitorder),
              np.unpackbits(packed, axis=axis, count=count, bitorder=bitorder))
    with pytest.raises(TypeError):
        lf.unpackbits(np.zeros(3, np.int32))


def test_polynomial_coefficients():
    p, q = [1.0, 2.0, 3.0], [4.0, 5.0]
    for name in ("polyadd", "polysub", "polymul"):
        check(getattr(lf, name)(p, q), getattr(np, name)(p, q))
        check(getattr(lf, name)(q, p), getattr(np, name)(q, p))
    check(lf.polyder([1.0, 2.0, 3.0, 4.0], 2), np.polyder([1.0, 2.0, 3.0, 4.0], 2))
    check(lf.polyint([1.0, 2.0, 3.0]), np.polyint([1.0, 2.0, 3.0]))
    check(lf.polyint([1.0, 2.0, 3.0], 2, [1, 2]), np.polyint([1.0, 2.0, 3.0], 2, [1, 2]))
    check(lf.roots([1.0, -3.0, 2.0]), np.roots([1.0, -3.0, 2.0]))
    check(lf.polyfit(np.arange(5.0), np.arange(5.0) * 2 + 1, 1), [2.0, 1.0], atol=1e-12)
    quotient, remainder = lf.polydiv([1.0, -3.0, 2.0], [1.0, -1.0])
    check(quotient, [1.0, -2.0])
    check(remainder, [0.0], atol=1e-15)


def test_histogramdd_and_histogram2d_are_numpys(backend):
    rng = np.random.default_rng(0)
    x, y = rng.random(1000), rng.random(1000)
    mine, theirs = lf.histogram2d(x, y, bins=[5, 7]), np.histogram2d(x, y, bins=[5, 7])
    for m, t in zip(mine, theirs):
        check(m, t)
    options = dict(bins=4, density=True, range=[[0, 1], [0, 0.5]])
    check(lf.histogram2d(x, y, **options)[0], np.histogram2d(x, y, **options)[0])
    points, weights = rng.random((500, 3)), rng.random(500)
    bins = (2, [0, 0.3, 1], 4)
    counts, edges = lf.histogramdd(points, bins=bins, weights=weights)
    numpy_counts, numpy_edges = np.histogramdd(points, bins=bins, weights=weights)
    check(counts, numpy_counts)
    for m, t in zip(edges, numpy_edges):
        check(m, t)
    check(lf.histogramdd(points, bins=3, density=True)[0],
          np.histogramdd(points, bins=3, density=True)[0])
    check(lf.histogramdd(x, bins=5)[0], np.histogramdd(x, bins=5)[0])
    with pytest.raises(ValueError, match="dimension of bins"):
        lf.histogramdd(points, bins=[2, 3])


def test_trim_zeros_computes_its_ends_and_gives_a_lazy_view():
    z = np.array([0, 0, 1, 2, 0, 3, 0, 0])
    for trim in ("f", "b", "fb"):
        check(lf.trim_zeros(z, trim), np.trim_zeros(z, trim))
    grid = np.zeros((4, 5))
    grid[1, 2], grid[2, 3] = 1, 2
    check(lf.trim_zeros(grid), np.trim_zeros(grid))
    check(lf.trim_zeros(grid, axis=1), np.trim_zeros(grid, axis=1))
    assert lf.trim_zeros(np.zeros(3)).shape == (0,)
    with pytest.raises(ValueError, match="unexpected character"):
        lf.trim_zeros(z, "x")


def test_computed_functions_return_lazyfuse_arrays(tmp_path):
    check(lf.intersect1d([1, 2, 3], [2, 3, 4]), [2, 3])
    check(lf.union1d(lf.asarray([1, 5]), [2, 3]), [1, 2, 3, 5])
    check(lf.setdiff1d([1, 2, 3], [2]), [1, 3])
    check(lf.setxor1d([1, 2, 3], [2, 4]), [1, 3, 4])
    both, first, second = lf.intersect1d([1, 2, 3], [3, 1], return_indices=True)
    check(both, [1, 3])
    check(first, [0, 2])
    check(second, [1, 0])
    check(lf.apply_along_axis(np.sum, 1, lf.asarray(np.ones((2, 3)))), [3.0, 3.0])
    check(lf.fromiter(range(4), float), [0.0, 1.0, 2.0, 3.0])
    check(lf.frombuffer(np.arange(3.0).tobytes()), [0.0, 1.0, 2.0])
    path = tmp_path / "values.txt"
    np.savetxt(path, np.arange(6.0).reshape(2, 3))
    check(lf.loadtxt(path), np.arange(6.0).reshape(2, 3))
    lf.save(tmp_path / "x.npy", lf.arange(4))  # saves the computed values
    check(lf.load(tmp_path / "x.npy"), np.arange(4))
    assert lf.isscalar(3.0) and not lf.isscalar(lf.zeros(1))
    assert lf.iterable([1]) and lf.min_scalar_type(10) == np.uint8
    assert "1." in lf.array2string(lf.ones(2))
    check(lf.asfortranarray([1, 2]), [1, 2])
    assert lf.require(np.arange(3), np.float32).dtype == np.float32


@pytest.mark.parametrize("estimator", ["auto", "fd", "doane", "scott", "stone", "rice",
                                       "sturges", "sqrt"])
def test_histogram_bin_estimators_are_numpys(estimator):
    data = np.random.default_rng(2).standard_normal(2000)
    counts, edges = lf.histogram(lf.asarray(data), estimator)
    numpy_counts, numpy_edges = np.histogram(data, estimator)
    check(edges, numpy_edges)
    check(counts, numpy_counts)
    check(lf.histogram_bin_edges(data, estimator, range=(-1, 2)),
          np.histogram_bin_edges(data, estimator, range=(-1, 2)))
    with pytest.raises(TypeError, match="weighted"):
        lf.histogram(data, estimator, weights=np.ones(2000))
