#!/usr/bin/env bash
# The floors of docs/architecture.md, checked: a folder includes only the
# folders its row allows. Prints every include that breaks the rule
# (file:line: the include, and what the folder may include) and exits 1.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

declare -A allowed=(
  [base]=""
  [mllog]="base"
  [rules]="mllog base"
  [submissions]="rules mllog base"
  [harness]="rules mllog base"
  [review]="submissions rules mllog base"
  [reports]="submissions rules mllog base"
  [server]="review reports submissions rules mllog base"
  [cli]="server review reports harness submissions rules mllog base"
)

bad=0
checked=0
for folder in "${!allowed[@]}"; do
  [[ -d "$folder" ]] || { echo "check_floors: folder $folder/ is missing"; bad=1; continue; }
  while IFS= read -r -d '' f; do
    [[ "$f" == *_test.cc ]] && continue
    checked=$((checked + 1))
    while IFS=: read -r line text; do
      to=$(sed -E 's/^#include "([a-z_]+)\/.*/\1/' <<<"$text")
      [[ "$to" == "$folder" || ! -d "$to" ]] && continue
      if [[ " ${allowed[$folder]} " != *" $to "* ]]; then
        echo "$f:$line: $text: $folder/ may include only: ${allowed[$folder]:-none of the other folders}"
        bad=1
      fi
    done < <(grep -nE '^#include "[a-z_]+/' "$f")
  done < <(find "$folder" -name '*.cc' -print0 -o -name '*.h' -print0)
done
if ((bad)); then
  echo "FAIL: includes that break the floors of docs/architecture.md"
  exit 1
fi
echo "floors: $checked source files include only the floors below them"
