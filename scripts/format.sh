#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The project's source hygiene: C++ formatted as .clang-format says (clang-format 14, Debian 12), and every
# source file of ours carrying its SPDX license line.
#   format.sh           rewrite the C++ files in place
#   format.sh --check   change nothing; list every file that is not formatted or has no SPDX line, exit 1
# Files: what git tracks (plus new files it does not ignore) under driver/ sim/ host/ tb/ rtl/ scripts/ cmake/
# constraints/, and the top-level CMakeLists.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
case ${1:-} in
  --check) check=1 ;;
  "") ;;
  -h|--help) sed -n '3,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "format: unknown option $1 (try --help)" >&2; exit 2 ;;
esac
command -v clang-format >/dev/null || { echo "format: clang-format not found (./scripts/deps.sh installs it)" >&2; exit 1; }

dirs=(driver sim host tb rtl scripts cmake constraints CMakeLists.txt)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- "${dirs[@]}" | while read -r f; do
    [[ -f "$f" ]] && printf '%s\n' "$f"; done)
else  # a source tarball
  mapfile -t files < <(find "${dirs[@]}" -type f | sort)
fi

bad=0
cxx=()
for f in "${files[@]}"; do
  case $f in *.cpp|*.hpp|*.h) cxx+=("$f") ;; esac
done
# One clang-format process for every file (was one per file: most of this check's 30 s); only when it
# finds something does the per-file loop name the files.
if [[ $check -eq 1 ]]; then
  if [[ ${#cxx[@]} -gt 0 ]] && ! clang-format --dry-run -Werror "${cxx[@]}" >/dev/null 2>&1; then
    for f in "${cxx[@]}"; do
      clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "format: not formatted: $f (scripts/format.sh fixes it)"; bad=1; }
    done
  fi
elif [[ ${#cxx[@]} -gt 0 ]]; then
  clang-format -i "${cxx[@]}"
fi
for f in "${files[@]}"; do
  case $f in
    *.cpp|*.hpp|*.h|*.sv|*.svh|*.def|*.sh|*.tcl|*.py|*.lua|*.gp|*.cmake|*CMakeLists.txt|*.xdc|*.cfg|*.vlt)
      head -n 3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' || { echo "format: no SPDX line: $f"; bad=1; } ;;
  esac
done
[[ $check -eq 0 || $bad -eq 0 ]] || exit 1
[[ $check -eq 1 ]] && echo "format: ${#files[@]} files checked: formatted, SPDX lines present"
exit 0
