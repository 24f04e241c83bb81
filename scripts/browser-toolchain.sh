#!/usr/bin/env bash
# Installs Debian's Chromium for the portal's browser tests (apps/portal, Playwright through
# playwright-core, which downloads no browser of its own). Idempotent, like sdk-toolchains.sh:
# installs only when /usr/bin/chromium is missing, as root or through password-less sudo.
#   scripts/browser-toolchain.sh            install Chromium if missing
#   scripts/browser-toolchain.sh --check    install nothing; exit 1 if it is missing
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  echo "browser-toolchain: $("$CHROMIUM" --version 2>/dev/null || echo chromium) already installed"
  exit 0
fi
if [ "${1:-}" = --check ]; then
  echo "browser-toolchain: $CHROMIUM is missing (apt-get install -y chromium)" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "browser-toolchain: not a Debian system (no apt-get); install Chromium at $CHROMIUM yourself" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "browser-toolchain: Chromium is missing, and this is neither root nor a user with" \
    "password-less sudo: run as root: apt-get install -y chromium" >&2
  exit 1
fi

echo "browser-toolchain: installing chromium"
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
if [ ! -x "$CHROMIUM" ]; then
  echo "browser-toolchain: chromium did not install" >&2
  exit 1
fi
echo "browser-toolchain: installed $("$CHROMIUM" --version)"
