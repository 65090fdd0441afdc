"""NumPy's random numbers, lazily, as CuPy's ``cupy.random`` gives them.

A random array is a function of each element's index and a key
(Philox4x32-10, counter-based): it is generated where it is used and fused
with the work around it, so ``(rng.standard_normal(10**7) ** 2).mean()``
stores no random array and moves none. Its values are the same on every
backend and for any number of threads (normals up to the last bits of
``log`` and ``cos``). They are not NumPy's: NumPy's generators are
sequential streams, lazyfuse's are counters (CuPy's differ from NumPy's
too). Every call draws from a stream of its own, keyed by the generator's
seed and the call's number, so a seeded program draws the same values on
every run.

``default_rng(seed)`` gives a :class:`Generator` (``random``, ``uniform``,
``standard_normal``, ``normal``, ``exponential``, ``integers``,
``permutation``, ``shuffle``, ``choice``, and NumPy's other distributions,
most lazily: see ``lazyfuse._distributions``); the module-level functions
(``rand``, ``randn``, ``randint``, ``seed``, ``poisson``…) are NumPy's
legacy ones over a global :class:`RandomState`. Arrays go to the current
context."""

import operator
import os

import numpy as np

from ._array import Array
from ._contexts import current_context
from ._creation import arange, asarray
from ._distributions import (
    Distributions, LEGACY, _broadcast, _float_dtype, _lazy, _out_shape, _shape, _written
)
from ._registry import FUNCTIONS
from .errors import ArgumentError, DTypeError

_MASK = (1 << 64) - 1


def _mix(z):
    """SplitMix64's output function: a 64-bit key from a 64-bit value,
    every bit of which it spreads over all of the key."""
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


class Philox:
    """A seed of lazyfuse's Philox generator in the place of NumPy's bit
    generators (``default_rng(Philox(seed))``): a ``numpy.random.SeedSequence``
    that ``spawn`` splits into independent ones, as Dask's ``da.random``
    splits its generator into one per chunk (the ``"lazyfuse"`` Dask
    backend's ``default_bit_generator``). Its draws are lazyfuse's, not
    NumPy's ``Philox``'s."""

    def __init__(self, seed=None):
        self._seed_seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)

    @property
    def seed_seq(self):
        """The ``SeedSequence`` the generator's key comes from."""
        return self._seed_seq

    def spawn(self, n_children):
        """``n_children`` independent generators' seeds."""
        return [type(self)(s) for s in self._seed_seq.spawn(n_children)]

    def __repr__(self):
        return f"lazyfuse.random.Philox(entropy={self._seed_seq.entropy})"


def _seed_value(seed):
    """A generator's seed as a non-negative integer: a non-negative
    integer as it is; entropy from the system for None; from its words for
    a ``SeedSequence``, a `Philox` or a sequence of non-negative integers
    (what NumPy's ``RandomState`` and Dask's chunks pass)."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, Philox):
        seed = seed.seed_seq
    elif isinstance(seed, (list, tuple, np.ndarray)) and np.ndim(seed) == 1:
        try:
            seed = np.random.SeedSequence([operator.index(v) for v in seed])
        except (TypeError, ValueError) as e:
            raise ArgumentError(f"default_rng: seed sequence {seed!r}: {e} "
                                "(expected non-negative integers)") from None
    if isinstance(seed, np.random.SeedSequence):
        low, high = (int(w) for w in seed.generate_state(2, np.uint64))
        return low | high << 64
    try:
        seed = operator.index(seed)
    except TypeError:
        raise ArgumentError(f"default_rng: seed {seed!r} (expected a non-negative integer, a "
                            "sequence of them, a SeedSequence or None)") from None
    if seed < 0:
        raise ArgumentError(f"default_rng: seed {seed} (expected a non-negative integer)")
    return seed


class Generator(Distributions):
    """NumPy's ``Generator`` over lazyfuse's counter-based generator
    (see the module's documentation; the distributions beyond these
    methods are in ``lazyfuse._distributions``)."""

    def __init__(self, seed=None):
        seed = _seed_value(seed)
        self._seed = _mix(seed & _MASK) ^ (seed >> 64)
        self._calls = 0

    def __repr__(self):
        return f"lazyfuse.random.Generator(calls={self._calls})"

    def _key(self):
        """The key of the next call's stream."""
        self._calls += 1
        return _mix(self._seed ^ _mix(self._calls))

    def _context(self):
        return current_context()._cx

    def _uniform(self, shape, dtype="float64"):
        return Array(self._context().random_uniform(shape, dtype, self._key()))

    def random(self, size=None, dtype=np.float64, out=None):
        """Uniform values in ``[0, 1)``."""
        name = _float_dtype(dtype, "random")
        return _written(self._uniform(_out_shape(size, out), name), out)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        """Standard normal values (Box–Muller of two uniform streams)."""
        name = _float_dtype(dtype, "standard_normal")
        shape = _out_shape(size, out)
        return _written(Array(self._context().random_normal(shape, name, self._key())), out)

    def normal(self, loc=0.0, scale=1.0, size=None):
        """Normal values of mean ``loc`` and deviation ``scale`` (numbers
        or arrays, broadcast)."""
        _non_negative("normal", "scale", scale)
        return _lazy(loc) + _lazy(scale) * self.standard_normal(_broadcast(size, loc, scale))

    def uniform(self, low=0.0, high=1.0, size=None):
        """Uniform values in ``[low, high)``."""
        low, high = _lazy(low), _lazy(high)
        return low + (high - low) * self._uniform(_broadcast(size, low, high))

    def exponential(self, scale=1.0, size=None):
        """Exponential values of mean ``scale``: ``-log(1 - u) * scale``."""
        _non_negative("exponential", "scale", scale)
        u = self._uniform(_broadcast(size, scale))
        return -np.log1p(-u) * _lazy(scale)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Integers in ``[low, high)`` (``[low, high]`` with ``endpoint``),
        of an integer or bool ``dtype``. Between numbers: the remainder of
        64 random bits by the range (a bias below ``range / 2**64``).
        Between arrays: ``floor(u * range)`` of a 53-bit uniform ``u``."""
        if high is None:
            low, high = 0, low
        dtype = np.dtype(dtype)
        if dtype.kind not in "biu":
            raise DTypeError(f"integers: unsupported dtype {dtype} (expected an integer or bool "
                             "dtype)")
        if isinstance(low, (int, np.integer)) and isinstance(high, (int, np.integer)):
            return self._integers_between(int(low), int(high) + bool(endpoint), size, dtype)
        low, high = _lazy(low), _lazy(high) + bool(endpoint)
        u = self._uniform(_broadcast(size, low, high))
        return (low + np.floor(u * (high - low))).astype(dtype)

    def _integers_between(self, low, high, size, dtype):
        bounds = (0, 1) if dtype.kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        if high <= low:
            raise ArgumentError(f"integers: low >= high ({low} >= {high})")
        if low < bounds[0] or high - 1 > bounds[1]:
            raise ArgumentError(f"integers: [{low}, {high}) is out of bounds for {dtype}")
        shape = _shape(size)
        # 64 random bits: two 32-bit halves of two uniform draws.
        halves = [np.floor(self._uniform(shape) * 2.0 ** 32).astype(np.uint64) for _ in range(2)]
        bits = (halves[0] << 32) | halves[1]
        span = high - low
        offset = bits if span == 1 << 64 else bits % np.uint64(span)
        if dtype.kind == "u":
            return (offset + np.uint64(low)).astype(dtype)
        return (offset.astype(np.int64) + low).astype(dtype)

    def permutation(self, x, axis=0):
        """A shuffled ``arange(x)``, or ``x`` shuffled along ``axis``: the
        positions that sort fresh uniform values (a lazy argsort)."""
        if isinstance(x, (int, np.integer)):
            return self._order(int(x))
        x = asarray(x)
        if x.ndim == 0:
            raise ArgumentError("permutation: x must be an integer or at least 1-dimensional")
        axis = operator.index(axis) % x.ndim
        # NumPy's namespace's `take`, which takes complex arrays too.
        return FUNCTIONS["take"](x, self._order(x.shape[axis]), axis=axis)

    def shuffle(self, x, axis=0):
        """``x`` shuffled along ``axis``, in place (a lazy array is re-bound;
        a NumPy array is written)."""
        shuffled = self.permutation(x, axis)
        if isinstance(x, Array):
            x._rebind(shuffled._a)
        else:
            x[...] = shuffled.numpy()

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """Values drawn from ``a`` (or ``arange(a)``): uniformly, or by the
        probabilities ``p`` (a binary search of the running sum); without
        replacement, the first of a permutation (with ``p``, of the order
        of weighted keys: see ``_weighted_sample``)."""
        population = arange(a) if isinstance(a, (int, np.integer)) else asarray(a)
        if population.ndim == 0:
            raise ArgumentError("choice: a must be a positive integer or at least 1-dimensional")
        axis = operator.index(axis) % population.ndim
        n = population.shape[axis]
        shape = _shape(size)
        count = int(np.prod(shape))
        if n == 0 and count:
            raise ArgumentError("choice: a cannot be empty unless no samples are taken")
        if p is not None:
            weights = asarray(p).astype(np.float64)
            if weights.shape != (n,):
                raise ArgumentError(f"choice: p of shape {weights.shape} (expected ({n},))")
            if not replace:
                positions = self._weighted_sample(p, weights, count, shape)
                return FUNCTIONS["take"](population, positions, axis=axis)
            running = np.cumsum(weights)
            at = np.searchsorted(running / running[-1], self._uniform(shape), side="right")
            positions = np.minimum(at, n - 1)
        elif replace:
            positions = self.integers(0, max(n, 1), shape)
        else:
            if count > n:
                raise ArgumentError(f"choice: cannot take a larger sample ({count}) than the "
                                    f"population ({n}) without replacement")
            positions = self._order(n)[:count].reshape(shape)
        return FUNCTIONS["take"](population, positions, axis=axis)

    def _weighted_sample(self, p, weights, count, shape):
        """``count`` positions drawn one after another without replacement,
        each with chance proportional to ``weights`` among those left (as
        NumPy's ``choice(replace=False, p=p)``): the ``count`` smallest
        keys ``E / w`` of exponential ``E`` (Efraimidis and Spirakis), in
        their order, which is that of the draws."""
        if not isinstance(p, Array) and np.count_nonzero(np.asarray(p) > 0) < count:
            raise ArgumentError("choice: fewer non-zero entries in p than size")
        keys = self._exponential(list(weights.shape)) / weights
        return np.argsort(keys, kind="stable")[:count].reshape(shape)

    def _order(self, n):
        """A random permutation of ``range(n)``: an argsort of uniforms."""
        return np.argsort(self._uniform([n]), kind="stable")


def _non_negative(what, name, value):
    if isinstance(value, (int, float, np.ndarray, np.generic)) and np.any(np.asarray(value) < 0):
        raise ArgumentError(f"{what}: {name} < 0")


def default_rng(seed=None):
    """A new :class:`Generator` (``seed``: a non-negative integer, a
    sequence of them, a ``SeedSequence``, a :class:`Philox`, or entropy
    from the system when None); a ``Generator`` as it is."""
    return seed if isinstance(seed, Generator) else Generator(seed)


# --- NumPy's legacy functions, over one global generator -------------------

class RandomState(Generator):
    """NumPy's legacy ``RandomState`` (CuPy's ``cupy.random.RandomState``):
    the legacy method names (``rand``, ``randn``, ``randint``,
    ``random_sample``, ``seed``…) over lazyfuse's generator, with every
    distribution of :class:`Generator`. Its values are not NumPy's."""

    def seed(self, seed=None):
        """Re-seeds this generator (its streams start over)."""
        Generator.__init__(self, seed)

    def rand(self, *shape):
        """Uniform values in ``[0, 1)`` of ``shape``."""
        return self.random(shape)

    def randn(self, *shape):
        """Standard normal values of ``shape``."""
        return self.standard_normal(shape)

    def randint(self, low, high=None, size=None, dtype=int):
        """Integers in ``[low, high)`` (``[0, low)`` without ``high``)."""
        return self.integers(low, high, size, dtype)

    def random_integers(self, low, high=None, size=None):
        """Integers in ``[low, high]`` (``[1, low]`` without ``high``),
        NumPy's deprecated form."""
        low, high = (1, low) if high is None else (low, high)
        return self.integers(low, high, size, endpoint=True)

    def random_sample(self, size=None):
        """Uniform values in ``[0, 1)``."""
        return self.random(size)

    ranf = sample = random_sample

    def get_state(self, legacy=True):
        """Not available: lazyfuse's generators are counters, not states
        (seed one to repeat its draws)."""
        raise ArgumentError("RandomState.get_state: lazyfuse's generators have no state to "
                            "save (they are counters: seed one to repeat its draws)")

    set_state = get_state

    def __repr__(self):
        return f"lazyfuse.random.RandomState(calls={self._calls})"


_global = [RandomState()]


def seed(seed=None):
    """Re-seeds the global generator."""
    _global[0].seed(seed)


def get_state(legacy=True):
    """Not available (see ``RandomState.get_state``)."""
    return _global[0].get_state(legacy)


set_state = get_state


def random(size=None):
    """Uniform values in ``[0, 1)``."""
    return _global[0].random(size)


random_sample = ranf = sample = random


def rand(*shape):
    """Uniform values in ``[0, 1)`` of ``shape``."""
    return _global[0].rand(*shape)


def randn(*shape):
    """Standard normal values of ``shape``."""
    return _global[0].randn(*shape)


def randint(low, high=None, size=None, dtype=int):
    """Integers in ``[low, high)`` (``[0, low)`` without ``high``)."""
    return _global[0].randint(low, high, size, dtype)


def random_integers(low, high=None, size=None):
    """Integers in ``[low, high]`` (NumPy's deprecated form)."""
    return _global[0].random_integers(low, high, size)


def standard_normal(size=None):
    """Standard normal values."""
    return _global[0].standard_normal(size)


def normal(loc=0.0, scale=1.0, size=None):
    """Normal values of mean ``loc`` and deviation ``scale``."""
    return _global[0].normal(loc, scale, size)


def uniform(low=0.0, high=1.0, size=None):
    """Uniform values in ``[low, high)``."""
    return _global[0].uniform(low, high, size)


def exponential(scale=1.0, size=None):
    """Exponential values of mean ``scale``."""
    return _global[0].exponential(scale, size)


def permutation(x):
    """A shuffled ``arange(x)``, or a shuffled copy of ``x``."""
    return _global[0].permutation(x)


def shuffle(x):
    """``x`` shuffled along its first axis, in place."""
    _global[0].shuffle(x)


def choice(a, size=None, replace=True, p=None):
    """Values drawn from ``a`` (see ``Generator.choice``)."""
    return _global[0].choice(a, size, replace, p)


def _legacy(name):
    """NumPy's legacy function ``name``: the global generator's method."""
    def draw(*args, **kwargs):
        return getattr(_global[0], name)(*args, **kwargs)
    draw.__name__ = draw.__qualname__ = name
    draw.__doc__ = getattr(Distributions, name).__doc__
    return draw


for _name in LEGACY:
    globals()[_name] = _legacy(_name)
del _name
