#!/usr/bin/env sh
# Installs Debian packages with apt-get, through sudo only when not root.
# Used by install-chromium.sh and install-pgbouncer.sh, which check for their binary first.
#   sh scripts/apt-install.sh [--no-prompt] PACKAGE...
# --no-prompt: use sudo only if it needs no password (a test run must not wait at a prompt).
set -eu

PROMPT=yes
if [ "${1:-}" = "--no-prompt" ]; then
  PROMPT=no
  shift
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "$* missing and apt-get is not available: install it yourself" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if [ "$PROMPT" = yes ] && command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "installing $* needs root: run this as root, or install it yourself" >&2
    exit 1
  fi
fi

echo "installing $* with apt-get"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "$@"
