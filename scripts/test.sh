#!/usr/bin/env bash
# The whole lazyfuse test suite: every crate's unit, integration and doc tests.
# Usage: bash scripts/test.sh   (from anywhere in the repository)
# It installs what it needs; later backends add their provisioning here.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo is not installed (https://rustup.rs)" >&2
  exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Unit, integration and bench-smoke tests, then doc tests; output is kept to
# print one total at the end (cargo prints one line per test binary).
cargo test --workspace --all-targets --locked 2>&1 | tee "$log"
cargo test --workspace --doc --locked 2>&1 | tee -a "$log"

awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
