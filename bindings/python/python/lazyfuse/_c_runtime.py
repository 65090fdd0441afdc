"""C's integer division and remainder, written in the kernel dialect for
CUDA C translated by ``_c_translate``: C truncates toward zero where
Python's ``//`` and ``%`` floor (``-7 / 2`` is -3 in C, ``-7 // 2`` is -4
in Python). Inlined as device functions where a kernel divides signed
integers."""


def c_div(a, b):
    """``a / b`` of C's signed integers: the quotient truncated."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_rem(a, b):
    """``a % b`` of C's signed integers: the sign of ``a``."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r
