#!/bin/sh
# The package's whole suite, as `pnpm --filter @platform/client-python test` (and turbo) runs it:
# the unit tests and the live suite (a real server started by platform-sdk-live, SQLite, or
# PostgreSQL/Redis when TEST_DATABASE_URL/TEST_REDIS_URL are set) in one pytest run, whose JUnit
# report the harness turns into the CI count. The live suite includes the packaging check
# (wheel + sdist, fresh venv, README quickstart).
set -eu
cd "$(dirname "$0")/.."
# No __pycache__ next to the generated modules: the codegen drift check would see stale files.
export PYTHONDONTWRITEBYTECODE=1
mkdir -p .test-reports
exec platform-sdk-live --junit .test-reports/python-junit.xml -- \
  python3 -m pytest -q -p no:cacheprovider tests/unit tests/live --junitxml .test-reports/python-junit.xml
