#!/usr/bin/env bash
# Make sure Debian's PostgreSQL server binaries (initdb, pg_ctl) are present: the store tests
# start a real server from them. Installs the `postgresql` package when they are absent and we
# are root with apt; otherwise says how to install them (the tests then skip, except under CI).
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  # the package may start a cluster of its own: the tests start their own server instead
  if command -v pg_ctlcluster >/dev/null 2>&1; then
    for conf in /etc/postgresql/*/main; do
      [ -d "$conf" ] || continue
      version=$(basename "$(dirname "$conf")")
      pg_ctlcluster "$version" main stop >/dev/null 2>&1 || true
    done
  fi
  exit 0
fi
echo "PostgreSQL server binaries are missing: install them (apt-get install postgresql)" >&2
exit 1
