"""Records (NumPy structured dtypes) in ``@cuda.jit`` kernels: structured
arrays and single records as arguments (one array per field, written back
after the launch), fields read and written by attribute, name and number,
array fields, whole records assigned, records bound to locals and passed
to device functions, global record arrays and shared arrays of records,
checked against NumPy (issue 47)."""

import numpy as np
import pytest

from lazyfuse import CompileError, cuda

REC = np.dtype([("a", np.float64), ("b", np.int32), ("c", np.complex64), ("d", np.uint8, 5)],
               align=True)
GRID = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])
NESTED = np.dtype([("p", [("x", np.float32), ("y", np.float32)]), ("w", np.int16)])
TABLE = np.array([(1.5, 2), (3.5, 4), (5.5, 6)], dtype=[("x", np.float64), ("y", np.int64)])


def _sample(n=4):
    a = np.zeros(n, REC)
    a["a"] = np.arange(n) / 2
    a["b"] = np.arange(n) + 1
    a["c"] = np.arange(n) * 1j + 0.5
    a["d"] = np.arange(5 * n, dtype=np.uint8).reshape(n, 5)
    return a


def test_fields_by_attribute_name_and_array_fields(backend):
    @cuda.jit
    def kernel(ary, out):
        i = cuda.grid(1)
        if i < len(ary):
            ary[i].a = ary[i]["b"] * 2.5
            ary[i]["b"] += 1
            ary[i].c = ary[i].c * 2j
            ary[i].d[1] = ary[i].d[0] + ary[i].d[4]
            out[i] = ary.a[i] + ary[i][1]

    got, want = _sample(), _sample()
    out = np.zeros(4)
    kernel[1, 8](got, out)
    want["a"] = want["b"] * 2.5
    want["b"] += 1
    want["c"] *= 2j
    want["d"][:, 1] = want["d"][:, 0] + want["d"][:, 4]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out, want["a"] + want["b"])


def test_whole_records_and_a_local_bound_to_a_record(backend):
    @cuda.jit(device=True)
    def bump(r, v):
        r.a = r.a + v
        r["d"][2] = 9

    @cuda.jit
    def kernel(ary, i, j):
        ary[i] = ary[j]
        x = ary[j + 1]
        x.b = 77
        bump(ary[0], 10.0)
        bump(x, 1.0)

    got, want = _sample(), _sample()
    kernel[1, 1](got, 0, 2)
    want[0] = want[2]
    want[3]["b"] = 77
    for k, v in ((0, 10.0), (3, 1.0)):
        want[k]["a"] += v
        want[k]["d"][2] = 9
    np.testing.assert_array_equal(got, want)


def test_record_arguments_are_written_back_unless_in(backend):
    @cuda.jit
    def kernel(r, src, v):
        r.i = v
        for k in range(3):
            r.j[k, 1] = src[k]
        r["j"][2, 0] = r.j[0, 1] * 2

    host = np.zeros(2, GRID)
    src = np.array([1.0, 2.0, 3.0], np.float32)
    kernel[1, 1](host[1], src, 5)
    want = np.zeros(2, GRID)
    want[1]["i"] = 5
    want[1]["j"][:, 1] = src
    want[1]["j"][2, 0] = 2.0
    np.testing.assert_array_equal(host, want)
    untouched = np.zeros(2, GRID)
    kernel[1, 1](cuda.In(untouched[1]), src, 5)
    np.testing.assert_array_equal(untouched, np.zeros(2, GRID))


def test_array_fields_assigned_whole(backend):
    @cuda.jit
    def from_record(dest, source):
        dest["j"] = source.j

    @cuda.jit
    def from_array_and_number(dest, src, v):
        dest[1].j = src
        dest[2]["j"] = v

    source = np.zeros(1, GRID)[0]
    source["j"] = np.arange(6, dtype=np.float32).reshape(3, 2)
    src = np.full((3, 2), 7, np.float32)
    dest = np.zeros(3, GRID)
    from_record[1, 1](dest[0], source)
    from_array_and_number[1, 1](dest, src, 1.5)
    np.testing.assert_array_equal(dest["j"][0], source["j"])
    np.testing.assert_array_equal(dest["j"][1], src)
    np.testing.assert_array_equal(dest["j"][2], np.full((3, 2), 1.5, np.float32))


def test_nested_records_and_two_dimensional_record_arrays(backend):
    @cuda.jit
    def kernel(a):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j].p.x = i * 10 + j
            a[i, j]["p"]["y"] = a[i, j].w * 0.5

    got = np.zeros((3, 2), NESTED)
    got["w"] = np.arange(6).reshape(3, 2)
    kernel[(1, 1), (4, 4)](got)
    i, j = np.indices((3, 2))
    np.testing.assert_array_equal(got["p"]["x"], i * 10 + j)
    np.testing.assert_array_equal(got["p"]["y"], got["w"] * 0.5)


def test_global_record_arrays_and_shared_arrays_of_records(backend):
    @cuda.jit
    def kernel(x, y, out):
        table = cuda.const.array_like(TABLE)
        sm = cuda.shared.array(4, dtype=GRID)
        t = cuda.threadIdx.x
        sm[t] = x[t]
        cuda.syncthreads()
        y[3 - t] = sm[t]
        if t < len(table):
            out[t] = table[t]["x"] + table[t].y

    x = np.zeros(4, GRID)
    x["i"] = np.arange(4)
    x["j"] = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    y = cuda.device_array_like(x)
    out = np.zeros(3)
    kernel[1, 4](x, y, out)
    np.testing.assert_array_equal(y.copy_to_host(), x[::-1])
    np.testing.assert_array_equal(out, TABLE["x"] + TABLE["y"])


def test_record_types_and_signatures():
    rec = cuda.from_dtype(REC)
    assert np.dtype(rec) == REC and rec == cuda.from_dtype(REC)

    @cuda.jit((rec[:],))
    def kernel(a):
        a[cuda.grid(1)].b = 3

    a = _sample(2)
    kernel[1, 2](a)
    assert list(a["b"]) == [3, 3]


def test_what_records_cannot_do_is_named():
    @cuda.jit
    def as_value(a, out):
        out[0] = a[0]

    with pytest.raises(CompileError, match="a record used as a value"):
        as_value[1, 1](_sample(), np.zeros(1))

    @cuda.jit
    def missing(a):
        a[0].zz = 1

    with pytest.raises(CompileError, match="the field 'zz'"):
        missing[1, 1](_sample())

    @cuda.jit
    def whole_field(a):
        a.b = 1

    with pytest.raises(CompileError, match="a whole field of an array of records"):
        whole_field[1, 1](_sample())

    @cuda.jit
    def dates(a):
        a[0].n = 1

    with pytest.raises(CompileError, match=r"dtype datetime64\[D\]"):
        dates[1, 1](np.zeros(1, [("n", np.int32), ("d", "M8[D]")]))


def test_local_arrays_of_records_and_rows_of_array_fields(backend):
    @cuda.jit(device=True)
    def total(row):
        s = 0.0
        for k in range(len(row)):
            s += row[k]
        return s

    @cuda.jit
    def kernel(a, r, out):
        loc = cuda.local.array(2, dtype=GRID)
        loc[1] = r
        a[0] = loc[1]
        out[0] = total(r.j[1])
        out[1] = total(a.j[0, 2])

    a = np.zeros(2, GRID)
    r = np.zeros(1, GRID)[0]
    r["i"] = 4
    r["j"] = np.arange(6).reshape(3, 2)
    out = np.zeros(2)
    kernel[1, 1](a, r, out)
    assert a[0] == r and not a[1]["j"].any()
    np.testing.assert_array_equal(out, [r["j"][1].sum(), r["j"][2].sum()])


PAIR = np.dtype([("g", np.int32), ("h", np.float32, 2)], align=True)


@cuda.jit(device=True)
def _pick(a, b, i):
    if i % 2 == 0:
        return a[i]
    return b[i]


def test_a_device_function_returning_a_record(backend):
    @cuda.jit
    def kernel(a, b, out):
        i = cuda.grid(1)
        if i < len(out):
            out[i] = _pick(a, b, i)

    a, b = np.zeros(4, PAIR), np.zeros(4, PAIR)
    a["g"], a["h"] = np.arange(4), np.arange(8).reshape(4, 2)
    b["g"], b["h"] = -np.arange(4), -np.arange(8).reshape(4, 2)
    out = np.zeros(4, PAIR)
    kernel[1, 4](a, b, out)
    want = np.where(np.arange(4) % 2 == 0, a, b)
    np.testing.assert_array_equal(out, want)


def test_a_record_result_of_another_layout_is_refused():
    @cuda.jit(device=True)
    def first(r):
        return r[0]

    @cuda.jit
    def kernel(a, out):
        out[0] = first(a)

    with pytest.raises(CompileError, match="another layout"):
        kernel[1, 1](np.zeros(2, PAIR), np.zeros(1, NESTED))
