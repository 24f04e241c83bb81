"""Runs the README's ```python run blocks, in order, as one script (they build on each other).

    python3 scripts/readme_blocks.py [--python INTERPRETER] [--print]

The blocks need a live server: PLATFORM_BASE_URL and PLATFORM_TOKEN (the harness sets them).
`--python` runs them with another interpreter (the fresh virtual environment of the package
check); by default with this one, importing the package from src/.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List

PACKAGE = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```python run[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def blocks(readme: Path = PACKAGE / "README.md") -> List[str]:
    return FENCE.findall(readme.read_text(encoding="utf-8"))


def script() -> str:
    found = blocks()
    if not found:
        raise SystemExit("README.md has no ```python run block")
    parts = [f"# --- README block {n} ---\n{code}" for n, code in enumerate(found, 1)]
    return "\n".join(parts) + '\nprint("README blocks: all ran")\n'


def run(python: str, *, use_src: bool) -> int:
    env = dict(os.environ)
    if use_src:
        env["PYTHONPATH"] = str(PACKAGE / "src") + os.pathsep + env.get("PYTHONPATH", "")
    else:
        env.pop("PYTHONPATH", None)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "readme_quickstart.py"
        path.write_text(script(), encoding="utf-8")
        # cwd outside the package, so an installed copy is imported, not src/.
        return subprocess.call([python, str(path)], cwd=tmp, env=env)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--python", help="interpreter with platform_api installed (default: this one, with src/)")
    parser.add_argument("--print", action="store_true", help="print the script instead of running it")
    args = parser.parse_args(argv)
    if args.print:
        print(script())
        return 0
    return run(args.python or sys.executable, use_src=args.python is None)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
