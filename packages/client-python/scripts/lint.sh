#!/bin/sh
# Lint: every file compiles, and the public API's type completeness is 100 % (pyright
# --verifytypes: no export whose type a user's checker would have to guess). The strict type
# check of src, tests and scripts is `typecheck` (pyright, pyproject.toml [tool.pyright]).
set -eu
cd "$(dirname "$0")/.."
python3 -m compileall -q src tests scripts > /dev/null
PYTHONPATH=src pyright --verifytypes platform_api --ignoreexternal > .verifytypes.log || { cat .verifytypes.log; rm -f .verifytypes.log; exit 1; }
grep "Type completeness score" .verifytypes.log
rm -f .verifytypes.log
