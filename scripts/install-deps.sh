#!/usr/bin/env bash
# Installs what bnorm needs on Debian 12, by purpose, and only what is missing
# (apt runs only then):
#   scripts/install-deps.sh build     build the library and the bnorm binary (make demo, make build-bnorm)
#   scripts/install-deps.sh install   the above, help2man (make install: the man page), and pybind11,
#                                     Python's headers and numpy (the Python module, `import bnorm`, which
#                                     needs numpy at run time: docs/python.md)
#   scripts/install-deps.sh test      the above and everything the tests, fuzzing, sanitizer runs and
#                                     benchmarks use (make test, make test-sanitize, make fuzz)
#   scripts/install-deps.sh aarch64   the cross compiler and qemu-user for make test-aarch64-kernels
set -euo pipefail

build_packages=(
  build-essential cmake make pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
)
install_packages=(help2man pybind11-dev python3-dev python3-numpy)
test_packages=(
  catch2 libbenchmark-dev
  libonnx-testdata python3-onnx python3-numpy python3-jsonschema
  chromium
  clang-14 libclang-rt-14-dev libomp-14-dev
)

aarch64_packages=(cmake make catch2 g++-aarch64-linux-gnu qemu-user)

purpose=${1:-test}
case "$purpose" in
  aarch64) packages=("${aarch64_packages[@]}") ;;
  build) packages=("${build_packages[@]}") ;;
  install) packages=("${build_packages[@]}" "${install_packages[@]}") ;;
  test) packages=("${build_packages[@]}" "${install_packages[@]}" "${test_packages[@]}") ;;
  *) echo "install-deps: unknown purpose '$purpose' (build, install, test or aarch64)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
