#!/usr/bin/env bash
# The whole lazyfuse test suite: every crate's unit, integration and doc
# tests, then every example, then the C and Python examples of the C API,
# then the Python package's pytest suite.
# Usage: bash scripts/test.sh   (from anywhere in the repository)
# It installs what it needs: NVRTC and the CUDA headers (PyPI wheels, into
# target/cuda-wheels), and NumPy, maturin and pytest (into target/py-venv, for
# the Python example and package).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each section's heading says how long the run has taken so far, to find
# where CI's time goes.
section() { echo "== $* (${SECONDS} s in)"; }

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo is not installed (https://rustup.rs)" >&2
  exit 1
fi

# NVRTC and the CUDA headers, so that every kind of generated kernel is
# compiled by the real compiler: from the PyPI wheels, into target/cuda-wheels,
# unless LAZYFUSE_NVRTC already names a libnvrtc.
if [ -z "${LAZYFUSE_NVRTC:-}" ]; then
  wheels="$PWD/target/cuda-wheels/nvidia"
  if [ ! -e "$wheels/cuda_nvrtc/lib/libnvrtc.so.12" ] || [ ! -e "$wheels/cuda_runtime/include/cuda_fp16.h" ]; then
    echo "installing NVRTC and the CUDA headers (PyPI: nvidia-cuda-nvrtc-cu12, nvidia-cuda-runtime-cu12) into target/cuda-wheels"
    python3 -m pip install --quiet --disable-pip-version-check --target target/cuda-wheels \
      nvidia-cuda-nvrtc-cu12 nvidia-cuda-runtime-cu12 || echo "warning: the NVRTC wheels could not be installed"
  fi
  if [ -e "$wheels/cuda_nvrtc/lib/libnvrtc.so.12" ]; then
    export LAZYFUSE_NVRTC="$wheels/cuda_nvrtc/lib/libnvrtc.so.12"
    export LAZYFUSE_CUDA_INCLUDE="$wheels/cuda_runtime/include"
  fi
fi
if [ -n "${LAZYFUSE_NVRTC:-}" ]; then
  # NVRTC is here: its tests must run, not skip.
  export LAZYFUSE_REQUIRE_NVRTC=1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
extra_passed=0
extra_skipped=0

# One build serves every step below: the suites run again under other
# settings, the examples, the benchmark harness and the C library all come
# from what `cargo test --workspace --all-targets` built (target/debug). A
# cargo call selecting fewer targets would resolve dependency features
# differently and rebuild most of the tree.
# Unit, integration and bench-smoke tests, then doc tests; output is kept to
# print one total at the end (cargo prints one line per test binary).
section "cargo test (unit, integration and bench-smoke tests)"
cargo test --workspace --all-targets --locked 2>&1 | tee "$log"
section "cargo test --doc"
cargo test --workspace --doc --locked 2>&1 | tee -a "$log"
# The examples as programs and the C library (seconds: the same artifacts).
cargo build --workspace --all-targets --locked

# The test executables just built, by target name.
executables=$(cargo test --workspace --all-targets --locked --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["target"]["name"], m["executable"])')
# Runs integration suites of the root package again, with the environment given before the call.
rerun() {
  for suite in "$@"; do
    exe=$(printf '%s\n' "$executables" | awk -v s="$suite" '$1 == s { print $2 }')
    if [ -z "$exe" ]; then
      echo "error: no test executable for suite '$suite'" >&2
      exit 1
    fi
    echo "     Running $suite again"
    "$exe" 2>&1 | tee -a "$log"
  done
}
section "suites again under other settings"
# The CPU backend runs AVX2 loops where the CPU has them: test the portable ones too.
LAZYFUSE_NO_AVX2=1 rerun cpu_backend differential api jit
# Its JIT tier compiles kernels once they have run enough elements: run the
# CPU suites with every kernel compiled, and with none.
LAZYFUSE_JIT=always rerun cpu_backend differential api memory concurrency short_reductions
LAZYFUSE_JIT=never rerun cpu_backend differential api kernels gufuncs

section "examples"
for example in examples/*.rs examples/*/main.rs; do
  name=$(basename "$example" .rs)
  [ "$name" = main ] && name=$(basename "$(dirname "$example")")
  if "target/debug/examples/$name" >"target/example-$name.log" 2>&1; then
    echo "example $name: ok"
    extra_passed=$((extra_passed + 1))
  else
    cat "target/example-$name.log"
    echo "example $name: FAILED"
    exit 1
  fi
done

section "benchmark harness (quick run: that it runs and writes valid JSON; timings come from release builds)"
if target/debug/lazyfuse-bench --quick --out target/bench-quick >target/bench-quick.log 2>&1 &&
  { ! command -v python3 >/dev/null 2>&1 || python3 -m json.tool target/bench-quick/bench.json >/dev/null; }; then
  echo "benchmark harness: ok (target/bench-quick/bench.md)"
  extra_passed=$((extra_passed + 1))
else
  cat target/bench-quick.log
  echo "benchmark harness: FAILED"
  exit 1
fi

section "C API examples"
lib_dir="$PWD/target/debug"

if command -v cc >/dev/null 2>&1; then
  cc -std=c99 -Wall -Wextra -Werror -I bindings/include bindings/examples/c/discriminant.c \
    -L "$lib_dir" -llazyfuse_ffi -lm -o target/discriminant
  LD_LIBRARY_PATH="$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ./target/discriminant
  extra_passed=$((extra_passed + 1))
else
  echo "SKIPPED: the C example (no C compiler 'cc' on this machine)"
  extra_skipped=$((extra_skipped + 1))
fi

python=""
if command -v python3 >/dev/null 2>&1; then
  if python3 -c "import numpy" >/dev/null 2>&1; then
    python=python3
  elif [ -x target/py-venv/bin/python ] && target/py-venv/bin/python -c "import numpy" >/dev/null 2>&1; then
    python=target/py-venv/bin/python
  else
    echo "installing NumPy into target/py-venv for the Python example"
    if python3 -m venv target/py-venv && target/py-venv/bin/pip install --quiet numpy; then
      python=target/py-venv/bin/python
    fi
  fi
fi
if [ -n "$python" ]; then
  LAZYFUSE_LIB="$lib_dir/liblazyfuse_ffi.so" PYTHONPATH=bindings/examples/python \
    "$python" bindings/examples/python/example.py
  extra_passed=$((extra_passed + 1))
else
  echo "SKIPPED: the Python example (no python3 with NumPy, and it could not be installed)"
  extra_skipped=$((extra_skipped + 1))
fi

section "Python package (bindings/python: built with maturin into target/py-venv, then pytest)"
venv=target/py-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || true
fi
if [ -x "$venv/bin/python" ] &&
  "$venv/bin/pip" install --quiet --disable-pip-version-check numpy maturin pytest "dask[array]" distributed xarray \
    scikit-learn array-api-compat; then
  # The package's Rust build goes to target/python (release, as pip builds it).
  PATH="$PWD/$venv/bin:$PATH" CARGO_TARGET_DIR="$PWD/target/python" \
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-build-isolation ./bindings/python
  "$venv/bin/python" -m pytest -q bindings/python/tests 2>&1 | tee target/pytest.log
  python_passed=$(grep -Eo '[0-9]+ passed' target/pytest.log | grep -Eo '[0-9]+' || echo 0)
  extra_passed=$((extra_passed + python_passed))
  # The Python array API standard's suite (vendored: third_party/array-api-tests),
  # its expected failures listed with their reasons.
  if "$venv/bin/pip" install --quiet --disable-pip-version-check "hypothesis>=6.151" \
       "ndindex>=1.8" pytest-json-report; then
    (cd third_party/array-api-tests &&
      ARRAY_API_TESTS_MODULE=lazyfuse ARRAY_API_TESTS_VERSION=2024.12 \
      "../../$venv/bin/python" -m pytest -q -p no:cacheprovider array_api_tests \
        --ignore=array_api_tests/test_signatures.py --max-examples 20 --hypothesis-seed=0 \
        --disable-deadline --xfails-file lazyfuse-xfails.txt) >target/array-api.log 2>&1 || true
    tail -1 target/array-api.log
    if tail -1 target/array-api.log | grep -Eq '[0-9]+ failed|[0-9]+ errors?|no tests ran'; then
      echo "the array API suite: FAILED (beyond third_party/array-api-tests/lazyfuse-xfails.txt)"
      exit 1
    fi
    api_passed=$(grep -Eo '[0-9]+ passed' target/array-api.log | grep -Eo '[0-9]+' || echo 0)
    extra_passed=$((extra_passed + api_passed))
  else
    echo "SKIPPED: the array API suite (hypothesis could not be installed)"
    extra_skipped=$((extra_skipped + 1))
  fi
  # Numba's own CUDA tests (numba-cuda's cudapy and doc_examples, from its
  # wheel on PyPI) through a shim that only binds Numba's names to
  # lazyfuse's: the expected failures are listed with their reasons in
  # bindings/python/numba_suite/xfails.txt (strict: one that passes fails).
  if "$venv/bin/pip" install --quiet --disable-pip-version-check cffi ml_dtypes llvmlite; then
    status=0
    "$venv/bin/python" bindings/python/numba_suite/run.py -q >target/numba-suite.log 2>&1 || status=$?
    tail -1 target/numba-suite.log
    if [ "$status" -eq 3 ]; then
      echo "SKIPPED: Numba's CUDA tests (the numba-cuda wheel could not be downloaded)"
      extra_skipped=$((extra_skipped + 1))
    elif [ "$status" -ne 0 ]; then
      grep -E "^(FAILED|ERROR|XPASS)" target/numba-suite.log || tail -30 target/numba-suite.log
      echo "Numba's CUDA tests: FAILED (beyond bindings/python/numba_suite/xfails.txt)"
      exit 1
    else
      numba_passed=$(tail -1 target/numba-suite.log | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+' || echo 0)
      extra_passed=$((extra_passed + numba_passed))
    fi
  else
    echo "SKIPPED: Numba's CUDA tests (cffi, ml_dtypes and llvmlite could not be installed)"
    extra_skipped=$((extra_skipped + 1))
  fi
  # The Python benchmarks, quick (that they run and their results agree
  # with NumPy's; timings come from running them in full).
  for bench in "bench.py --sizes 10000 --repeats 2" "bench_join.py --n 1000 --repeats 3" \
               "bench_index.py --n 64 --repeats 3" "bench_functions.py --n 64 --repeats 3" \
               "bench_programs.py --sizes 1000 --repeats 1" "bench_xoroshiro.py --sizes 1000 --repeats 1" \
               "bench_launch.py --rounds 1 --calls 10" "bench_kernels.py --sides 50 --repeats 1" \
               "bench_dask.py --gigabytes 0.01 --memory-gigabytes 0.005 --chunk-mb 1 --repeats 1"; do
    # shellcheck disable=SC2086 # the script and its arguments, split
    if "$venv/bin/python" bindings/python/$bench >target/pybench.log 2>&1; then
      echo "Python benchmark ${bench%% *} (quick): ok"
      extra_passed=$((extra_passed + 1))
    else
      cat target/pybench.log
      echo "Python benchmark ${bench%% *} (quick): FAILED"
      exit 1
    fi
  done
else
  echo "SKIPPED: the Python package (no python3 venv with pip, or its packages could not be installed)"
  extra_skipped=$((extra_skipped + 1))
fi

# A test that finds no GPU (or no NVRTC) passes vacuously after printing
# "SKIPPED <test>: <reason>": count it as skipped, not passed.
awk -v ep="$extra_passed" -v es="$extra_skipped" \
  '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
   /^SKIPPED [A-Za-z0-9_]+: / { v += 1 }
   END { printf "tests: %d passed, %d failed, %d skipped\n", p + ep - v, f, s + es + v }' "$log"
section "done"
