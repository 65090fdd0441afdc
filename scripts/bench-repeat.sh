#!/usr/bin/env bash
# Runs the benchmark harness several times and prints, per case, the median
# (and range) of lazyfuse's time as a ratio to the hand-written loop measured
# in the same run. On a shared machine single runs move by ±20 % or more;
# the median of several runs is what to compare.
#
# Usage: bash scripts/bench-repeat.sh RUNS [harness options...]
#   e.g. bash scripts/bench-repeat.sh 5 --suite e1,e2,e3,e4,e5,e6 --sizes 1e7,3e7 --dtypes f32,f64 --backends cpu
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:?usage: bash scripts/bench-repeat.sh RUNS [harness options...]}
shift
cargo build --release --locked -p lazyfuse-bench >/dev/null
out=target/bench-runs
rm -rf "$out"
for i in $(seq 1 "$runs"); do
  ./target/release/lazyfuse-bench "$@" --out "$out/$i" >/dev/null
  echo "run $i of $runs done" >&2
done
python3 - "$out" "$runs" <<'EOF'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
table = {}
bandwidth = []
for i in range(1, runs + 1):
    data = json.load(open(f"{out}/{i}/bench.json"))
    bandwidth.append(data["copy_bandwidth_gbps"])
    for r in data["records"]:
        if r.get("time_vs_hand") is None:
            continue
        key = (r["case"], r["dtype"], r["backend"], r["shape"])
        table.setdefault(key, []).append(r["time_vs_hand"])
print(f"{runs} runs; copy bandwidth {min(bandwidth):.1f}-{max(bandwidth):.1f} GB/s")
print("| case | dtype | backend | shape | median t/t_hand | range |")
print("| --- | --- | --- | --- | ---: | ---: |")
for (case, dtype, backend, shape), ratios in table.items():
    print(f"| {case} | {dtype} | {backend} | {shape} | {statistics.median(ratios):.2f} | "
          f"{min(ratios):.2f}-{max(ratios):.2f} |")
EOF
