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
# Three pytest-xdist workers by default, also on two cores: a worker often waits (on a server,
# a subprocess, a browser, a Ray, PostgreSQL) and the third uses that time
# (AIEVAL_TEST_WORKERS=0: one process). Not --dist loadfile/loadgroup: with those,
# schemathesis's lazy tests run one operation only. --dist load
# keeps each module's tests on one worker, together (tests/support/schedule.py).
# --maxschedchunk 4: the tests go out a few at a time as workers ask, so the long ones that
# run first (tests/conftest.py) are shared between the workers, not all sent to the first.
# --durations=30 lists the slowest tests in the log, and --cpu-durations=30 those that used the
# most CPU (tests/support/cputime.py), to keep CI time in view: on CI's two busy cores a test's
# wall time is mostly its wait for the CPU others use.
# pytest keeps each module it rewrites for its asserts (the tests, and every module of a pytest
# plugin: aieval, hypothesis, schemathesis, ...) as bytecode; with PYTHONDONTWRITEBYTECODE set,
# as on many CI images, each worker and each pytest a test starts rewrites ~1,000 modules again.
env -u PYTHONDONTWRITEBYTECODE .venv/bin/python -m pytest -n "${AIEVAL_TEST_WORKERS:-3}" --dist load --maxschedchunk 4 \
  --durations=30 --cpu-durations=30 "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  # a -k or path that selects nothing tested nothing: that is not a pass
  echo "pytest collected no tests (check the -k expression or paths given)" >&2
fi
exit "$rc"
