"""CUDA C beyond the first subset (issue 48): function templates
instantiated as CuPy's ``RawModule(name_expressions=...)`` does (and
``__device__`` templates called with their arguments), and ``printf``,
on every backend under test, against NumPy."""

import numpy as np
import pytest

import lazyfuse as lf
from lazyfuse import CompileError

TEMPLATES = r"""
template <typename T>
__device__ T twice(T v) { return v + v; }

template <typename T, int N>
__global__ void scale(const T* x, T* y, T a, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) y[i] = twice<T>(a * x[i]) + N;
}
"""


@pytest.mark.parametrize("expression, dtype, a, shift", [
    ("scale<float, 3>", np.float32, 1.5, 3), ("scale<double, -1>", np.float64, 0.25, -1),
    ("scale< unsigned int , 2 >", np.uint32, 3, 2), ("scale<long long, 0>", np.int64, -2, 0)])
def test_template_kernels_run_each_instance_in_its_dtypes(backend, expression, dtype, a, shift):
    module = lf.RawModule(code=TEMPLATES, name_expressions=["scale<float, 3>"])
    kernel = module.get_function(expression)  # an instance not named up front is read now
    x = np.arange(10).astype(dtype)
    y = lf.zeros(10, dtype=dtype)
    kernel((2,), (8,), (lf.asarray(x), y, dtype(a), np.int32(10)))
    got = np.asarray(y)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, (2 * (dtype(a) * x) + shift).astype(dtype))
    # The first instance still runs after the module read another.
    module.get_function("scale<float, 3>")((1,), (4,), (lf.asarray(np.ones(4, np.float32)),
                                                        lf.zeros(4, dtype=np.float32),
                                                        np.float32(1), np.int32(4)))


def test_name_expressions_that_name_no_instance_are_clear_errors():
    module = lf.RawModule(code=TEMPLATES)
    for expression, message in [
            ("scale<float>", "takes 2 arguments, got 1"),
            ("nope<float>", "'nope' is not a template of this source \\(its templates: scale, twice"),
            ("scale<float*, 2>", "'float\\*' is neither a type nor an integer"),
            ("scale<2, 2>", "parameter T takes a type, got 2"),
            ("scale<float, float>", "parameter N takes a number, got the type float32")]:
        with pytest.raises(CompileError, match=message):
            module.get_function(expression)
    # The module is unchanged by the failures.
    assert module.get_function("scale<float, 1>") is not None


def test_printf_writes_the_line_c_formats(backend, capfd):
    module = lf.RawModule(code=r"""
    extern "C" __global__ void show(const float* x, int n, unsigned int u) {
        int i = threadIdx.x;
        if (i < 2) printf("thread %d: x=%f n=%i u=%u %s %c 100%%\n", i, x[i], n, u, "ok", 'z');
    }""")
    x = np.array([1.5, -2.25, 3, 4], np.float32)
    module.get_function("show")((1,), (4,), (x, np.int32(7), np.uint32(9)))
    lf.compute(lf.asarray(x))  # the launch printed before returning, as Numba's print does
    assert sorted(capfd.readouterr().out.splitlines()) == [
        "thread 0: x=1.500000 n=7 u=9 ok z 100%", "thread 1: x=-2.250000 n=7 u=9 ok z 100%"]


@pytest.mark.parametrize("call, message", [
    (r'printf("%5d\n", i);', "printf's '%5d' \\(widths, flags and precisions are not read"),
    (r'printf("%x\n", i);', "printf's '%x'"),
    (r'printf("no newline");', "does not end in"),
    (r'printf("%d %d\n", i);', "printf's '%d' without its argument"),
    (r'printf("%d\n", i, i);', "1 more argument"),
    (r'printf("%s\n", i);', "'%s' of other than a string literal")])
def test_printf_beyond_what_is_read_names_the_conversion(call, message):
    source = 'extern "C" __global__ void k(int n) { int i = threadIdx.x; ' + call + " }"
    with pytest.raises(CompileError, match=message):
        lf.RawModule(code=source).get_function("k")((1,), (1,), (np.int32(1),))
