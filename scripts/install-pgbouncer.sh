#!/usr/bin/env sh
# Makes sure PgBouncer is there for the pooler test (test/integration/pgbouncer.test.ts).
# Installs Debian's package with apt-get when missing, through sudo only when not root.
# PGBOUNCER_PATH points the test (and this check) at another binary.
set -eu

PGBOUNCER="${PGBOUNCER_PATH:-$(command -v pgbouncer || echo /usr/sbin/pgbouncer)}"

if [ -x "$PGBOUNCER" ]; then
  echo "pgbouncer: $PGBOUNCER"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "pgbouncer is missing and apt-get is not available: install PgBouncer and set PGBOUNCER_PATH" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "pgbouncer is missing and installing it needs root: run this script as root or install PgBouncer" >&2
    exit 1
  fi
fi

echo "installing pgbouncer with apt-get"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends pgbouncer
# Debian's package starts a service of its own; the test runs its own instance.
if command -v systemctl >/dev/null 2>&1; then $SUDO systemctl disable --now pgbouncer >/dev/null 2>&1 || true; fi

PGBOUNCER="${PGBOUNCER_PATH:-/usr/sbin/pgbouncer}"
if [ ! -x "$PGBOUNCER" ]; then
  echo "apt-get finished but $PGBOUNCER is still missing" >&2
  exit 1
fi
echo "pgbouncer: $PGBOUNCER"
