#!/usr/bin/env bash
# Installs what the PHP and Python clients' suites need, from the Debian packages (no PHP or
# Python package index is reachable from CI): PHP 8 with curl, mbstring and zip (Composer's
# artifact repository reads the release's PHP archive with it), PHPUnit, Composer
# (autoloader generation works offline), PHP_CodeSniffer, and Debian's Python with pytest, build,
# hatchling, wheel and venv. Idempotent: installs only what is missing, and runs `apt-get update`
# only then. As root, or through sudo when it is available without a password.
#   scripts/sdk-toolchains.sh            install what is missing, say what was done
#   scripts/sdk-toolchains.sh --check    install nothing; exit 1 if something is missing
set -euo pipefail

PACKAGES=(
  php-cli php-curl php-mbstring php-zip phpunit composer php-codesniffer
  python3-pytest python3-build python3-hatchling python3-wheel python3-venv python3-httpx
)

installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "sdk-toolchains: not a Debian system (no apt-get); install these yourself: ${PACKAGES[*]}" >&2
  exit 1
fi

missing=()
for package in "${PACKAGES[@]}"; do
  installed "$package" || missing+=("$package")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "sdk-toolchains: all ${#PACKAGES[@]} packages already installed (${PACKAGES[*]})"
  exit 0
fi
if [ "${1:-}" = --check ]; then
  echo "sdk-toolchains: missing: ${missing[*]}" >&2
  exit 1
fi

if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "sdk-toolchains: missing ${missing[*]}, and this is neither root nor a user with" \
    "password-less sudo: run as root: apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "sdk-toolchains: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for package in "${missing[@]}"; do
  if ! installed "$package"; then
    echo "sdk-toolchains: $package did not install" >&2
    exit 1
  fi
done
echo "sdk-toolchains: installed ${missing[*]}; $(php --version | head -n 1); $(/usr/bin/python3 --version)"
