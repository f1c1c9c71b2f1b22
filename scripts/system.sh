#!/usr/bin/env bash
# Make sure the system packages the code sandbox needs are present: bubblewrap (`bwrap`) and
# libseccomp (its system-call filter). The sandbox tests must not run without isolation, so
# this fails when it cannot install them.
set -euo pipefail
if ! bash "$(dirname "$0")/apt-install.sh" bwrap bubblewrap; then
  echo "bubblewrap is missing: install it (apt-get install bubblewrap, dnf install bubblewrap)" >&2
  exit 1
fi
if ! ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends libseccomp2 >/dev/null
  else
    echo "libseccomp is missing: install it (apt-get install libseccomp2, dnf install libseccomp)" >&2
    exit 1
  fi
fi
