#!/usr/bin/env bash
# Create .venv (if needed) and install aieval with the given extras (default: dev).
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-dev}"
python3 -m venv .venv
stamp=".venv/.aieval-installed-$extras"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extras]"
  touch "$stamp"
fi
