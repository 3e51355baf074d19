#!/usr/bin/env sh
# Makes sure Debian's chromium is there for the browser tests (npm run test:e2e).
# Installs it with apt-get when missing, through sudo only when not root.
# CHROMIUM_PATH points the tests (and this check) at another binary.
set -eu

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"

if [ -x "$CHROMIUM" ]; then
  echo "chromium: $CHROMIUM"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is missing at $CHROMIUM and apt-get is not available: install Chromium and set CHROMIUM_PATH" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "chromium is missing and installing it needs root: run this script as root or install sudo" >&2
    exit 1
  fi
fi

echo "installing chromium with apt-get"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium

if [ ! -x "$CHROMIUM" ]; then
  echo "apt-get finished but $CHROMIUM is still missing" >&2
  exit 1
fi
echo "chromium: $CHROMIUM"
