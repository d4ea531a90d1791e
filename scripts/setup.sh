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
  libboost-math-dev libbenchmark-dev libsqlite3-dev libsodium-dev
  # libFuzzer: clang is clang-14 on Debian 12; libclang_rt.fuzzer-x86_64.a
  # comes from libclang-rt-14-dev (pulled in by libclang-rt-dev).
  clang libclang-rt-dev
)

scripts/apt_missing.sh setup "${PACKAGES[@]}"

BUILD_DIR=${BUILD_DIR:-build}
# BUILD_DIR is for CI variants and tests of this script; the release build is build/.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$BUILD_DIR"
echo "setup: referee binary at $(pwd)/$BUILD_DIR/referee"
