#!/usr/bin/env bash
# Set up the environment, then run lint, type checks and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
bash scripts/system.sh
bash scripts/browser.sh
bash scripts/postgres.sh
.venv/bin/ruff check src tests bench examples
.venv/bin/mypy
set +e
# AIEVAL_TEST_WORKERS=2 spreads the tests over two pytest-xdist workers (one process by default;
# not --dist loadfile/loadgroup: with those, schemathesis's lazy tests run one operation only)
.venv/bin/python -m pytest -n "${AIEVAL_TEST_WORKERS:-0}" --dist load "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  # a -k or path that selects nothing tested nothing: that is not a pass
  echo "pytest collected no tests (check the -k expression or paths given)" >&2
fi
exit "$rc"
