"""The discriminant and a few reductions through the ctypes binding,
checked against NumPy. Run by scripts/test.sh (LAZYFUSE_LIB names the library)."""
import sys

import numpy as np

from lazyfuse_ctypes import Context, LazyfuseError, Ufunc

rng = np.random.default_rng(7)
a = rng.uniform(0.0, 1.0, 10_000).astype(np.float32)
b = rng.uniform(2.0, 3.0, 10_000).astype(np.float32)
c = rng.uniform(0.0, 1.0, 10_000).astype(np.float32)
m = rng.uniform(-1.0, 1.0, (300, 40))

cx = Context("cpu")
xa, xb, xc, xm = cx.array(a), cx.array(b), cx.array(c), cx.array(m)

disc = Ufunc("sqrt(b*b - 4*a*c)", ["a", "b", "c"])
d = disc(xa, xb, xc)
np.testing.assert_allclose(d.numpy(), np.sqrt(b * b - 4 * a * c), rtol=1e-6)
np.testing.assert_allclose(d.reduce("sum").numpy(), np.sqrt(b * b - 4 * a * c).sum(dtype=np.float64), rtol=1e-5)
np.testing.assert_allclose(xm.reduce("mean", axis=0).numpy(), m.mean(axis=0), rtol=1e-12)
np.testing.assert_allclose(xm.apply("absolute").reduce("max", axis=-1).numpy(), np.abs(m).max(axis=-1))
np.testing.assert_array_equal(xm.scalar("gt", 0.5).numpy(), m > 0.5)
assert xm.scalar("mul", 2).dtype == np.float64 and xm.shape == (300, 40)

try:
    Ufunc("sqrt(b*b - 4*a*c", ["a", "b", "c"])
    sys.exit("expected a parse error")
except LazyfuseError as e:
    assert "expected ')' at column 17" in str(e), e
try:
    xa.apply("add", xm)
    sys.exit("expected a shape error")
except LazyfuseError as e:
    assert "broadcast" in str(e), e

print("Python example: ok (results match NumPy", np.__version__ + ")")
