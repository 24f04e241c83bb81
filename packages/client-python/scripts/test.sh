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
ASYNC_TESTS="tests/unit/test_async_download.py tests/unit/test_async_follow.py tests/unit/test_async_pagination.py tests/live/test_live_follow_async.py"
mkdir -p .test-reports
status=0
platform-sdk-live --junit .test-reports/python-junit.xml -- \
  python3 -m pytest -q -p no:cacheprovider tests/unit tests/live $(printf -- '--ignore %s ' $ASYNC_TESTS) \
  --junitxml .test-reports/python-junit.xml || status=1
# AsyncPlatformClient's tests (unit and live) need httpx (the `async` extra): a Python that has it, which may not
# be the python3 the rest runs with (whose packaging check needs that one). A report of its own.
platform-sdk-live --junit .test-reports/python-async-junit.xml -- \
  "$(sh scripts/python.sh)" -m pytest -q -p no:cacheprovider $ASYNC_TESTS \
  --junitxml .test-reports/python-async-junit.xml || status=1
exit $status
