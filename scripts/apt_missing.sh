#!/usr/bin/env bash
# Installs the Debian packages named as arguments that are not installed yet
# (apt-get, as root or through sudo); does nothing, and needs no network, when
# all are. Used by scripts/setup.sh and scripts/test.sh.
#   scripts/apt_missing.sh LABEL PACKAGE...
set -euo pipefail
label=$1
shift
# shellcheck source=dpkg_missing.sh
source "$(dirname "${BASH_SOURCE[0]}")/dpkg_missing.sh"
dpkg_missing "$@"

if ((${#missing[@]})); then
  echo "$label: installing ${missing[*]}"
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then SUDO=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "$label: all $# packages present"
fi
