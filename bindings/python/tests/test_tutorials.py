"""The tutorials' programs (the project's seeds 002 and 004), unchanged
except for one import: `from numba import ...` became `from lazyfuse import ...`."""

import textwrap

import numpy as np

PROGRAM_002 = textwrap.dedent('''
    import numpy as np
    from lazyfuse import cuda, vectorize, guvectorize, float32

    @cuda.jit
    def doubled(arr):
        x_idx = cuda.threadIdx.x
        y_idx = cuda.threadIdx.y
        arr[x_idx, y_idx] *= 2

    arr = np.random.randn(3, 3).astype(np.float32)
    before = arr.copy()
    doubled[1, (3, 3)](arr)
    results["doubled"] = (arr, before * 2)

    @cuda.jit
    def doubled_auto_grid(arr):
        x_idx, y_idx = cuda.grid(2)
        arr[x_idx, y_idx] *= 2

    arr = np.random.randn(3, 3).astype(np.float32)
    before = arr.copy()
    doubled_auto_grid[1, (3, 3)](arr)
    results["doubled_auto_grid"] = (arr, before * 2)

    @cuda.jit
    def doubled_man_copy(arr, out):
        x_idx, y_idx = cuda.grid(2)
        out[x_idx, y_idx] = arr[x_idx, y_idx] * 2

    arr = np.random.randn(3, 3).astype(np.float32)
    out = cuda.device_array_like(arr)
    arr_gpu = cuda.to_device(arr)
    doubled_man_copy[1, (3, 3)](arr_gpu, out)
    out = out.copy_to_host()
    results["doubled_man_copy"] = (out, arr * 2)

    @cuda.reduce
    def reduce_gpu(a, b):
        return a + b

    arr = np.random.randn(3, 3).astype(np.float32)
    flattened_arr = arr.flatten()
    reduced_arr = reduce_gpu(flattened_arr)
    results["reduce_gpu"] = (reduced_arr, flattened_arr.sum())

    @vectorize(
        [float32(float32), ],
        target="cuda"
    )
    def doubled_ufunc(arr):
        arr *= 2
        return arr

    arr = np.random.randn(3, 3).astype(np.float32)
    out = doubled_ufunc(arr)
    results["doubled_ufunc"] = (np.asarray(out), arr * 2)

    @guvectorize(
        [(float32[:, :], float32[:, :])],
        "(m,n)->(m,n)",
        target="cuda"
    )
    def doubled_gufunc(arr, out):
        for i in range(arr.shape[0]):
            for j in range(arr.shape[1]):
                out[i, j] = arr[i, j] * 2

    arr = np.random.randn(3, 3).astype(np.float32)
    out = cuda.device_array_like(arr)
    doubled_gufunc(arr, out)
    out = out.copy_to_host()
    results["doubled_gufunc"] = (out, arr * 2)
''')

PROGRAM_004 = textwrap.dedent('''
    from lazyfuse import cuda
    import numpy as np
    import math

    @cuda.jit
    def increment_by_one(an_array):
        pos = cuda.grid(1)
        if pos < an_array.size:
            an_array[pos] += 1

    my_array = np.array([3, 5, 9, 13, 7, 2, 4, 1])

    threadsperblock = 4
    blockspergrid = math.ceil(my_array.size / threadsperblock)
    increment_by_one[blockspergrid, threadsperblock](my_array)
    results["increment_by_one"] = (my_array, np.array([4, 6, 10, 14, 8, 3, 5, 2]))

    ary = np.arange(10)
    d_ary = cuda.to_device(ary)
    results["to_device"] = (d_ary.copy_to_host(), ary)

    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    results["sum_reduce"] = (sum_reduce(np.arange(10.0)), 45.0)
''')


def test_seed_002_runs_with_one_changed_import(tmp_path):
    results = run_with_source(PROGRAM_002, tmp_path, "seed_002")
    assert set(results) == {"doubled", "doubled_auto_grid", "doubled_man_copy", "reduce_gpu",
                            "doubled_ufunc", "doubled_gufunc"}
    for name, (got, want) in results.items():
        # reduce_gpu sums nine f32 values in another order than NumPy.
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-5, err_msg=name)


def test_seed_004_runs_with_one_changed_import(tmp_path):
    results = run_with_source(PROGRAM_004, tmp_path, "seed_004")
    for name, (got, want) in results.items():
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)


def run_with_source(program, tmp_path, name):
    """Runs ``program`` as a module file, so ``inspect.getsource`` finds its functions."""
    import importlib.util
    import sys
    path = tmp_path / f"{name}.py"
    path.write_text("results = {}\n" + program)
    np.random.seed(0)  # the programs draw their inputs with np.random
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.results
