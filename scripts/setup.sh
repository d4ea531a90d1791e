#!/usr/bin/env bash
# Installs the Debian packages referee needs (only those missing) and builds
# the release binary in build/. Safe to run again: a second run installs
# nothing, needs no network and only rebuilds what changed.
#
#   scripts/setup.sh               referee itself
#   scripts/setup.sh --with-torch  also Debian's python3-torch (about 1 GB with
#                                  its dependencies), which the PyTorch example
#                                  workload needs (harness/workloads/specs/torchclf.yaml)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

with_torch=0
for arg in "$@"; do
  case "$arg" in
    --with-torch) with_torch=1 ;;
    -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown option $arg (known: --with-torch)" >&2; exit 2 ;;
  esac
done

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libsimdjson-dev libyaml-cpp-dev libcli11-dev doctest-dev
  libcurl4-openssl-dev libarchive-dev libcpp-httplib-dev libssl-dev
  libboost-math-dev libbenchmark-dev libsqlite3-dev libsodium-dev
  # the assets compressed at build time for `referee serve` (reports/web/embed_assets.cc)
  zlib1g-dev libbrotli-dev
  # libFuzzer: clang is clang-14 on Debian 12; libclang_rt.fuzzer-x86_64.a
  # comes from libclang-rt-14-dev (pulled in by libclang-rt-dev).
  clang libclang-rt-dev
)

scripts/apt_missing.sh setup "${PACKAGES[@]}"
if ((with_torch)); then
  scripts/apt_missing.sh setup-torch python3 python3-torch
fi

# The pages' chart libraries and the browser tests' driver: npm packages pinned
# by reports/web/package-lock.json, installed into reports/web/node_modules
# (the build compiles the libraries into the binary; docs/reports.md). Node.js
# and npm from Debian when the machine has none. `npm ci` runs only when
# node_modules is missing or was installed from another lockfile.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  scripts/apt_missing.sh setup-web nodejs npm
fi
lock_sum=$(sha256sum reports/web/package-lock.json | cut -d' ' -f1)
stamp=reports/web/node_modules/.referee-lock.sha256
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_sum" ]]; then
  echo "setup: npm ci in reports/web (vega, vega-lite, vega-embed, playwright-core)"
  npm ci --prefix reports/web --ignore-scripts --no-audit --no-fund
  echo "$lock_sum" >"$stamp"
else
  echo "setup: reports/web/node_modules matches its lockfile"
fi

BUILD_DIR=${BUILD_DIR:-build}
# BUILD_DIR is for CI variants and tests of this script; the release build is build/.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$BUILD_DIR"
echo "setup: referee binary at $(pwd)/$BUILD_DIR/referee"
