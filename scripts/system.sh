#!/usr/bin/env bash
# Make sure the system packages the code sandbox needs are present: bubblewrap (`bwrap`).
# The sandbox tests must not run without isolation, so this fails when it cannot install it.
set -euo pipefail
if ! bash "$(dirname "$0")/apt-install.sh" bwrap bubblewrap; then
  echo "bubblewrap is missing: install it (apt-get install bubblewrap, dnf install bubblewrap)" >&2
  exit 1
fi
