#!/usr/bin/env bash
# Make sure Debian's headless Chromium is present for the browser tests (HTML report, web viewer).
# Installs the `chromium` package with apt when it is missing and we may; otherwise says why the
# browser tests will be skipped.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
  exit 0
fi
echo "chromium is not installed and cannot be installed here; browser tests will be skipped" >&2
