# Sourced by scripts that install Debian packages on demand.
# dpkg_missing PACKAGE...: sets the array `missing` to those of the named
# packages that dpkg does not list as installed.
dpkg_missing() {
  missing=()
  local p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [[ "$status" == installed ]] || missing+=("$p")
  done
}
