#!/usr/bin/env bash
# Usage: apt-install.sh COMMAND PACKAGE. Succeeds when COMMAND is on PATH, installing the Debian
# PACKAGE with apt first when it is missing and we are root; fails when it cannot be had.
set -euo pipefail
command -v "$1" >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "$2" >/dev/null
  exit 0
fi
exit 1
