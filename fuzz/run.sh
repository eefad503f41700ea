#!/usr/bin/env bash
# Runs every libFuzzer target of a BNORM_FUZZ build for SECONDS each, PARALLEL
# at a time: `make fuzz` (minutes each) and the smoke run of `make test`.
#   fuzz/run.sh BUILD_DIR SECONDS [PARALLEL] [--smoke]
# --smoke (make test): every target first replays each seed and regression
# input once (-runs=0; a failure there is a known input, repeatable), then
# fuzzes for SECONDS from a fixed seed (-seed=1) with a corpus started empty,
# so CI keeps fuzzing honest without growing a corpus. Coverage depends on
# addresses (ASLR), so even a fixed seed does not make two runs identical:
# the fuzzing part can find what no run here tried. Long runs are `make fuzz`;
# every finding becomes a regression input. docs/reliability.md.
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
# Seeds: the generated test models and tensors. ONNX 1.23's 1,391 node-test
# models (testdata/onnx-node-1.23) are left out here to keep the smoke run
# short; every fuzz target's body runs on each of them in the ctest suite
# (tests/fuzz_regression_test.cpp).
rm -rf "$out/seeds"
mkdir -p "$out/seeds/models" "$out/seeds/tensors"
while IFS= read -r f; do
  ln -s "$f" "$out/seeds/models/$(echo "${f#"$src"/testdata/}" | tr / _)"
done < <(find "$src/testdata" -name '*.onnx' -not -path '*/onnx-node-1.23/*' | sort)
for f in "$src"/testdata/tensors/*.pb "$src"/testdata/tensors/*.npy; do
  ln -s "$f" "$out/seeds/tensors/$(basename "$f")"
done

run_one() {
  local exe=$1 name=${1#fuzz_}
  local kind=models
  [ "$name" = tensor ] && kind=tensors
  local work=$out/work/$name corpus=$out/corpus/$name
  local regressions=()
  [ -d "$src/tests/fuzz_regressions/$name" ] && regressions=("$src/tests/fuzz_regressions/$name")
  local passes=(fuzz)
  if [ "$smoke" = --smoke ]; then
    corpus=$out/smoke-corpus/$name
    rm -rf "$corpus"
    passes=(replay fuzz)
  fi
  mkdir -p "$corpus" "$out/artifacts/$name" "$work"
  local pass mode
  for pass in "${passes[@]}"; do
    mode=(-max_total_time="$seconds")
    [ "$smoke" = --smoke ] && mode+=(-seed=1)
    [ "$pass" = replay ] && mode=(-runs=0)
    # The working directory is empty: a model's relative external data finds nothing.
    if ! (cd "$work" && OMP_NUM_THREADS=1 "$out/$exe" "${mode[@]}" -timeout=20 -rss_limit_mb=2048 \
          -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/artifacts/$name/" \
          "$corpus" "$out/seeds/$kind" "${regressions[@]}") > "$out/$name.log" 2>&1; then
      echo "fuzz $name ($pass): FAILED (log $out/$name.log, input in $out/artifacts/$name/)"
      grep -E 'ERROR|SUMMARY|terminate|what\(\)|Test unit written' "$out/$name.log" | head -20 | sed 's/^/  /'
      return 1
    fi
  done
  echo "fuzz $name: ok, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$out/$name.log" | grep -o '[0-9]*$') runs in ${seconds}s, corpus $(ls "$corpus" | wc -l)"
}
export -f run_one
export out src seconds smoke

printf '%s\n' "${targets[@]}" | xargs -P "$parallel" -I{} bash -c 'run_one {}'
