"""Enum members as ``@cuda.jit`` kernel arguments: ``==``/``!=``/``is``/
``is not`` by Python's rules (plain Enum members by identity, IntEnum
members by value for ``==``), IntEnum members computing as ints, members
of two classes never identical (issue 47)."""

import enum

import numpy as np
import pytest

from lazyfuse import CompileError, cuda


class Color(enum.Enum):
    red = 1
    green = 2


class Flavor(enum.Enum):
    mint = 1  # the same value as Color.red, but another member
    tuple_valued = (1.5, 2.5)


class Size(enum.IntEnum):
    small = 2
    large = 500


class Level(enum.IntEnum):
    two = 2


def _compare(a, b, out):
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b
    out[4] = a == Color.red
    out[5] = a is Color.red


@pytest.mark.parametrize("a, b", [
    (Color.red, Color.red), (Color.red, Color.green), (Color.red, Flavor.mint),
    (Flavor.tuple_valued, Flavor.tuple_valued), (Size.small, Level.two),
    (Size.small, Size.large), (Size.large, 500), (Color.green, 2),
])
def test_compare_like_python(backend, a, b):
    got, want = np.zeros(6, np.bool_), np.zeros(6, np.bool_)
    cuda.jit(_compare)[1, 1](a, b, got)
    _compare(a, b, want)
    np.testing.assert_array_equal(got, want)


def test_int_enum_computes_as_int(backend):
    @cuda.jit
    def kernel(size, out):
        out[0] = size + 1
        out[1] = size > Size.small

    out = np.zeros(2, np.int64)
    kernel[1, 1](Size.large, out)
    assert out.tolist() == [501, 1]


def test_ordering_plain_members_refused():
    @cuda.jit
    def kernel(a, out):
        out[0] = a < Color.green

    with pytest.raises(CompileError, match="ordering Enum members"):
        kernel[1, 1](Color.red, np.zeros(1))
