#!/usr/bin/env bash
# Installs what bnorm needs to build, test and benchmark on Debian 12.
# Idempotent: packages already present are left alone; apt runs only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake make pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev libspdlog-dev libfmt-dev
  catch2 libbenchmark-dev nlohmann-json3-dev
  libonnx-testdata python3-onnx python3-numpy
  chromium
  clang-14 libclang-rt-14-dev libomp-14-dev
)

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
