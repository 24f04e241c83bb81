#!/bin/sh
# Lint: every file compiles, and the public API's type completeness is 100 % (pyright
# --verifytypes: no export whose type a user's checker would have to guess). The strict type
# check of src, tests and scripts is `typecheck` (pyright, pyproject.toml [tool.pyright]).
set -eu
cd "$(dirname "$0")/.."
# compile() rather than compileall: no __pycache__ in the generated folders, which the codegen
# drift check treats as stale files.
python3 - <<'PY'
import pathlib, sys
for path in sorted(pathlib.Path(".").glob("*/**/*.py")):
    if "node_modules" not in path.parts:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
PY
PYTHONPATH=src pyright --verifytypes platform_api --ignoreexternal > .verifytypes.log || { cat .verifytypes.log; rm -f .verifytypes.log; exit 1; }
grep "Type completeness score" .verifytypes.log
rm -f .verifytypes.log
