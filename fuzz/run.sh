#!/usr/bin/env bash
# Runs every libFuzzer target of a BNORM_FUZZ build for SECONDS each, PARALLEL
# at a time: `make fuzz` (minutes each) and the smoke run of `make test`.
#   fuzz/run.sh BUILD_DIR SECONDS [PARALLEL] [--smoke]
# --smoke (make test) replays instead of fuzzing: every target runs each seed
# and regression input once (-runs=0), through the clang build with ASan and
# UBSan, then stops. Repeatable by construction: libFuzzer's mutations are not
# (ASLR-dependent coverage makes even a fixed -seed diverge), and a gate that
# CI may fail on inputs no run here ever tried is not a gate. Finding new
# inputs is the job of `make fuzz`, whose findings become regression inputs.
set -euo pipefail
build=$(cd "$1" && pwd)
seconds=$2
parallel=${3:-1}
smoke=${4:-}
src=$(cd "$(dirname "$0")/.." && pwd)
out=$build/fuzz

targets=()
for exe in "$out"/fuzz_*; do
  [ -x "$exe" ] && targets+=("$(basename "$exe")")
done
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no fuzz_* executables in $out (configure with -DBNORM_FUZZ=ON)" >&2
  exit 2
fi

# Seeds: links, rebuilt each run so they follow the repository.
rm -rf "$out/seeds"
mkdir -p "$out/seeds/models" "$out/seeds/tensors"
while IFS= read -r f; do
  ln -s "$f" "$out/seeds/models/$(echo "${f#"$src"/testdata/}" | tr / _)"
done < <(find "$src/testdata" -name '*.onnx' | sort)
for f in "$src"/testdata/tensors/*.pb "$src"/testdata/tensors/*.npy; do
  ln -s "$f" "$out/seeds/tensors/$(basename "$f")"
done

run_one() {
  local exe=$1 name=${1#fuzz_}
  local kind=models
  [ "$name" = tensor ] && kind=tensors
  local work=$out/work/$name corpus=$out/corpus/$name
  local mode=()
  if [ "$smoke" = --smoke ]; then
    corpus=$out/smoke-corpus/$name
    rm -rf "$corpus"
    mode=(-runs=0)
  fi
  mkdir -p "$corpus" "$out/artifacts/$name" "$work"
  local regressions=()
  [ -d "$src/tests/fuzz_regressions/$name" ] && regressions=("$src/tests/fuzz_regressions/$name")
  # The working directory is empty: a model's relative external data finds nothing.
  if (cd "$work" && OMP_NUM_THREADS=1 "$out/$exe" "${mode[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/artifacts/$name/" \
        "$corpus" "$out/seeds/$kind" "${regressions[@]}") > "$out/$name.log" 2>&1; then
    echo "fuzz $name: ok, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$out/$name.log" | grep -o '[0-9]*$') runs, corpus $(ls "$corpus" | wc -l)"
  else
    echo "fuzz $name: FAILED (log $out/$name.log, input in $out/artifacts/$name/)"
    grep -E 'ERROR|SUMMARY|terminate|what\(\)|Test unit written' "$out/$name.log" | head -20 | sed 's/^/  /'
    return 1
  fi
}
export -f run_one
export out src seconds smoke

printf '%s\n' "${targets[@]}" | xargs -P "$parallel" -I{} bash -c 'run_one {}'
