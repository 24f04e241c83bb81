#!/bin/sh
# Prints the Python that AsyncPlatformClient's tests run with: python3 when it has pytest and
# httpx (the `async` extra), else Debian's, which scripts/sdk-toolchains.sh gives both
# (python3-pytest, python3-httpx); else python3, whose failure then names what is missing.
for python in python3 /usr/bin/python3; do
  if "$python" -c 'import pytest, httpx' >/dev/null 2>&1; then
    echo "$python"
    exit 0
  fi
done
echo python3
