"""Libraries that accept any array (issue 48): scikit-learn's array API
dispatch runs estimators end to end on lazyfuse arrays, and SciPy's
array-API-aware functions in ``scipy.special`` and ``scipy.stats`` take
them, each with NumPy's results. In a process of its own: SciPy reads ``SCIPY_ARRAY_API`` when it
is first imported. lazyfuse is imported first there, as a user's program
may: its module must leave the static TLS that scikit-learn's OpenMP
runtime needs (``import lazyfuse; import sklearn`` failed with "cannot
allocate memory in static TLS block" while mimalloc used it)."""

import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import json
import numpy as np
import lazyfuse as lf
import sklearn
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, Normalizer, StandardScaler

sklearn.set_config(array_api_dispatch=True)
rng = np.random.default_rng(0)
X = rng.standard_normal((200, 5)).astype(np.float32)
y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
target = 2 * X[:, 0] - X[:, 3]
lx, ly, lt = lf.asarray(X), lf.asarray(y), lf.asarray(target)
results = {}
for estimator in [MinMaxScaler(), MaxAbsScaler(), Normalizer(), StandardScaler(),
                  PCA(n_components=2, svd_solver="full"), LinearDiscriminantAnalysis(solver="svd"),
                  Ridge(solver="svd")]:
    name = type(estimator).__name__
    reference = clone(estimator)
    if name == "LinearDiscriminantAnalysis":
        got, want = estimator.fit(lx, ly).predict(lx), reference.fit(X, y).predict(X)
    elif name == "Ridge":
        got, want = estimator.fit(lx, lt).predict(lx), reference.fit(X, target).predict(X)
    else:
        got, want = estimator.fit_transform(lx), reference.fit_transform(X)
    lazy = type(got).__module__.startswith("lazyfuse")
    # PCA's components are defined up to sign: compare magnitudes.
    same = np.allclose(np.abs(np.asarray(got)), np.abs(want), atol=1e-4) if name == "PCA" \
        else np.allclose(np.asarray(got), want, atol=1e-4)
    results[name] = [bool(lazy), bool(same)]

import scipy.special as special
import scipy.stats as stats
functions = {
    "logsumexp": lambda a: special.logsumexp(a, axis=1),
    "softmax": lambda a: special.softmax(a, axis=1),
    "log_softmax": lambda a: special.log_softmax(a, axis=1), "erf": special.erf,
    "expit": special.expit, "entr": special.entr, "xlogy": lambda a: special.xlogy(a, a),
    "ndtr": special.ndtr, "gammaln": special.gammaln, "zscore": stats.zscore,
    "moment": lambda a: stats.moment(a, 2), "skew": stats.skew, "kurtosis": stats.kurtosis,
    "variation": stats.variation, "sem": stats.sem, "gmean": lambda a: stats.gmean(abs(a) + 1),
    "pearsonr": lambda a: stats.pearsonr(a[:, 0], a[:, 1]).statistic,
    "ttest_1samp": lambda a: stats.ttest_1samp(a, 0.0).statistic,
}
for name, function in functions.items():
    got, want = function(lx), function(X)
    lazy = type(got).__module__.startswith("lazyfuse")
    same = np.allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5, equal_nan=True)
    results["scipy." + name] = [bool(lazy), bool(same)]
print(json.dumps(results))
"""


def test_scikit_learn_and_scipy_run_on_lazyfuse_arrays():
    pytest.importorskip("sklearn")
    pytest.importorskip("array_api_compat")
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(results) == 7 + 18
    for name, (lazy, same) in results.items():
        assert lazy, f"{name}: the result is not a lazyfuse array"
        assert same, f"{name}: the result differs from NumPy's"
