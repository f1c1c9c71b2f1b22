#!/usr/bin/env bash
# Make sure Debian's headless Chromium is present for the browser tests (HTML report, web viewer).
# Installs the `chromium` package with apt when it is missing and we may; otherwise says why the
# browser tests will be skipped.
set -euo pipefail
if ! bash "$(dirname "$0")/apt-install.sh" chromium chromium; then
  echo "chromium is not installed and cannot be installed here; browser tests will be skipped" >&2
fi
