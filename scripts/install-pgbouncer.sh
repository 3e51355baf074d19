#!/usr/bin/env sh
# Makes sure PgBouncer is there for the pooler test (test/integration/pgbouncer.test.ts).
# Installs Debian's package with apt-get when missing (scripts/apt-install.sh: as root, or through
# sudo only when it needs no password, since a test run must not wait at a prompt).
# PGBOUNCER_PATH points the test (and this check) at another binary.
set -eu

PGBOUNCER="${PGBOUNCER_PATH:-$(command -v pgbouncer || echo /usr/sbin/pgbouncer)}"

if [ -x "$PGBOUNCER" ]; then
  echo "pgbouncer: $PGBOUNCER"
  exit 0
fi

sh "$(dirname "$0")/apt-install.sh" --no-prompt pgbouncer || { echo "pgbouncer is missing: install PgBouncer and set PGBOUNCER_PATH" >&2; exit 1; }
# Debian's package starts a service of its own; the test runs its own instance.
if command -v systemctl >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then systemctl disable --now pgbouncer >/dev/null 2>&1 || true; else sudo -n systemctl disable --now pgbouncer >/dev/null 2>&1 || true; fi
fi

PGBOUNCER="${PGBOUNCER_PATH:-/usr/sbin/pgbouncer}"
if [ ! -x "$PGBOUNCER" ]; then
  echo "apt-get finished but $PGBOUNCER is still missing" >&2
  exit 1
fi
echo "pgbouncer: $PGBOUNCER"
