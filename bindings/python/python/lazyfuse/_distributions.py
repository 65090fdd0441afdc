"""NumPy's other distributions for ``lazyfuse.random.Generator``, built
from its lazy uniform and normal draws, so that they fuse like them.

- **Transforms** of uniform, exponential and normal draws, exact as NumPy's
  own formulas: ``standard_exponential``, ``lognormal``, ``laplace``,
  ``logistic``, ``gumbel``, ``weibull``, ``pareto``, ``power``,
  ``rayleigh``, ``standard_cauchy``, ``triangular``, ``wald``,
  ``geometric``, ``multivariate_normal`` (a matrix product), ``permuted``.
- **Gamma** and what is built on it (``standard_gamma``, ``gamma``,
  ``chisquare``, ``beta``, ``f``, ``standard_t``, ``dirichlet``,
  ``noncentral_chisquare`` for ``df > 1``): Marsaglia and Tsang's method,
  its rejection loop unrolled into candidates, the first accepted one
  taken: as many as make the chance that all are rejected below 1e-15 per
  value (12 for shapes near 1 and array shapes, 9 at 3, 5 at 100); the last
  candidate is then taken (a bias no sample can show). A candidate costs
  three Philox draws: on the CPU, 1e6 values take 3.0x NumPy's time at
  shape 0.5, 5.4x at 3 and 3.0x at 100, measured.
- **Discrete distributions of number parameters** (``poisson``,
  ``binomial``, ``negative_binomial``, ``hypergeometric``, ``logseries``):
  by inversion, a binary search of each uniform among the cumulative
  probabilities, tabulated once in float64 over the support where the
  probability is not negligible (below 1e-30 left out).
- **The rest** (those with array parameters, ``zipf``, ``vonmises``,
  ``multinomial``, ``noncentral_f``…) are drawn by NumPy's generator on
  NumPy's Philox, keyed by the call's stream: computed, then given to the
  context; not lazy.

None of the values are NumPy's (see ``lazyfuse.random``); their
distributions are, which the tests check against NumPy's draws."""

import math
import operator

import numpy as np

from ._array import Array, _dtype_name, _store
from ._creation import asarray
from ._registry import FUNCTIONS
from .errors import ArgumentError, DTypeError

#: Candidates per gamma value of an array shape (see the module's
#: documentation); a number shape takes fewer when it can (`_gamma_tries`).
GAMMA_TRIES = 12
#: The chance that every candidate of a gamma value is rejected, at most.
GAMMA_ALL_REJECTED = 1e-15
#: Probabilities below this are left out of a discrete distribution's table.
NEGLIGIBLE = 1e-30
#: The longest table of a discrete distribution; longer ones go to NumPy.
MAX_TABLE = 1 << 21


# Shapes, dtypes and ``out=`` of draws, shared with ``lazyfuse.random``
# (which builds on this module, not the other way).


def _shape(size):
    if type(size) is int and size >= 0:  # the common case, one check
        return [size]
    if size is None:
        return []
    dims = [size] if isinstance(size, (int, np.integer)) else list(size)
    dims = [operator.index(d) for d in dims]
    if any(d < 0 for d in dims):
        raise ArgumentError(f"random: negative dimensions are not allowed (size {tuple(dims)})")
    return dims


def _float_dtype(dtype, what):
    name = "float64" if dtype is None else _dtype_name(dtype)
    if name not in ("float32", "float64"):
        raise DTypeError(f"{what}: unsupported dtype {name} (expected float32 or float64, as "
                         "NumPy's generators)")
    return name


def _lazy(value):
    """A lazy array, or a number as it is (weak in arithmetic)."""
    if isinstance(value, (Array, bool, int, float)):
        return value
    return asarray(value)


def _broadcast(size, *parameters):
    """The shape of the draw: ``size``, or the parameters' broadcast one."""
    if size is not None:
        return _shape(size)
    return list(np.broadcast_shapes(*(np.shape(p) for p in parameters)))


def _out_shape(size, out):
    if out is None:
        return _shape(size)
    if size is not None and tuple(_shape(size)) != tuple(out.shape):
        raise ArgumentError(f"random: size {size} and out of shape {out.shape} differ")
    return list(out.shape)


def _written(result, out):
    """``result``, or ``out`` holding it."""
    if out is None:
        return result
    return _store(result, out, "random", "unsafe")


def _check(what, message, bad, *values):
    """Raises ``ArgumentError(what: message)`` when ``bad`` holds for any
    known value (numbers, NumPy arrays; lazy arrays are not computed)."""
    for value in values:
        if not isinstance(value, Array) and np.any(bad(np.asarray(value, dtype=float))):
            raise ArgumentError(f"{what}: {message}")


def _number(value):
    """``value`` as a Python float when it is one number, else None."""
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return float(value)
    return None


class Distributions:
    """NumPy's distributions, as methods of ``Generator`` (which provides
    ``_uniform``, ``standard_normal``, ``_key``, ``_lazy`` helpers)."""

    # --- the draws everything is built from --------------------------------

    def _open_uniform(self, shape):
        """Uniform values in the open ``(0, 1)``: a 53-bit uniform moved by
        half a step (exact), so that logarithms of it and of ``1 - u`` are
        finite and the interval is symmetric."""
        return self._uniform(shape) + 2.0 ** -54

    def _exponential(self, shape):
        """Standard exponential values, all positive: ``-log(u)`` of an open
        uniform ``u``."""
        return -np.log(self._open_uniform(shape))

    def _numpy(self):
        """NumPy's generator on NumPy's Philox, keyed by the next stream."""
        return np.random.Generator(np.random.Philox(key=self._key()))

    def _computed(self, values):
        """NumPy's ``values``, given to the current context."""
        return asarray(values)

    # --- transforms ----------------------------------------------------------

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        """Exponential values of mean 1 (``method`` is accepted and ignored:
        both of NumPy's draw the same distribution)."""
        name = _float_dtype(dtype, "standard_exponential")
        values = self._exponential(_out_shape(size, out))
        return _written(values.astype(name) if name != "float64" else values, out)

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        """``exp`` of normal values of mean ``mean`` and deviation ``sigma``."""
        _check("lognormal", "sigma < 0", lambda s: s < 0, sigma)
        return np.exp(self.normal(mean, sigma, size))

    def laplace(self, loc=0.0, scale=1.0, size=None):
        """Laplace (double exponential) values."""
        _check("laplace", "scale < 0", lambda s: s < 0, scale)
        u = self._open_uniform(self._shape_of(size, loc, scale))
        signed = np.where(u < 0.5, np.log(u + u), -np.log(2.0 - u - u))
        return self._lazy(loc) + self._lazy(scale) * signed

    def logistic(self, loc=0.0, scale=1.0, size=None):
        """Logistic values: ``loc + scale * log(u / (1 - u))``."""
        _check("logistic", "scale < 0", lambda s: s < 0, scale)
        u = self._open_uniform(self._shape_of(size, loc, scale))
        return self._lazy(loc) + self._lazy(scale) * np.log(u / (1.0 - u))

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        """Gumbel values: ``loc - scale * log(E)`` of exponential ``E``."""
        _check("gumbel", "scale < 0", lambda s: s < 0, scale)
        e = self._exponential(self._shape_of(size, loc, scale))
        return self._lazy(loc) - self._lazy(scale) * np.log(e)

    def weibull(self, a, size=None):
        """Weibull values: ``E ** (1 / a)`` (0 where ``a`` is 0)."""
        _check("weibull", "a < 0", lambda v: v < 0, a)
        a = self._lazy(a)
        e = self._exponential(self._shape_of(size, a))
        if _number(a) is not None:
            return e * 0.0 if a == 0 else e ** (1.0 / a)
        return np.where(a == 0, 0.0, e ** (1.0 / np.where(a == 0, 1.0, a)))

    def pareto(self, a, size=None):
        """Pareto II (Lomax) values, as NumPy's: ``expm1(E / a)``."""
        _check("pareto", "a <= 0", lambda v: v <= 0, a)
        a = self._lazy(a)
        return np.expm1(self._exponential(self._shape_of(size, a)) / a)

    def power(self, a, size=None):
        """Values in ``[0, 1]`` of density ``a * x**(a - 1)``."""
        _check("power", "a <= 0", lambda v: v <= 0, a)
        a = self._lazy(a)
        return (-np.expm1(-self._exponential(self._shape_of(size, a)))) ** (1.0 / a)

    def rayleigh(self, scale=1.0, size=None):
        """Rayleigh values: ``scale * sqrt(2 E)``."""
        _check("rayleigh", "scale < 0", lambda s: s < 0, scale)
        e = self._exponential(self._shape_of(size, scale))
        return self._lazy(scale) * np.sqrt(e + e)

    def standard_cauchy(self, size=None):
        """Cauchy values: the ratio of two normal values."""
        shape = _shape(size)
        return self.standard_normal(shape) / self.standard_normal(shape)

    def triangular(self, left, mode, right, size=None):
        """Values of the triangular distribution, by NumPy's inversion."""
        _check("triangular", "left > mode", lambda v: v > 0, np.subtract(left, mode))
        _check("triangular", "mode > right", lambda v: v > 0, np.subtract(mode, right))
        _check("triangular", "left == right", lambda v: v == 0, np.subtract(left, right))
        left, mode, right = (self._lazy(v) for v in (left, mode, right))
        u = self._uniform(self._shape_of(size, left, mode, right))
        base = right - left
        ratio = (mode - left) / base
        rising = left + np.sqrt(u * ((mode - left) * base))
        falling = right - np.sqrt((1.0 - u) * ((right - mode) * base))
        return np.where(u <= ratio, rising, falling)

    def wald(self, mean, scale, size=None):
        """Inverse Gaussian values, by NumPy's transform of a normal and a
        uniform value."""
        _check("wald", "mean <= 0", lambda v: v <= 0, mean)
        _check("wald", "scale <= 0", lambda v: v <= 0, scale)
        mean, scale = self._lazy(mean), self._lazy(scale)
        shape = self._shape_of(size, mean, scale)
        y = self.standard_normal(shape)
        y = mean * y * y
        x = mean + mean / (2.0 * scale) * (y - np.sqrt(4.0 * scale * y + y * y))
        u = self._uniform(shape)
        return np.where(u <= mean / (mean + x), x, mean * mean / x)

    def geometric(self, p, size=None):
        """Trials up to the first success (``>= 1``, int64), by inversion:
        ``ceil(E / -log(1 - p))``."""
        _check("geometric", "p <= 0, p > 1 or p contains NaNs",
               lambda v: ~((v > 0) & (v <= 1)), p)
        p = self._lazy(p)
        e = self._exponential(self._shape_of(size, p))
        number = _number(p)
        if number == 1.0:
            return (e * 0.0).astype(np.int64) + 1
        rate = -math.log1p(-number) if number is not None else -np.log1p(-p)
        trials = np.ceil(e / rate)
        return np.maximum(np.minimum(trials, 2.0 ** 62), 1.0).astype(np.int64)

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8,
                            method="svd"):
        """Normal vectors of mean ``mean`` and covariance ``cov``: standard
        normal ones times a factor of ``cov`` (NumPy's, from its
        decomposition ``method``, computed once), lazily."""
        mean, cov = np.asarray(mean, dtype=float), np.asarray(cov, dtype=float)
        if mean.ndim != 1 or cov.shape != (mean.size, mean.size):
            raise ArgumentError(f"multivariate_normal: mean of shape {mean.shape} and cov of "
                                f"shape {cov.shape} (expected (n,) and (n, n))")
        if method == "cholesky":
            factor = np.linalg.cholesky(cov).T
        elif method == "eigh":
            s, v = np.linalg.eigh(cov)
            factor = np.sqrt(np.maximum(s, 0))[:, None] * v.T
        elif method == "svd":
            _, s, vt = np.linalg.svd(cov)
            factor = np.sqrt(s)[:, None] * vt
        else:
            raise ArgumentError(f"multivariate_normal: method {method!r} (expected 'svd', "
                                "'eigh' or 'cholesky')")
        shape = _shape(size) + [mean.size]
        z = self.standard_normal(shape)
        return z @ self._computed(factor) + self._computed(mean)

    def permuted(self, x, axis=None, out=None):
        """``x`` with each line along ``axis`` (the flattened array when
        None) shuffled independently: the order that sorts fresh uniform
        values, lazily."""
        source = asarray(x)
        flat = axis is None
        values = source.reshape(-1) if flat else source
        axis = -1 if flat else operator.index(axis)
        order = np.argsort(self._uniform(list(values.shape)), axis=axis, kind="stable")
        shuffled = FUNCTIONS["take_along_axis"](values, order, axis=axis)  # (complex arrays too)
        if flat:
            shuffled = shuffled.reshape(source.shape)
        if out is None:
            return shuffled
        if isinstance(out, Array):
            out._rebind(shuffled._a)
        else:
            out[...] = shuffled.numpy()
        return out

    def bytes(self, length):
        """``length`` random bytes (computed)."""
        return self.integers(0, 256, operator.index(length), dtype=np.uint8).numpy().tobytes()

    # --- gamma and its family ------------------------------------------------

    def standard_gamma(self, shape, size=None, dtype=np.float64, out=None):
        """Gamma values of scale 1 (see the module's documentation for the
        method): ``shape`` a number or an array."""
        name = _float_dtype(dtype, "standard_gamma")
        _check("standard_gamma", "shape < 0", lambda v: v < 0, shape)
        dims = list(out.shape) if out is not None else self._shape_of(size, shape)
        values = self._gamma(self._lazy(shape), dims)
        return _written(values.astype(name) if name != "float64" else values, out)

    def _gamma(self, k, shape):
        """Marsaglia and Tsang's gamma of shape ``k`` (a number or a lazy
        array; below 1, of shape ``k + 1`` times ``u ** (1 / k)``), its
        loop unrolled."""
        number = _number(k)
        if number is not None:
            small = number < 1
            a = number + 1.0 if small else number
            d = a - 1.0 / 3.0
            c = 1.0 / math.sqrt(9.0 * d)
        else:
            small = k < 1
            d = np.where(small, k + 1.0, k) - 1.0 / 3.0
            c = 1.0 / np.sqrt(9.0 * d)
        chosen = done = None
        for _ in range(_gamma_tries(a) if number is not None else GAMMA_TRIES):
            x = self.standard_normal(shape)
            v = 1.0 + c * x
            v = v * v * v
            log_u = np.log(self._open_uniform(shape))
            accepted = (v > 0) & (log_u < 0.5 * x * x + d - d * v + d * np.log(np.abs(v)))
            candidate = d * np.abs(v)
            if chosen is None:
                chosen, done = candidate, accepted
            else:  # the first accepted candidate wins
                chosen = np.where(done, chosen, candidate)
                done = done | accepted
        if number is not None:
            if not small:
                return chosen
            return chosen * (self._open_uniform(shape) ** (1.0 / number) if number else 0.0)
        boost = self._open_uniform(shape) ** (1.0 / np.where(small, k, 1.0))
        return np.where(small, chosen * boost, chosen)

    def gamma(self, shape, scale=1.0, size=None):
        """Gamma values of ``shape`` and ``scale``."""
        _check("gamma", "shape < 0", lambda v: v < 0, shape)
        _check("gamma", "scale < 0", lambda v: v < 0, scale)
        dims = self._shape_of(size, shape, scale)
        return self._gamma(self._lazy(shape), dims) * self._lazy(scale)

    def chisquare(self, df, size=None):
        """Chi-square values: twice gamma values of shape ``df / 2``."""
        _check("chisquare", "df <= 0", lambda v: v <= 0, df)
        df = self._lazy(df)
        return 2.0 * self._gamma(df / 2.0, self._shape_of(size, df))

    def beta(self, a, b, size=None):
        """Beta values: ``X / (X + Y)`` of gamma values of shapes ``a``, ``b``."""
        _check("beta", "a <= 0", lambda v: v <= 0, a)
        _check("beta", "b <= 0", lambda v: v <= 0, b)
        a, b = self._lazy(a), self._lazy(b)
        shape = self._shape_of(size, a, b)
        x, y = self._gamma(a, shape), self._gamma(b, shape)
        return x / (x + y)

    def f(self, dfnum, dfden, size=None):
        """F values: the ratio of two chi-square values over their degrees."""
        _check("f", "dfnum <= 0", lambda v: v <= 0, dfnum)
        _check("f", "dfden <= 0", lambda v: v <= 0, dfden)
        shape = self._shape_of(size, dfnum, dfden)
        num = self.chisquare(dfnum, shape) / self._lazy(dfnum)
        return num / (self.chisquare(dfden, shape) / self._lazy(dfden))

    def standard_t(self, df, size=None):
        """Student's t values: a normal value over ``sqrt(chi2 / df)``."""
        _check("standard_t", "df <= 0", lambda v: v <= 0, df)
        shape = self._shape_of(size, df)
        return self.standard_normal(shape) / np.sqrt(self.chisquare(df, shape) / self._lazy(df))

    def dirichlet(self, alpha, size=None):
        """Dirichlet vectors: gamma values of shapes ``alpha``, normalised."""
        alpha = np.asarray(alpha, dtype=float)
        if alpha.ndim != 1:
            raise ArgumentError(f"dirichlet: alpha of shape {alpha.shape} (expected 1-d)")
        _check("dirichlet", "alpha <= 0", lambda v: v <= 0, alpha)
        shape = _shape(size) + [alpha.size]
        g = self._gamma(self._computed(alpha), shape)
        return g / g.sum(axis=-1, keepdims=True)

    def noncentral_chisquare(self, df, nonc, size=None):
        """Non-central chi-square values (``df > 1`` lazily, as NumPy's
        sum of a chi-square and a shifted normal square; else NumPy's)."""
        _check("noncentral_chisquare", "df <= 0", lambda v: v <= 0, df)
        _check("noncentral_chisquare", "nonc < 0", lambda v: v < 0, nonc)
        shape = self._shape_of(size, df, nonc)
        dfn = _number(df)
        if dfn is None or dfn <= 1:
            return self._computed(self._numpy().noncentral_chisquare(df, nonc, size))
        shifted = self.standard_normal(shape) + np.sqrt(self._lazy(nonc))
        return self.chisquare(dfn - 1, shape) + shifted * shifted

    # --- discrete distributions by inversion -----------------------------

    def _inverse(self, low, log_pmf, size):
        """Values ``low + i`` with probabilities ``exp(log_pmf[i])``
        (normalised): each uniform's place among the running sums."""
        from ._sorting import searchsorted
        pmf = np.exp(log_pmf - log_pmf.max())
        pmf[pmf < NEGLIGIBLE * pmf.sum()] = 0.0
        running = np.cumsum(pmf)
        running /= running[-1]
        table = self._computed(running)
        u = self._uniform(_shape(size))
        return searchsorted(table, u, side="right") + np.int64(low)

    @staticmethod
    def _window(mean, spread, low, high):
        """The support ``[low, high]`` cut to ``mean ± (40 spread + 40)``,
        or None when longer than :data:`MAX_TABLE`."""
        reach = 40.0 * spread + 40.0
        first = max(low, math.floor(mean - reach))
        last = min(high, math.ceil(mean + reach))
        return (first, last) if last - first < MAX_TABLE else None

    def poisson(self, lam=1.0, size=None):
        """Poisson values (int64)."""
        _check("poisson", "lam < 0 or lam is NaN", lambda v: ~(v >= 0), lam)
        _check("poisson", "lam value too large", lambda v: v > 1e18, lam)
        lam_n = _number(lam)
        window = None if lam_n is None else self._window(lam_n, math.sqrt(lam_n), 0,
                                                         math.inf)
        if window is None or lam_n == 0:
            if lam_n == 0:
                return self.integers(0, 1, size)
            return self._computed(self._numpy().poisson(lam, size))
        k = np.arange(window[0], window[1] + 1, dtype=float)
        log_pmf = k * math.log(lam_n) - lam_n - _lgamma(k + 1)
        return self._inverse(window[0], log_pmf, size)

    def binomial(self, n, p, size=None):
        """Binomial values (int64): successes in ``n`` trials of chance ``p``."""
        _check("binomial", "n < 0", lambda v: v < 0, n)
        _check("binomial", "p < 0, p > 1 or p is NaN", lambda v: ~((v >= 0) & (v <= 1)), p)
        n_n, p_n = _number(n), _number(p)
        if n_n is not None and p_n is not None and p_n in (0.0, 1.0):
            return self.integers(0, 1, size) + np.int64(n_n if p_n == 1 else 0)
        window = None
        if n_n is not None and p_n is not None:
            window = self._window(n_n * p_n, math.sqrt(n_n * p_n * (1 - p_n)), 0, n_n)
        if window is None:
            return self._computed(self._numpy().binomial(n, p, size))
        k = np.arange(window[0], window[1] + 1, dtype=float)
        log_pmf = (math.lgamma(n_n + 1) - _lgamma(k + 1) - _lgamma(n_n - k + 1)
                   + k * math.log(p_n) + (n_n - k) * math.log1p(-p_n))
        return self._inverse(window[0], log_pmf, size)

    def negative_binomial(self, n, p, size=None):
        """Failures before the ``n``-th success of chance ``p`` (int64)."""
        _check("negative_binomial", "n <= 0", lambda v: v <= 0, n)
        _check("negative_binomial", "p < 0, p > 1 or p is NaN",
               lambda v: ~((v > 0) & (v <= 1)), p)
        n_n, p_n = _number(n), _number(p)
        if n_n is not None and p_n == 1.0:
            return self.integers(0, 1, size)
        window = None
        if n_n is not None and p_n is not None:
            mean = n_n * (1 - p_n) / p_n
            # Geometric tails: the cut must also reach 70 / -log(1 - p).
            spread = math.sqrt(mean / p_n) + 2.0 / -math.log1p(-p_n)
            window = self._window(mean, spread, 0, math.inf)
        if window is None:
            return self._computed(self._numpy().negative_binomial(n, p, size))
        k = np.arange(window[0], window[1] + 1, dtype=float)
        log_pmf = (_lgamma(k + n_n) - _lgamma(k + 1) - math.lgamma(n_n)
                   + n_n * math.log(p_n) + k * math.log1p(-p_n))
        return self._inverse(window[0], log_pmf, size)

    def hypergeometric(self, ngood, nbad, nsample, size=None):
        """Good items among ``nsample`` drawn without replacement (int64)."""
        _check("hypergeometric", "ngood < 0", lambda v: v < 0, ngood)
        _check("hypergeometric", "nbad < 0", lambda v: v < 0, nbad)
        _check("hypergeometric", "nsample < 0", lambda v: v < 0, nsample)
        numbers = [_number(v) for v in (ngood, nbad, nsample)]
        window = None
        if None not in numbers:
            good, bad, sample = numbers
            total = good + bad
            if sample > total:
                raise ArgumentError("hypergeometric: ngood + nbad < nsample")
            mean = sample * good / total if total else 0.0
            spread = math.sqrt(mean * (bad / total) * (total - sample) / max(total - 1, 1)) \
                if total else 0.0
            window = self._window(mean, spread, max(0, sample - bad),
                                  min(sample, good))
        if window is None:
            return self._computed(self._numpy().hypergeometric(ngood, nbad, nsample, size))
        k = np.arange(window[0], window[1] + 1, dtype=float)
        log_pmf = (_log_choose(good, k) + _log_choose(bad, sample - k))
        return self._inverse(window[0], log_pmf, size)

    def logseries(self, p, size=None):
        """Logarithmic series values (``>= 1``, int64)."""
        _check("logseries", "p < 0, p >= 1 or p is NaN", lambda v: ~((v >= 0) & (v < 1)), p)
        p_n = _number(p)
        if p_n == 0.0:
            return self.integers(1, 2, size)
        window = None
        if p_n is not None:
            window = self._window(1.0, 2.0 / -math.log(p_n), 1, math.inf)
        if window is None:
            return self._computed(self._numpy().logseries(p, size))
        k = np.arange(window[0], window[1] + 1, dtype=float)
        return self._inverse(window[0], k * math.log(p_n) - np.log(k), size)

    # --- NumPy's, computed -----------------------------------------------

    def zipf(self, a, size=None):
        """Zipf values (computed by NumPy's generator: tails too long to
        tabulate)."""
        _check("zipf", "a <= 1 or a is NaN", lambda v: ~(v > 1), a)
        return self._computed(self._numpy().zipf(a, size))

    def vonmises(self, mu, kappa, size=None):
        """Von Mises values (computed by NumPy's generator)."""
        _check("vonmises", "kappa < 0", lambda v: v < 0, kappa)
        return self._computed(self._numpy().vonmises(mu, kappa, size))

    def multinomial(self, n, pvals, size=None):
        """Multinomial counts (computed by NumPy's generator)."""
        return self._computed(self._numpy().multinomial(n, pvals, size))

    def multivariate_hypergeometric(self, colors, nsample, size=None, method="marginals"):
        """Multivariate hypergeometric counts (computed by NumPy's generator)."""
        return self._computed(
            self._numpy().multivariate_hypergeometric(colors, nsample, size, method))

    def noncentral_f(self, dfnum, dfden, nonc, size=None):
        """Non-central F values (computed by NumPy's generator)."""
        return self._computed(self._numpy().noncentral_f(dfnum, dfden, nonc, size))

    # --- helpers -----------------------------------------------------------

    def _shape_of(self, size, *parameters):
        return _broadcast(size, *parameters)

    @staticmethod
    def _lazy(value):
        return _lazy(value)


def _gamma_tries(a):
    """Candidates enough for shape ``a >= 1``: Marsaglia and Tsang's method
    rejects a candidate with probability below ``0.05 / a`` (its numerical
    integral: 0.048 at 1, 0.011 at 3, 0.0014 at 20, 0.56 of the bound from
    there on), so that all are rejected with probability below
    :data:`GAMMA_ALL_REJECTED`: 12 candidates at 1, 9 at 3, 5 at 100."""
    rejection = min(0.05 / a, 0.05)
    return max(1, math.ceil(math.log(GAMMA_ALL_REJECTED) / math.log(rejection)))


def _lgamma(values):
    """``log(gamma(values))`` of a float array (``math.lgamma`` each)."""
    return np.array([math.lgamma(v) for v in values.tolist()])


def _log_choose(n, k):
    """``log(C(n, k))`` for a number ``n`` and an array ``k``."""
    return math.lgamma(n + 1) - _lgamma(k + 1) - _lgamma(n - k + 1)


#: The distributions NumPy's legacy module has as functions.
LEGACY = ("standard_exponential", "lognormal", "laplace", "logistic", "gumbel", "weibull",
          "pareto", "power", "rayleigh", "standard_cauchy", "triangular", "wald", "geometric",
          "multivariate_normal", "standard_gamma", "gamma", "chisquare", "beta", "f",
          "standard_t", "dirichlet", "noncentral_chisquare", "poisson", "binomial",
          "negative_binomial", "hypergeometric", "logseries", "zipf", "vonmises", "multinomial",
          "noncentral_f", "bytes")
