#!/usr/bin/env bash
# Set up, then run the offline quickstart: two recorded support-bot versions, scored and stored,
# then recorded runs of two workflows, each run graded with its gates and reasons, then three
# support conversations played offline (a Python assistant, a scripted simulated user); ends by
# comparing the two support-bot versions (promote or block, with reasons) and writing HTML reports.
# It takes no arguments: options such as --limit would change what is compared (a shortened run is
# inconclusive, exit 3, and no report would be written); run `aieval run FILE --limit N` yourself.
set -euo pipefail
if [ "$#" -gt 0 ]; then
  echo "error: scripts/quickstart.sh takes no arguments (got: $*); to run with other options," \
    "call .venv/bin/aieval run FILE OPTIONS yourself (see aieval run --help)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export AIEVAL_DB="${AIEVAL_DB:-$PWD/aieval.db}"
.venv/bin/aieval run examples/quickstart/support_qa.yaml
.venv/bin/aieval run examples/quickstart/order_extraction.yaml
.venv/bin/aieval runs --limit 4
.venv/bin/aieval run examples/workflows/code_review_eval.yaml
.venv/bin/aieval run examples/workflows/support_agent_eval.yaml
# Multi-turn: each scenario is one sample; `aieval show support-conversations` prints transcripts.
.venv/bin/aieval run examples/conversations/eval.yaml
# Should support-bot-v2 replace v1? Compares the two latest support-qa runs example by example
# (baseline: the run before the latest) and applies the promotion policy; exit 0 means promote
# (1: blocked, 3: inconclusive, both stop this script).
.venv/bin/aieval compare support-qa support-qa
mkdir -p reports
.venv/bin/aieval compare support-qa support-qa --format html --output reports/support-qa-comparison.html
.venv/bin/aieval report code-review-workflow --format html --output reports/code-review-report.html
