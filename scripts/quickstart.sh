#!/usr/bin/env bash
# Set up, then run the offline quickstart: two recorded support-bot versions, scored and stored,
# then recorded runs of two workflows, each run graded with its gates and reasons.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export AIEVAL_DB="${AIEVAL_DB:-$PWD/aieval.db}"
.venv/bin/aieval run examples/quickstart/support_qa.yaml "$@"
.venv/bin/aieval run examples/quickstart/order_extraction.yaml "$@"
.venv/bin/aieval runs --limit 4
.venv/bin/aieval run examples/workflows/code_review_eval.yaml "$@"
.venv/bin/aieval run examples/workflows/support_agent_eval.yaml "$@"
