#!/usr/bin/env bash
# `pnpm audit --prod` at the `high` level: fails on a known high or critical vulnerability in
# what we ship. Where the registry serves no advisories (a mirror answers 405, as in the
# development sandbox), it says so and passes, rather than blocking every change on the network.
set -uo pipefail
cd "$(dirname "$0")/.."
output=$(pnpm audit --prod --audit-level high 2>&1)
code=$?
echo "$output"
if [ $code -ne 0 ] && grep -q 'ERR_PNPM_AUDIT_BAD_RESPONSE\|ERR_PNPM_AUDIT_ENDPOINT' <<<"$output"; then
  echo "audit: the registry's advisory endpoint is unavailable here; not checked" >&2
  exit 0
fi
exit $code
