#!/usr/bin/env bash
# Everything `pnpm test` needs besides `pnpm install`, from Debian's packages: the PHP and Python
# toolchains (the clients' suites), Chromium (the portal's browser tests) and redis-server (the
# Redis rate-limit store's suite starts one of its own). Idempotent and quick when all is there;
# `pnpm test` runs it first, so the README's two commands pass on a fresh machine.
#   scripts/test-toolchains.sh           install what is missing
#   scripts/test-toolchains.sh --check   install nothing; exit 1 if something is missing
set -euo pipefail
cd "$(dirname "$0")"

./sdk-toolchains.sh "$@"
./browser-toolchain.sh "$@"
if command -v redis-server >/dev/null 2>&1; then
  echo "test-toolchains: redis-server already installed"
elif [ "${1:-}" = --check ]; then
  echo "test-toolchains: redis-server is missing (apt-get install -y redis-server)" >&2
  exit 1
elif [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) >&2
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  (sudo -n apt-get update -qq && sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) >&2
else
  echo "test-toolchains: redis-server is missing, and this is neither root nor a user with" \
    "password-less sudo: run as root: apt-get install -y redis-server" >&2
  exit 1
fi
