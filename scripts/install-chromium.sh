#!/usr/bin/env sh
# Makes sure Debian's chromium is there for the browser tests (npm run test:e2e).
# Installs it with apt-get when missing (scripts/apt-install.sh: through sudo only when not root).
# CHROMIUM_PATH points the tests (and this check) at another binary.
set -eu

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"

if [ -x "$CHROMIUM" ]; then
  echo "chromium: $CHROMIUM"
  exit 0
fi

sh "$(dirname "$0")/apt-install.sh" chromium || { echo "chromium is missing at $CHROMIUM: install Chromium and set CHROMIUM_PATH" >&2; exit 1; }

if [ ! -x "$CHROMIUM" ]; then
  echo "apt-get finished but $CHROMIUM is still missing" >&2
  exit 1
fi
echo "chromium: $CHROMIUM"
