#!/usr/bin/env bash
# Installs the Debian packages referee needs (only those missing) and builds
# the release binary in build/. Safe to run again: a second run installs
# nothing, needs no network and only rebuilds what changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libsimdjson-dev libyaml-cpp-dev libcli11-dev doctest-dev
  libcurl4-openssl-dev libarchive-dev libcpp-httplib-dev libssl-dev
  libboost-math-dev libbenchmark-dev libsqlite3-dev
  # libFuzzer: clang is clang-14 on Debian 12; libclang_rt.fuzzer-x86_64.a
  # comes from libclang-rt-14-dev (pulled in by libclang-rt-dev).
  clang libclang-rt-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$status" == installed ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then SUDO=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} packages present"
fi

BUILD_DIR=${BUILD_DIR:-build}
# BUILD_DIR is for CI variants and tests of this script; the release build is build/.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$BUILD_DIR"
echo "setup: referee binary at $(pwd)/$BUILD_DIR/referee"
