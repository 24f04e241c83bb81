"""The README's runnable blocks work against the real server, from the source tree and from the
wheel installed in a fresh virtual environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def test_readme_blocks_run_from_the_source_tree() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "readme_blocks.py")], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "README blocks: all ran" in result.stdout


def test_wheel_and_sdist_install_into_a_fresh_venv_and_run_the_quickstart() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "package_check.py")], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "httpx only with [async]" in result.stdout
    assert "README blocks: all ran" in result.stdout
    assert "package-check: ok" in result.stdout
