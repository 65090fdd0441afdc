"""Byte and unicode strings (NumPy's ``S`` and ``U`` arrays) in
``@cuda.jit`` kernels: arrays of strings and string fields of records as
arguments (their code units, copied back after the launch), string
constants and other arrays' strings assigned into their elements (NumPy's
padding and truncation), their shapes, and the operations refused,
checked against NumPy (issue 47)."""

import numpy as np
import pytest

from lazyfuse import CompileError, cuda

GREETING = "hi!"


@pytest.mark.parametrize("dtype, text", [("<U12", "XYZ"), ("S12", b"XYZ"), ("U5", "日本語"),
                                         ("S2", b"XYZ"), ("U4", b"ab"), ("S6", "ab")])
def test_constants_stored_padded_and_cut_as_numpy_does(backend, dtype, text):
    @cuda.jit
    def kernel(arr):
        i = cuda.grid(1)
        if i < len(arr) - 1:
            arr[i] = text

    got = np.array(["longer text!"[:np.dtype(dtype).itemsize // (4 if "U" in dtype else 1)]] * 9,
                   dtype=dtype)
    want = got.copy()
    want[:-1] = text  # the zeros after the constant overwrite the old text
    kernel[1, 16](got)
    np.testing.assert_array_equal(got, want)


def test_two_dimensions_shape_and_a_global_constant(backend):
    @cuda.jit
    def kernel(arr, dims):
        i, j = cuda.grid(2)
        if i < arr.shape[0] and j < arr.shape[1]:
            if (i + j) % 2 == 0:
                arr[i, j] = GREETING
            else:
                arr[i, j] = ""
        if i == 0 and j == 0:
            dims[0], dims[1], dims[2], dims[3] = arr.ndim, arr.size, len(arr), arr.shape[1]

    got, dims = np.full((3, 4), "old", "U7"), np.zeros(4, np.int64)
    want = got.copy()
    for i, j in np.ndindex(3, 4):
        want[i, j] = GREETING if (i + j) % 2 == 0 else ""
    kernel[(1, 1), (4, 4)](got, dims)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(dims, [2, 12, 3, 4])


def test_strings_copied_from_another_array_and_through_a_device_function(backend):
    @cuda.jit(device=True)
    def put(out, i, src):
        out[i + 1] = src[i]

    @cuda.jit
    def kernel(src, out, wide):
        i = cuda.grid(1)
        if i < len(src):
            put(out, i, src)
            wide[i] = src[len(src) - 1 - i]

    src = np.array([b"abcdef", b"gh", b"", b"ijklmn"], "S6")
    out, wide = np.full(5, b"zzzz", "S4"), np.full(4, b"q" * 9, "S9")
    want_out, want_wide = out.copy(), wide.copy()
    want_out[1:] = src
    want_wide[:] = src[::-1]
    kernel[1, 4](src, out, wide)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(wide, want_wide)


def test_string_fields_of_records(backend):
    inner = np.dtype([("tag", "S3"), ("v", np.int16)])
    dt = np.dtype([("x", np.int32), ("name", "<U6"), ("codes", "S2", 3), ("p", inner)])

    @cuda.jit
    def kernel(a, names, one):
        i = cuda.grid(1)
        if i < len(a):
            a[i].x = i + 1
            a[i]["name"] = "rec"
            a[i].codes[i % 3] = b"ok"
            a[i].p.tag = b"t"
            names[i] = a[i].name
        if i == 0:
            one.name = "single"

    got, names = np.zeros(3, dt), np.full(3, "zzzzzzzz", "U8")
    got["p"]["tag"] = b"old"
    one = np.zeros(1, dt)[0]
    want = got.copy()
    want["x"] = [1, 2, 3]
    want["name"] = "rec"
    for i in range(3):
        want["codes"][i, i % 3] = b"ok"
    want["p"]["tag"] = b"t"
    kernel[1, 4](got, names, one)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(names, np.full(3, "rec", "U8"))
    assert one["name"] == "single"


def test_shared_records_with_a_string_field(backend):
    rec = np.dtype([("n", np.int32), ("s", "U4")])

    @cuda.jit
    def kernel(out):
        sm = cuda.shared.array(4, dtype=rec)
        i = cuda.threadIdx.x
        sm[i].s = "abcd"
        sm[i].n = i
        cuda.syncthreads()
        out[i] = sm[3 - i].s

    out = np.zeros(4, "U6")
    kernel[1, 4](out)
    np.testing.assert_array_equal(out, np.full(4, "abcd", "U6"))


def test_strings_passed_in_are_not_copied_back(backend):
    @cuda.jit
    def kernel(arr):
        arr[0] = "new"

    arr = np.array(["old"], "U3")
    kernel[1, 1](cuda.In(arr))
    assert arr[0] == "old"


def test_what_is_refused_names_the_operation():
    @cuda.jit
    def read(arr, out):
        s = arr[0]
        out[0] = len(s)

    @cuda.jit
    def compare(arr, out):
        out[0] = arr[0] == "a"

    @cuda.jit
    def non_ascii(arr):
        arr[0] = "é"

    @cuda.jit
    def kinds(arr, other):
        arr[0] = other[0]

    @cuda.jit
    def in_tuple(t):
        t[0][0] = "a"

    @cuda.jit
    def a_number(arr):
        arr[0] = 1

    out = np.zeros(1, np.int64)
    with pytest.raises(CompileError, match="reading a string of the array of strings 'arr'"):
        read[1, 1](np.zeros(2, "U3"), out)
    with pytest.raises(CompileError, match="reading a string"):
        compare[1, 1](np.zeros(2, "S3"), out)
    with pytest.raises(CompileError, match="not ASCII"):
        non_ascii[1, 1](np.zeros(2, "S3"))
    with pytest.raises(CompileError, match="a byte string to a unicode one"):
        kinds[1, 1](np.zeros(2, "S3"), np.zeros(2, "U3"))
    with pytest.raises(CompileError, match="an array of strings inside a tuple"):
        in_tuple[1, 1]((np.zeros(2, "S3"),))
    with pytest.raises(CompileError, match="other than a string constant"):
        a_number[1, 1](np.zeros(2, "S3"))


def test_device_arrays_of_strings_stay_numpy(backend):
    @cuda.jit
    def kernel(arr):
        i = cuda.grid(1)
        if i < arr.size:
            arr[i] = "dev"

    host = np.array(["a", "bb", "ccc"], "U5")
    for made in (cuda.to_device(host), cuda.device_array_like(host), cuda.device_array(3, "U5")):
        kernel[1, 4](made)
        np.testing.assert_array_equal(made.copy_to_host(), np.full(3, "dev", "U5"))
    assert host[2] == "ccc"


def test_stores_other_than_one_assignment_are_refused():
    @cuda.jit
    def unpacked(arr):
        arr[0], arr[1] = "a", "b"

    with pytest.raises(CompileError, match="other than by one assignment of a string"):
        unpacked[1, 1](np.zeros(2, "U3"))
