#!/bin/sh
# The PHP package's static gates: composer.json valid for publishing, every file parses, PSR-12.
set -eu
cd "$(dirname "$0")/.."
composer validate --strict --no-check-lock
failed=0
for file in $(find src tests examples -name '*.php' | sort); do
  php -l "$file" >/dev/null || failed=1
done
[ "$failed" -eq 0 ] || { echo "php -l found syntax errors" >&2; exit 1; }
phpcs --standard=phpcs.xml.dist
