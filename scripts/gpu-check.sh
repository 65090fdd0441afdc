#!/usr/bin/env bash
# The GPU checks: the shared test suites, the examples and the cuda speed
# cases, run on a machine with an NVIDIA GPU. CI has no GPU; this is run by
# hand where one is lent, in two steps:
#
#   bash scripts/gpu-check.sh bundle   # here: build, strip and pack the
#                                      # test, example and bench programs
#                                      # into target/gpu-check/bundle.tar.xz
#   bash scripts/gpu-check.sh run [STEP...]
#                                      # on the GPU machine, from the
#                                      # repository root, with the bundle;
#                                      # STEPs among tests examples bench
#                                      # programs python (default: tests
#                                      # examples bench;
#                                      # each fits one 10-minute call)
#   bash scripts/gpu-check.sh all      # on the GPU machine: every step in
#                                      # one call, python beside tests
#
# The GPU machine needs no Rust: it runs what `bundle` built (x86-64 Linux).
# It needs the NVIDIA driver, NVRTC and the CUDA headers (a CUDA toolkit
# under /usr/local/cuda, or LAZYFUSE_NVRTC and LAZYFUSE_CUDA_INCLUDE), and
# CuPy for the reference timings, and Python 3.9+ with NumPy and pytest for
# the `python` step (the Python package's suite, every test on cuda:
# LAZYFUSE_TEST_BACKENDS=cuda).
# `run` writes its logs and a summary to $OUT (default target/gpu-check/out)
# and prints the summary last.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bundle=target/gpu-check/bundle.tar.xz

pack() {
  local exes staging=target/gpu-check/staging
  # The debug test programs of the facade (every shared suite runs on the
  # cuda backend through common::backends()), the cuda runtime's unit tests
  # and the examples; the release speed program.
  exes=$(cargo test --workspace --all-targets --locked --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    kind, name = m["target"]["kind"][0], m["target"]["name"]
    package = m["package_id"].split("#")[0].rsplit("/", 1)[-1]
    if (kind == "test" and package == "main") or (kind == "lib" and name == "lazyfuse_cuda"):
        print("tests", name, m["executable"])
    elif kind == "example":
        print("examples", name, m["executable"])')
  cargo build --release --locked -p lazyfuse-bench --bin lazyfuse-gpu
  rm -rf "$staging" && mkdir -p "$staging/tests" "$staging/examples" "$staging/bench"
  while read -r dir name path; do
    strip -o "$staging/$dir/$name" "$path"
  done <<<"$exes"
  strip -o "$staging/bench/lazyfuse-gpu" target/release/lazyfuse-gpu
  # The Python package as a wheel (abi3: any CPython 3.9+ there).
  mkdir -p "$staging/python"
  CARGO_TARGET_DIR=$root/target/python target/py-venv/bin/maturin build --release --strip \
    -m bindings/python/Cargo.toml -o "$staging/python" ||
    echo "warning: no wheel (bash scripts/test.sh makes target/py-venv): the python step will skip"
  # One archive with a large window: the programs share most of their code.
  tar -C "$staging" -cf - . | xz -T1 -9 >"$bundle"
  rm -rf "$staging"
  echo "packed $(du -h "$bundle" | cut -f1) into $bundle: carry target/gpu-check to the GPU machine"
}

# NVRTC and the CUDA headers on the GPU machine: LAZYFUSE_NVRTC if set, else
# the toolkit's (any major version: its C API is the one cudarc calls).
find_cuda() {
  if [ -z "${LAZYFUSE_NVRTC:-}" ]; then
    LAZYFUSE_NVRTC=$(ls /usr/local/cuda/lib64/libnvrtc.so.* 2>/dev/null | grep -v builtins | sort -V | tail -1 || true)
    [ -n "$LAZYFUSE_NVRTC" ] && export LAZYFUSE_NVRTC
  fi
  if [ -z "${LAZYFUSE_CUDA_INCLUDE:-}" ] && [ -e /usr/local/cuda/include/cuda_fp16.h ]; then
    export LAZYFUSE_CUDA_INCLUDE=/usr/local/cuda/include
  fi
  export LD_LIBRARY_PATH="$(dirname "${LAZYFUSE_NVRTC:-/usr/local/cuda/lib64/x}"):${LD_LIBRARY_PATH:-}"
}

# Unpacks the bundle and sets up what every step needs.
prepare() {
  out=${OUT:-$root/target/gpu-check/out} work=${GPU_CHECK_WORK:-/tmp/lazyfuse-gpu-check}
  mkdir -p "$out"
  rm -rf "$work" && mkdir -p "$work/logs"
  xz -dc "$bundle" | tar -C "$work" -xf -
  find_cuda
  export LAZYFUSE_REQUIRE_NVRTC=1 RUST_BACKTRACE=1
  # The tests read their data through paths compiled in (CARGO_MANIFEST_DIR).
  local built_at
  built_at=$(tr -d '\n' <target/gpu-check/built-at 2>/dev/null || true)
  if [ -n "$built_at" ] && [ "$built_at" != "$root" ] && [ ! -e "$built_at" ]; then
    # `all` prepares twice at once: the second link may find the first.
    mkdir -p "$(dirname "$built_at")" && { ln -s "$root" "$built_at" 2>/dev/null || [ -e "$built_at" ]; }
  fi
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv || true
    echo "NVRTC: ${LAZYFUSE_NVRTC:-none}; headers: ${LAZYFUSE_CUDA_INCLUDE:-none}; vm.overcommit_memory: $(cat /proc/sys/vm/overcommit_memory 2>/dev/null)"
  } | tee "$out/summary.txt"
}

step_tests() {
  # Every test program at once (the machine has cores to spare), each
  # limited so that one hang cannot eat the lease.
  ls "$work/tests" | xargs -P "${GPU_CHECK_TEST_JOBS:-8}" -I{} sh -c \
    "cd '$root' && timeout ${GPU_CHECK_TEST_TIMEOUT:-400} '$work/tests/{}' >'$work/logs/{}.log' 2>&1; echo \$? >'$work/logs/{}.rc'"
  echo "== tests (program: status, result)" | tee -a "$out/summary.txt"
  for log in "$work"/logs/*.log; do
    local name rc result
    name=$(basename "$log" .log)
    rc=$(cat "$work/logs/$name.rc")
    result=$(grep -h "^test result:" "$log" | tail -1 || true)
    echo "$name: exit $rc; ${result:-no result (timeout 124 or crash)}" | tee -a "$out/summary.txt"
    { echo "===== $name (exit $rc)"; cat "$log"; } >>"$out/tests.log"
  done
  grep -h "SKIPPED" "$work"/logs/*.log | sort | uniq -c | tee -a "$out/summary.txt" || true
}

step_examples() {
  echo "== examples on LAZYFUSE_BACKEND=cuda" | tee -a "$out/summary.txt"
  for example in "$work"/examples/*; do
    local name rc
    name=$(basename "$example")
    set +e
    (cd "$root" && LAZYFUSE_BACKEND=cuda timeout ${GPU_CHECK_EXAMPLE_TIMEOUT:-120} "$example") >"$work/logs/example-$name.log" 2>&1
    rc=$?
    set -e
    echo "$name: exit $rc" | tee -a "$out/summary.txt"
    { echo "===== example $name (exit $rc)"; cat "$work/logs/example-$name.log"; } >>"$out/examples.log"
  done
}

# Installs the bundle's wheel into $work/$2 for step $1; fails, saying so,
# when the bundle has none or pip cannot install it.
install_wheel() {
  local wheel
  wheel=$(ls "$work"/python/*.whl 2>/dev/null | head -1)
  if [ -z "$wheel" ]; then
    echo "SKIPPED $1: the bundle has no wheel" | tee -a "$out/summary.txt"
    return 1
  fi
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$work/$2" "$wheel" ||
    { echo "SKIPPED $1: the wheel did not install" | tee -a "$out/summary.txt"; return 1; }
}

step_python() {
  echo "== the Python package's tests on LAZYFUSE_BACKEND=cuda" | tee -a "$out/summary.txt"
  install_wheel python site || return 0
  # Each new kernel is an NVRTC compile: spread the tests over the cores
  # when pytest-xdist is there (the kernel disk cache is safe to share).
  # At the time limit pytest is interrupted, and still reports what ran.
  local parallel=()
  python3 -c "import xdist" 2>/dev/null && parallel=(-n "${GPU_CHECK_PYTHON_WORKERS:-12}")
  set +e
  (cd "$root" && PYTHONPATH="$work/site" LAZYFUSE_BACKEND=cuda PYTHONUNBUFFERED=1 \
    LAZYFUSE_TEST_BACKENDS=${GPU_CHECK_PYTHON_BACKENDS:-cuda} \
    timeout -s INT -k 20 ${GPU_CHECK_PYTHON_TIMEOUT:-540} python3 -m pytest -q -p no:cacheprovider \
    "${parallel[@]}" --durations=20 bindings/python/tests) \
    >"$out/python.log" 2>&1
  echo "pytest: exit $?; $(tail -1 "$out/python.log")" | tee -a "$out/summary.txt"
  set -e
}

step_programs() {
  # Whole programs (bindings/python/bench_programs.py --gpu): lazyfuse on
  # cuda against CuPy and cupy.fuse, in device memory, in this one process.
  echo "== programs: lazyfuse cuda against CuPy (sizes ${GPU_CHECK_PROGRAM_SIZES:-1e6,1e7,1e8})" | tee -a "$out/summary.txt"
  install_wheel programs site-programs || return 0
  set +e
  (cd "$root" && PYTHONPATH="$work/site-programs" timeout ${GPU_CHECK_PROGRAM_TIMEOUT:-240} \
    python3 bindings/python/bench_programs.py --gpu --sizes "${GPU_CHECK_PROGRAM_SIZES:-1e6,1e7,1e8}" \
    --repeats 5 --out "$out/programs.md") >"$out/programs.log" 2>&1
  echo "bench_programs.py --gpu: exit $?" | tee -a "$out/summary.txt"
  set -e
  cat "$out/programs.md" >>"$out/summary.txt" 2>/dev/null || tail -20 "$out/programs.log" | tee -a "$out/summary.txt"
}

step_bench() {
  echo "== speed: lazyfuse cuda, then CuPy in the same run (n = ${GPU_CHECK_N:-1e8} f32)" | tee -a "$out/summary.txt"
  set +e
  "$work/bench/lazyfuse-gpu" --n "${GPU_CHECK_N:-1e8}" --reps 20 >"$out/bench-lazyfuse.jsonl" 2>"$work/logs/bench.err"
  echo "lazyfuse-gpu: exit $?" | tee -a "$out/summary.txt"
  python3 scripts/gpu_reference.py "${GPU_CHECK_N:-1e8}" 20 >"$out/bench-cupy.jsonl" 2>>"$work/logs/bench.err"
  echo "gpu_reference.py: exit $?" | tee -a "$out/summary.txt"
  set -e
  cat "$work/logs/bench.err" >&2
  python3 - "$out/bench-lazyfuse.jsonl" "$out/bench-cupy.jsonl" <<'EOF' | tee -a "$out/summary.txt"
import json, sys
rows = lambda path: [json.loads(l) for l in open(path) if l.startswith("{")]
ours, cupy = rows(sys.argv[1]), rows(sys.argv[2])
by_case = {r["case"]: r for r in cupy}
print(f"{'case':58} {'lazyfuse ms':>11} {'GB/s':>7} {'CuPy ms':>9} {'ratio':>6} {'cupy.fuse ms':>12} {'ratio':>6}")
for r in ours:
    c, f = by_case.get(r["case"]), by_case.get(r["case"] + " cupy.fuse")
    cell = lambda x: (f"{x['median_ms']:9.3f} {r['median_ms'] / x['median_ms']:6.2f}" if x else f"{'-':>9} {'-':>6}")
    print(f"{r['case']:58} {r['median_ms']:11.3f} {r['gbps']:7.0f} {cell(c)} {cell(f):>19}")
copy = by_case.get("copy (device to device)")
if copy:
    print(f"device-to-device copy (CuPy): {copy['median_ms']:.3f} ms, {copy['gbps']:.0f} GB/s read+written")
EOF
}

run_checks() {
  local steps=("$@")
  [ ${#steps[@]} -gt 0 ] || steps=(tests examples bench)
  prepare
  for step in "${steps[@]}"; do
    case "$step" in
      tests | examples | bench | programs | python) "step_$step" ;;
      *)
        echo "unknown step '$step' (expected tests, examples, bench, programs or python)" >&2
        exit 2
        ;;
    esac
  done
}

case "${1:-}" in
  bundle)
    mkdir -p target/gpu-check
    pack
    echo "$root" >target/gpu-check/built-at
    ;;
  run)
    shift
    run_checks "$@"
    ;;
  all)
    # Every check in one call of the device tool (10 minutes at most): the
    # speed cases first, on the idle GPU; then the Python suite beside the
    # Rust test programs (both mostly NVRTC compiles, on 16 cores), and the
    # examples. Each part writes to a folder of its own.
    base=${OUT:-$root/target/gpu-check/out}
    OUT=$base/bench run_checks bench programs
    (OUT=$base/python GPU_CHECK_WORK=/tmp/lazyfuse-gpu-check-python run_checks python) &
    OUT=$base/rust run_checks tests examples
    wait
    ;;
  *)
    echo "usage: bash scripts/gpu-check.sh bundle | run [tests] [examples] [bench] [programs] [python] | all" >&2
    exit 2
    ;;
esac
