#!/usr/bin/env bash
# Create .venv (if needed) and install aieval, with the given extras (e.g. "dev"; none by default).
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
spec="."
[ -n "$extras" ] && spec=".[$extras]"
[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=".venv/.aieval-installed-${extras:-core}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install -q --disable-pip-version-check -e "$spec"
  touch "$stamp"
fi
