"""NumPy's rearranging, repeating, splitting and statistics functions
(``flip``…``argwhere`` in `_arrangements`, ``ptp``…``logspace`` in
`_statistics`) against NumPy: values, shapes and dtypes, through
``lazyfuse.f`` and through NumPy's own ``np.f`` on lazy arrays, on cpu and
sim."""

import warnings

import numpy as np
import pytest

import lazyfuse as lf
from numpy_versions import numpy_function

RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 4, 5))
I = RNG.integers(-5, 10, (4, 6)).astype(np.int32)
F = RNG.standard_normal((5, 6)).astype(np.float32)
V, W = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 3))
XN = X.copy()
XN[0, 1, :] = np.nan  # a slice of NaNs only
XN[1, :, 2] = np.nan
XN[2, 3, 4] = np.nan
FN = F.copy()
FN[::2, 1] = np.nan
WN = RNG.random(XN.shape)  # quantile weights, with leading zeros in a row
WN[2, 0, :2] = 0.0
FREQUENCIES = np.array([1, 2, 0, 3, 1])


def check(got, want):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            check(g, w)
        return
    want = np.asarray(want)
    assert isinstance(got, lf.Array), type(got)
    value = np.asarray(got)
    assert value.dtype == want.dtype, (value.dtype, want.dtype)
    assert value.shape == want.shape, (value.shape, want.shape)
    np.testing.assert_allclose(value, want, rtol=1e-6, atol=1e-12, equal_nan=True)


CASES = [
    ("flip", (X,), {}), ("flip", (X, 1), {}), ("flip", (X, (0, 2)), {}),
    ("fliplr", (X,), {}), ("flipud", (I,), {}),
    *[("rot90", (X, k), {}) for k in range(-1, 5)],
    ("rot90", (X, 1, (2, 0)), {}), ("rot90", (I, 3), {}),
    ("roll", (X, 2), {}), ("roll", (X, -1, 1), {}), ("roll", (X, (1, 7), (0, 2)), {}),
    ("roll", (I, 25, 1), {}),
    ("repeat", (X, 2), {}), ("repeat", (X, 3, 1), {}), ("repeat", (X, [1, 0, 2], 0), {}),
    ("repeat", (I, 2, -1), {}),
    ("tile", (X, 2), {}), ("tile", (X, (2, 1, 1, 3)), {}), ("tile", (I[0], (2, 3)), {}),
    ("append", (X, [1, 2]), {}), ("append", (X, X, 1), {}), ("append", (I, I[:1], 0), {}),
    ("atleast_1d", (2.0,), {}), ("atleast_2d", (I[0],), {}), ("atleast_3d", (I,), {}),
    ("atleast_3d", (X[0, 0],), {}),
    ("broadcast_arrays", (X[:, :1], X[0]), {}),
    ("meshgrid", (np.arange(3), np.arange(4.0), np.arange(2)), {}),
    ("meshgrid", (np.arange(3), np.arange(4)), {"indexing": "ij", "sparse": True}),
    ("column_stack", ([X[0, 0], X[1, 0]],), {}), ("column_stack", ([I, I[:, :1]],), {}),
    ("dstack", ([X[0], X[1]],), {}),
    ("array_split", (X, 3, 2), {}), ("split", (X, [1, 3], 1), {}), ("split", (I, 2), {}),
    ("hsplit", (I, 3), {}), ("vsplit", (I, [1]), {}), ("dsplit", (X, 5), {}),
    ("pad", (X, 1), {}), ("pad", (I, ((1, 2), (0, 3))), {"constant_values": ((7, 8), (9, 10))}),
    ("pad", (F, (2, 1)), {"constant_values": 1.5}), ("pad", (I, 2), {"constant_values": 2.7}),
    *[("pad", (X, ((2, 1), (0, 7), (3, 3))), {"mode": m}) for m in ("edge", "reflect", "symmetric", "wrap")],
    ("pad", (I, 9), {"mode": "reflect"}),
    ("pad", (F, ((1, 2), (2, 1))), {"mode": "linear_ramp", "end_values": 3}),
    ("pad", (I, 2), {"mode": "maximum"}),
    *[("pad", (X, ((2, 1), (0, 7), (3, 3))), {"mode": m, "reflect_type": "odd"})
      for m in ("reflect", "symmetric")],
    ("pad", (I, 9), {"mode": "reflect", "reflect_type": "odd"}),
    ("pad", (I[:1], ((0, 0), (2, 3))), {"mode": "symmetric", "reflect_type": "odd"}),
    *[("pad", (X, ((1, 2), (3, 0), (2, 2))), {"mode": m}) for m in ("maximum", "minimum", "mean", "median")],
    ("pad", (I, 2), {"mode": "mean", "stat_length": ((1, 2), (3, 6))}),
    ("pad", (I, ((1, 1), (2, 2))), {"mode": "median", "stat_length": 2}),
    ("pad", (F, ((1, 2), (2, 1))), {"mode": "minimum", "stat_length": (1, 3)}),
    ("pad", (I, ((2, 3), (1, 0))), {"mode": "linear_ramp", "end_values": ((-4, 9), (5, 0))}),
    ("pad", (X, 2), {"mode": "linear_ramp"}),
    ("isin", (I, [1, 3, -4, 100]), {}), ("isin", (X, X[0, 0]), {"invert": True}),
    ("isin", (I, np.array([], np.int32)), {}), ("isin", (F, I), {}),
    ("select", ([X > 1, X < -1], [X, -X]), {}), ("select", ([I > 2, I < 0], [I, 1.5], -1), {}),
    ("delete", (X, 1, 1), {}), ("delete", (X, [0, -1]), {"axis": 2}), ("delete", (I, slice(1, 5, 2)), {}),
    ("delete", (F, np.array([True, False, True, False, False])), {"axis": 0}),
    ("insert", (I, 2, 99), {}), ("insert", (I, 1, [7, 8, 9, 10, 11, 12]), {"axis": 0}),
    ("insert", (I, [0, 2, 2, 6], [1, 2, 3, 4]), {"axis": 1}), ("insert", (X, 3, 0.5), {"axis": 2}),
    ("insert", (F, slice(None, None, 2), -1.0), {"axis": 1}), ("insert", (I, [5, 1], 0), {"axis": 1}),
    ("polyval", ([3, 0, -1, 2.5], X), {}), ("polyval", (np.array([2, 1], np.int32), I), {}),
    ("vander", (X[0, 0],), {}), ("vander", (I[0], 3), {"increasing": True}),
    *[(f, (a, b), {"mode": mode}) for f in ("convolve", "correlate")
      for a, b in ((X[0, 0], X[1, 1, :3]), (X[0, 0, :2], X[1, 1]), (I[0], I[1]), (RNG.standard_normal(90), RNG.standard_normal(40)))
      for mode in ("full", "same", "valid")],
    ("ediff1d", (X,), {}), ("ediff1d", (I,), {"to_begin": [-1, -2], "to_end": 5}),
    ("nonzero", (X > 0,), {}), ("flatnonzero", (I,), {}), ("argwhere", (I > 3,), {}),
    ("ptp", (X, 1), {}), ("ptp", (I,), {}), ("ptp", (F, 0), {"keepdims": True}),
    ("average", (X,), {}), ("average", (I, 1), {}),
    ("average", (X, 1, np.arange(4.0)), {}), ("average", (X, (0, 2), np.abs(X)), {}),
    ("average", (X, 1, np.arange(1.0, 5.0), True), {}), ("average", (F, 0), {"returned": True}),
    *[("quantile", (X, [0.1, 0.5, 1.0]), {"axis": 1, "method": m})
      for m in ("linear", "lower", "higher", "nearest", "midpoint")],
    ("quantile", (X, 0.3), {"axis": (0, 2), "keepdims": True}),
    ("quantile", (I, 0.5), {"axis": 0}), ("quantile", (I, 0.4), {"axis": 0, "method": "lower"}),
    ("quantile", (F, 0.25), {}), ("quantile", (F, [0.25]), {"axis": 1}),
    ("percentile", (X, 30), {}), ("percentile", (F, [10, 90]), {"axis": 0}),
    ("percentile", (I, 50), {"axis": 1, "method": "nearest"}),
    *[("nanquantile", (XN, [0.1, 0.5, 1.0]), {"axis": 1, "method": m})
      for m in ("linear", "lower", "higher", "nearest", "midpoint")],
    ("nanquantile", (XN, 0.3), {}), ("nanquantile", (FN, 0.7), {"axis": 0, "keepdims": True}),
    ("nanpercentile", (XN, [25, 75]), {"axis": (0, 2)}), ("nanpercentile", (I, 40), {"axis": 1}),
    ("nanmedian", (XN,), {}), ("nanmedian", (XN,), {"axis": 2}), ("nanmedian", (FN, 1), {}),
    ("nanmedian", (I,), {"axis": 0}), ("nanmedian", (XN, (0, 1)), {"keepdims": True}),
    ("nanargmax", (FN,), {}), ("nanargmax", (FN, 0), {}), ("nanargmin", (XN[2],), {"axis": 1}),
    ("nanargmin", (I,), {"axis": 0, "keepdims": True}),
    ("bincount", (np.array([1, 3, 1, 0, 5]),), {}), ("bincount", (np.array([], np.int64),), {}),
    ("bincount", (np.array([1, 3, 1]),), {"weights": np.array([0.5, 1.0, 2.0]), "minlength": 6}),
    ("bincount", (I.reshape(-1) + 5,), {"weights": F.reshape(-1)[:24]}),
    ("histogram", (X,), {}), ("histogram", (X,), {"bins": 4, "range": (-1, 1)}),
    ("histogram", (X,), {"bins": [-2, -0.5, 0, 3]}), ("histogram", (F,), {"bins": 7, "weights": np.abs(F)}),
    ("histogram", (I,), {"bins": 5, "density": True}), ("histogram", (np.full(5, 2.0),), {"bins": 3}),
    ("histogram", (F,), {"bins": 64}), ("histogram_bin_edges", (F,), {"bins": 3}),
    ("cov", (X[0],), {}), ("cov", (X[0], X[1]), {"rowvar": False}), ("cov", (X[0, 0],), {}),
    ("cov", (I,), {"bias": True}), ("cov", (F,), {"ddof": 2}),
    ("cov", (X[0],), {"fweights": None, "aweights": np.arange(1.0, 6.0)}),
    ("cov", (X[0],), {"fweights": FREQUENCIES}), ("cov", (X[0], X[1]), {"fweights": FREQUENCIES, "bias": True}),
    ("cov", (X[0],), {"fweights": FREQUENCIES, "aweights": np.arange(1.0, 6.0), "ddof": 2}),
    ("cov", (F,), {"rowvar": False, "aweights": np.arange(5.0), "dtype": np.float32}),
    ("cov", (X[0, :1],), {}), ("cov", (X[0, :1],), {"rowvar": False}), ("cov", (X[0, :, :1],), {}),
    ("cov", (X[0, 0], I[0, :5]), {}), ("cov", (X[0],), {"ddof": 5}),
    *[("nanquantile", (XN, q), {"axis": 2, "method": "inverted_cdf", "weights": WN})
      for q in (0.0, [0.3, 1.0])],
    ("nanpercentile", (FN, 50), {"axis": 0, "method": "inverted_cdf", "weights": F ** 2}),
    ("quantile", (X, 0.0), {"axis": 2, "method": "inverted_cdf", "weights": WN}),
    ("corrcoef", (X[0],), {}), ("corrcoef", (F, F[::-1]), {"rowvar": False}),
    ("gradient", (X,), {}), ("gradient", (X, 0.5), {"axis": 1}), ("gradient", (F, 2.0, 0.5), {}),
    ("gradient", (X[0, 0],), {"edge_order": 2}), ("gradient", (I, 1, 3), {"edge_order": 2}),
    ("gradient", (X, np.array([0.0, 0.5, 2.0, 2.25, 4.0])), {"axis": 2}),
    ("gradient", (F, np.cumsum(np.arange(1.0, 6.0)), np.arange(6) * 3), {"edge_order": 2}),
    ("gradient", (X[0], np.array([1, 2, 4, 7])), {"axis": 0, "edge_order": 1}),
    ("diff", (X,), {}), ("diff", (X, 2, 0), {}), ("diff", (I,), {"prepend": 0, "append": I[:, :1]}),
    ("diff", (X > 0,), {}), ("diff", (F, 0), {}),
    ("trapezoid", (X,), {}), ("trapezoid", (X, np.arange(5.0) ** 2), {}),
    ("trapezoid", (F,), {"dx": 0.5, "axis": 0}),
    ("cross", (V, W), {}), ("cross", (V[:, :2], W), {}), ("cross", (V[:, :2], W[:, :2]), {}),
    ("cross", (V.T, W.T), {"axisa": 0, "axisb": 0, "axisc": 0}), ("cross", (V[0], W), {}),
    ("kron", (X[0], X[1, :2, :3]), {}), ("kron", (X[0, 0], X[1]), {}), ("kron", (I[:2], np.eye(2)), {}),
    ("logspace", (0, 3, 7), {}), ("logspace", (1, 2, 5), {"base": 2.0, "endpoint": False}),
]


def case_id(case):
    return case[0] + str(len(case[1])) + "-" + "-".join(f"{k}" for k in case[2])


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{case_id(c)}" for i, c in enumerate(CASES)])
def test_functions_are_numpys(backend, case):
    name, args, kwargs = case
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's all-NaN slice warnings
        want = numpy_function(name)(*args, **kwargs)
    check(getattr(lf, name)(*args, **kwargs), want)
    lazy = tuple(lazily(a) for a in args)
    if any(isinstance(a, (lf.Array, list)) for a in lazy):
        check(getattr(np, name)(*lazy, **kwargs), want)  # __array_function__


def lazily(a):
    """NumPy arrays (also in a list) as lazy ones."""
    if isinstance(a, list) and all(isinstance(x, np.ndarray) for x in a):
        return [lf.asarray(x) for x in a]
    return lf.asarray(a) if isinstance(a, np.ndarray) else a


def test_weights_numpy_refuses_are_refused(backend):
    zero_row = WN.copy()
    zero_row[1, 2] = 0.0
    for weights in (zero_row, lf.asarray(zero_row)):
        with pytest.raises(ValueError, match="sum to zero"):
            lf.quantile(X, 0.5, axis=2, method="inverted_cdf", weights=weights)
    with pytest.raises(ValueError, match="non-negative"):
        lf.nanquantile(XN, 0.5, method="inverted_cdf", weights=lf.asarray(-WN))
    only_nan_weighed = WN.copy()
    only_nan_weighed[1, 0, :] = np.where(np.isnan(XN[1, 0]), 1.0, 0.0)  # NumPy raises too
    with pytest.raises(ValueError, match="sum to zero"):
        lf.nanquantile(XN, 0.5, axis=2, method="inverted_cdf", weights=only_nan_weighed)
    with pytest.raises(TypeError, match="must be integer"):
        lf.cov(X[0], fweights=lf.asarray(FREQUENCIES + 0.5))
    with pytest.raises(ValueError, match="cannot be negative"):
        lf.cov(X[0], aweights=lf.asarray(-np.arange(5.0)))
    with pytest.raises(ValueError, match="5 observations"):
        lf.cov(X[0], fweights=FREQUENCIES[:4])
    with pytest.raises(ValueError, match="ddof"):
        lf.cov(X[0], ddof=1.5)


def test_nan_makes_a_quantile_nan_and_views_stay_views(backend):
    values = X.copy()
    values[1, 2, 3] = np.nan
    check(lf.quantile(values, 0.5, axis=2), np.quantile(values, 0.5, axis=2))
    x = lf.asarray(X) * 1
    flipped = lf.flip(x, 0)
    flipped[0] = 0.0  # a view: writes x's last row
    expected = X.copy()
    expected[-1] = 0.0
    check(x, expected)


def test_partition_puts_the_kth_element_in_place(backend):
    # Any arrangement with the kth element sorted in place and the others
    # on their sides is NumPy's contract (lazyfuse's is fully sorted).
    values = RNG.standard_normal((4, 50))
    for kth in (0, 17, 49):
        parted = np.asarray(lf.partition(values, kth, axis=1))
        want = np.sort(values, axis=1)[:, kth:kth + 1]
        assert (parted[:, kth:kth + 1] == want).all()
        assert (parted[:, :kth] <= want).all() and (parted[:, kth:] >= want).all()
        order = np.asarray(np.argpartition(lf.asarray(values), kth, axis=1))
        np.testing.assert_array_equal(np.take_along_axis(values, order, 1)[:, kth], want[:, 0])


def test_pad_refuses_what_numpy_refuses():
    with pytest.raises(ValueError, match="stat_length of 0"):
        lf.pad(F, 1, mode="maximum", stat_length=0)
    with pytest.raises(ValueError, match="unsupported keyword"):
        lf.pad(F, 1, mode="edge", reflect_type="odd")
    with pytest.raises(ValueError, match="mode 'ramp'"):
        lf.pad(F, 1, mode="ramp")
    with pytest.raises(ValueError, match="empty axis 1"):
        lf.pad(np.zeros((2, 0)), 1, mode="mean")
    with pytest.raises(ValueError, match="negative"):
        lf.pad(F, 1, mode="mean", stat_length=-1)
    with pytest.raises(TypeError, match="integral"):
        lf.pad(F, 1.5)
    np.testing.assert_array_equal(  # a Python function as the mode runs in NumPy
        np.asarray(lf.pad(F, 1, mode=lambda v, w, i, k: None)), np.pad(F, 1, lambda v, w, i, k: None))


def test_pad_empty_gives_the_shape():
    padded = lf.pad(F, ((1, 2), (0, 3)), mode="empty")  # NumPy leaves the pad unset; zeros here
    assert padded.shape == (8, 9) and padded.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(padded)[1:6, :6], F)


def test_shape_queries_compute_nothing():
    x = lf.asarray(X) + 1
    before = lf.stats()["evaluations"]
    assert (np.shape(x), np.ndim(x), np.size(x), np.size(x, 1)) == ((3, 4, 5), 3, 60, 4)
    assert np.result_type(x, np.float32) == np.float64
    lf.flip(lf.roll(lf.tile(x, 2), 1), 0)  # lazy too
    for mode in ("maximum", "mean", "median", "linear_ramp", "reflect"):
        lf.pad(x, ((1, 2), (7, 0), (0, 3)), mode=mode)
    lf.pad(x, 6, mode="symmetric", reflect_type="odd")
    assert lf.stats()["evaluations"] == before


def test_bad_calls_raise_as_numpys():
    x = lf.asarray(X)
    with pytest.raises(ValueError, match="equal division"):
        lf.split(x, 2, axis=1 + 1)
    with pytest.raises(ValueError, match="range"):
        lf.quantile(x, 1.5)
    with pytest.raises(ValueError, match="range"):
        lf.percentile(x, -1)
    with pytest.raises(ValueError, match="method"):
        lf.quantile(x, 0.5, method="cubic")
    with pytest.raises(ZeroDivisionError, match="sum to zero"):
        lf.average(x, 1, np.zeros(4))
    with pytest.raises(TypeError, match="axis must be specified"):
        lf.average(x, None, np.ones(4))
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        lf.cross(X, X)
    with pytest.raises(ValueError, match="same axis"):
        lf.rot90(x, 1, (1, 1))
    with pytest.raises(ValueError, match="at least one dimensional"):
        lf.diff(lf.asarray(1.0))
    with pytest.raises(ValueError, match="negative"):
        lf.repeat(x, -1)
    with pytest.raises(ValueError, match="All-NaN slice"):
        lf.nanargmax(XN, axis=2)
    with pytest.raises(ValueError, match="must not be negative"):
        lf.bincount(np.array([1, -1]))
    with pytest.raises(TypeError, match="cannot cast"):
        lf.bincount(np.array([1.5]))
    with pytest.raises(ValueError, match="not finite"):
        lf.histogram(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="monotonically"):
        lf.histogram(X, bins=[0, 2, 1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_histogram_bins_values_at_their_edges_as_numpy(backend, dtype):
    # Values on every edge and one step of their dtype either side: the
    # rounding corrections of NumPy's equal-bin arithmetic decide these.
    for bins, value_range in ((7, None), (13, (-1.3, 2.9)), (100, (0, 1)), (3, (2, 2))):
        edges = np.histogram_bin_edges(np.array([-1.3, 2.9]), bins, value_range or (-1.3, 2.9))
        around = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
        values = np.concatenate([around, RNG.uniform(-2, 3, 500)])
        values = (values * 10).astype(dtype) if dtype == np.int32 else values.astype(dtype)
        want = np.histogram(values, bins, value_range)
        check(lf.histogram(values, bins, value_range), want)


@pytest.mark.parametrize("method", ["inverted_cdf", "averaged_inverted_cdf",
                                    "closest_observation", "interpolated_inverted_cdf", "hazen",
                                    "weibull", "linear", "median_unbiased", "normal_unbiased",
                                    "lower", "higher", "midpoint", "nearest"])
def test_every_quantile_method_is_numpys(backend, method):
    x, xi = RNG.standard_normal((5, 7)), RNG.integers(0, 20, (5, 7))
    with_nans = x.copy()
    with_nans[1, 2], with_nans[3] = np.nan, np.nan
    for q in (0.0, 0.07, 0.25, 0.5, 0.93, 1.0, [0.0, 0.33, 0.5, 1.0]):
        for a, axis in ((x, None), (x, 1), (xi, 0), (x[:, :1], 1), (x[:, :2], 1)):
            want = np.quantile(a, q, axis=axis, method=method)
            got = np.asarray(lf.quantile(a, q, axis=axis, method=method))
            assert got.shape == want.shape and got.dtype == want.dtype, (q, axis)
            np.testing.assert_allclose(got, want, rtol=1e-14)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = np.nanquantile(with_nans, q, axis=1, method=method)
        np.testing.assert_allclose(np.asarray(lf.nanquantile(with_nans, q, axis=1, method=method)),
                                   want, rtol=1e-14)


def test_weighted_quantiles_are_numpys(backend):
    x, w = RNG.standard_normal((5, 7)), RNG.random((5, 7))
    xi = RNG.integers(0, 4, (5, 7))
    for q in (0.0, 0.2, 0.5, 1.0, [0.1, 0.9]):
        for a, weights, axis in ((x, w, None), (x, w, 1), (x, w[0], 1), (xi, w, 0), (x, w, (0, 1))):
            want = np.quantile(a, q, axis=axis, method="inverted_cdf", weights=weights)
            got = np.asarray(lf.quantile(a, q, axis=axis, method="inverted_cdf", weights=weights))
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    with_nan = x.copy()
    with_nan[2, 3] = np.nan
    np.testing.assert_array_equal(
        np.asarray(lf.percentile(with_nan, 50, axis=1, method="inverted_cdf", weights=w)),
        np.percentile(with_nan, 50, axis=1, method="inverted_cdf", weights=w))
    with pytest.raises(ValueError, match="only method 'inverted_cdf'"):
        lf.quantile(x, 0.5, weights=w)
    with pytest.raises(ValueError, match="non-negative"):
        lf.quantile(x, 0.5, method="inverted_cdf", weights=-w)
