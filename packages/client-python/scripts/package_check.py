"""Builds the sdist and wheel, checks their metadata, installs the wheel into a fresh virtual
environment with `pip install --no-index --no-deps` and runs the README's quickstart there.

    python3 scripts/package_check.py [--no-quickstart]

Needs `build` and `hatchling` importable by some Python (Debian: python3-build python3-hatchling,
installed by scripts/sdk-toolchains.sh) and `venv`; no package index is used. The quickstart
needs a live server (PLATFORM_BASE_URL, PLATFORM_TOKEN): the live suite calls this script.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import List, Optional, Sequence

PACKAGE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PACKAGE / "scripts"))

import readme_blocks  # noqa: E402


def step(message: str) -> None:
    print(f"package-check: {message}", flush=True)


def fail(message: str) -> None:
    raise SystemExit(f"package-check: FAILED: {message}")


def builder() -> str:
    """An interpreter that has `build` and `hatchling` (this one, else Debian's)."""
    for python in (sys.executable, "/usr/bin/python3", shutil.which("python3") or ""):
        if python and subprocess.call(
            [python, "-c", "import build, hatchling"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        ) == 0:
            return python
    fail("no Python with `build` and `hatchling`: run scripts/sdk-toolchains.sh (apt python3-build python3-hatchling)")
    raise AssertionError


def run(command: Sequence[str], cwd: Optional[Path] = None) -> None:
    if subprocess.call(list(command), cwd=cwd) != 0:
        fail(f"{' '.join(command)} exited non-zero")


def version() -> str:
    match = re.search(r'__version__ = "([^"]+)"', (PACKAGE / "src/platform_api/_version.py").read_text())
    if match is None:
        fail("no __version__ in _version.py")
        raise AssertionError
    return match.group(1)


SMOKE = """
import platform_api
from platform_api import types
s = types.Student.from_json({"id": "stu_1", "status": "new_status", "created_at": "2025-01-02T03:04:05.678Z"})
assert s.status == "new_status" and s.created_at.year == 2025 and s.to_dict()["id"] == "stu_1"
hook = platform_api.Webhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
headers = hook.sign(b'{"test": 2432232314}', msg_id="msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp=1614265330)
assert headers["webhook-signature"] == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
client = platform_api.PlatformClient(token="pat_x", base_url="http://127.0.0.1:9")
assert client.students.with_raw_response is not None
print("smoke ok", platform_api.__version__)
"""


def other_pythons() -> List[str]:
    """Other interpreters >= 3.9 on this machine (PATH python3.X, pyenv), one per version."""
    found: dict[str, str] = {}
    candidates = [shutil.which(f"python3.{minor}") or "" for minor in range(9, 20)]
    pyenv = Path.home() / ".pyenv" / "versions"
    if pyenv.is_dir():
        candidates += [str(p / "bin" / "python") for p in sorted(pyenv.iterdir())]
    for python in candidates:
        if not python or not Path(python).exists():
            continue
        probe = subprocess.run([python, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True)
        version = probe.stdout.strip()
        if probe.returncode == 0 and version and tuple(map(int, version.split("."))) >= (3, 9):
            found.setdefault(version, python)
    current = "%d.%d" % sys.version_info[:2]
    return [python for version, python in sorted(found.items()) if version != current]


def check_wheel(wheel: Path, expected_version: str) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_name = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        if metadata_name is None:
            fail("the wheel has no METADATA")
            raise AssertionError
        metadata = archive.read(metadata_name).decode()
    for required in ("platform_api/__init__.py", "platform_api/py.typed", "platform_api/resources/students.py",
                     "platform_api/types/models.py", "platform_api/_core/_http.py", "platform_api/webhooks.py"):
        if required not in names:
            fail(f"the wheel lacks {required}")
    if any("/tests/" in n or n.startswith("tests/") for n in names):
        fail("the wheel ships the tests")
    headers = dict(line.split(": ", 1) for line in metadata.split("\n\n", 1)[0].splitlines() if ": " in line)
    # The one dependency is httpx, for AsyncPlatformClient only: behind the `async` extra.
    requires = [line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    if [r for r in requires if "extra == " not in r]:
        fail(f"METADATA declares a dependency outside an extra: {requires}")
    if not any(r.startswith("httpx") and "extra == 'async'" in r for r in requires):
        fail(f"METADATA lacks httpx behind the async extra: {requires}")
    if headers.get("Name") != "platform-api" or headers.get("Version") != expected_version:
        fail(f"METADATA names {headers.get('Name')} {headers.get('Version')}")
    if headers.get("Requires-Python") != ">=3.9":
        fail(f"Requires-Python is {headers.get('Requires-Python')!r}")
    step(f"wheel {wheel.name}: {len(names)} files, httpx only with [async], Requires-Python >=3.9")


def check_sdist(sdist: Path) -> None:
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    for suffix in ("/pyproject.toml", "/README.md", "/src/platform_api/py.typed", "/src/platform_api/__init__.py"):
        if not any(n.endswith(suffix) for n in names):
            fail(f"the sdist lacks {suffix}")
    step(f"sdist {sdist.name}: {len(names)} entries")


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-quickstart", action="store_true", help="skip running the README (no server)")
    args = parser.parse_args(argv)
    expected = version()
    with tempfile.TemporaryDirectory(prefix="platform-api-package-") as tmp:
        work = Path(tmp)
        source = work / "source"
        # A copy, so the build leaves nothing behind in the repository.
        shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns(
            "node_modules", "dist", "build", "*.egg-info", "__pycache__", ".test-reports", ".venv"))
        dist = work / "dist"
        python = builder()
        step(f"building sdist and wheel (from the sdist) with {python}")
        run([python, "-m", "build", "--no-isolation", "--skip-dependency-check", "--outdir", str(dist), str(source)])
        wheels = list(dist.glob("platform_api-*.whl"))
        sdists = list(dist.glob("platform_api-*.tar.gz"))
        if len(wheels) != 1 or len(sdists) != 1:
            fail(f"expected one wheel and one sdist, got {[p.name for p in dist.iterdir()]}")
        check_wheel(wheels[0], expected)
        check_sdist(sdists[0])

        venv = work / "venv"
        step(f"fresh virtual environment with {sys.executable}")
        run([sys.executable, "-m", "venv", str(venv)])
        venv_python = str(venv / "bin" / "python")
        run([venv_python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheels[0])])
        probe = (
            "import pathlib, platform_api, sys; "
            f"assert platform_api.__version__ == {expected!r}; "
            "assert pathlib.Path(platform_api.__file__).is_relative_to(sys.prefix), platform_api.__file__; "
            "assert (pathlib.Path(platform_api.__file__).parent / 'py.typed').exists(); "
            "print('installed', platform_api.__file__)"
        )
        run([venv_python, "-c", probe], cwd=work)
        # The wheel on every other Python >= 3.9 this machine has (requires-python says 3.9+).
        for other in other_pythons():
            env_dir = work / f"venv-{Path(other).parent.parent.name}"
            # Without its own pip (faster); the first venv's pip installs into it.
            run([other, "-m", "venv", "--without-pip", str(env_dir)])
            run([venv_python, "-m", "pip", "--python", str(env_dir / "bin" / "python"), "install", "--quiet",
                 "--no-index", "--no-deps", str(wheels[0])])
            run([str(env_dir / "bin" / "python"), "-c", SMOKE], cwd=work)
            step(f"installed and smoke-tested with {other}")
        if args.no_quickstart:
            step("quickstart skipped (--no-quickstart)")
        else:
            step("running the README's python run blocks in the fresh environment")
            if readme_blocks.run(venv_python, use_src=False) != 0:
                fail("the README quickstart failed in the fresh environment")
    step("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
