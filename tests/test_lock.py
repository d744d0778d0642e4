"""The locks in requirements/ (scripts/lock): made from today's pyproject.toml, every declared
dependency pinned inside its range with hashes, the locks agreeing with one another, and
this virtualenv installed from the dev lock (scripts/setup.sh)."""

from __future__ import annotations

import copy
import importlib.metadata
import importlib.util
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("lockfile", ROOT / "scripts/lockfile.py")
assert _spec is not None
assert _spec.loader is not None
lockfile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lockfile)


@dataclass(frozen=True)
class Pin:
    version: str
    marker: Marker | None
    hashes: tuple[str, ...]

    def applies(self, environment: dict[str, str] | None = None) -> bool:
        return self.marker is None or self.marker.evaluate(environment)


def pins(lock: str) -> dict[str, Pin]:
    """requirements/LOCK.lock as {canonical name: Pin}."""
    text = lockfile.lock_path(lock).read_text(encoding="utf-8")
    # Entries are `name==version [; marker] \` followed by `--hash=` continuation lines.
    entries = re.split(r"\n(?=\S)", re.sub(r"(?m)^\s*#.*\n?", "", text).strip())
    result = {}
    for entry in entries:
        head = entry.split("\\", 1)[0].strip()
        requirement, _, marker = head.partition(";")
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", requirement.strip())
        assert match, f"{lock}.lock: not an exact pin: {head!r}"
        name = canonicalize_name(match[1])
        assert name not in result, f"{lock}.lock pins {name} twice"
        result[name] = Pin(
            version=match[2],
            marker=Marker(marker) if marker.strip() else None,
            hashes=tuple(re.findall(r"--hash=(sha256:[0-9a-f]{64})", entry)),
        )
    return result


def declared(lock: str) -> list[Requirement]:
    """The requirements of pyproject.toml that `lock` is compiled from."""
    parts = lockfile.parts(lockfile.load_pyproject(), lock)
    return [Requirement(line) for part in lockfile.LOCKS[lock] for line in parts[part]]


LINUX = {"x86_64": "x86_64", "aarch64": "aarch64"}


def linux_environment(machine: str) -> dict[str, str]:
    return {
        "platform_machine": machine,
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "python_version": "3.11",
        "python_full_version": "3.11.7",
    }


@pytest.mark.parametrize("lock", sorted(lockfile.LOCKS))
def test_each_lock_was_made_from_todays_pyproject(lock: str) -> None:
    assert lockfile.stale(lockfile.load_pyproject(), lock) is None


def test_a_dependency_added_without_relocking_is_caught() -> None:
    pyproject = copy.deepcopy(lockfile.load_pyproject())
    pyproject["project"]["dependencies"].append("jinja2>=3.1")
    assert "out of date" in (lockfile.stale(pyproject, "runtime") or "")
    assert "out of date" in (lockfile.stale(pyproject, "dev") or "")
    assert lockfile.stale(pyproject, "build") is None  # jinja2 is not in the build lock
    pyproject = copy.deepcopy(lockfile.load_pyproject())
    pyproject["project"]["optional-dependencies"]["dev"].append("pytest-xdist")
    assert lockfile.stale(pyproject, "runtime") is None
    assert "out of date" in (lockfile.stale(pyproject, "dev") or "")


def test_the_check_exits_non_zero_naming_the_lock_and_the_fix(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts/lockfile.py"), "check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (run.returncode, run.stderr) == (0, "")
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts/lockfile.py"), "check", "nightly"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode != 0
    assert "unknown lock 'nightly'" in run.stderr


@pytest.mark.parametrize("lock", sorted(lockfile.LOCKS))
@pytest.mark.parametrize("machine", sorted(LINUX))
def test_every_declared_dependency_is_pinned_inside_its_range_with_hashes(
    lock: str, machine: str
) -> None:
    locked = pins(lock)
    environment = linux_environment(machine)
    for requirement in declared(lock):
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{lock}.lock does not pin {requirement}"
        pin = locked[name]
        assert pin.applies(environment), f"{lock}.lock: {name} is not installed on {machine}"
        assert requirement.specifier.contains(pin.version, prereleases=True), (
            f"{lock}.lock pins {name}=={pin.version}, outside {requirement}"
        )
        # An extra (psycopg[binary]) brings packages of its own: pinned too.
        for extra in requirement.extras:
            for needed in importlib.metadata.requires(requirement.name) or []:
                sub = Requirement(needed)
                if sub.marker is None or not sub.marker.evaluate({**environment, "extra": extra}):
                    continue
                if sub.marker.evaluate({**environment, "extra": ""}):
                    continue  # not brought by the extra
                assert canonicalize_name(sub.name) in locked, f"{lock}.lock: {sub} ({extra})"
    for name, pin in locked.items():
        assert pin.hashes, f"{lock}.lock: {name} has no hash"


def test_the_locks_agree_on_every_version() -> None:
    # Tests run on the dev lock, the image ships the runtime lock: the same versions.
    dev = pins("dev")
    for lock in ("runtime", "build"):
        for name, pin in pins(lock).items():
            assert name in dev, f"{name} is in {lock}.lock, not in dev.lock"
            assert dev[name].version == pin.version, (name, lock)
    assert "pip" in dev  # the virtualenv's own pip is pinned too


def test_this_virtualenv_was_installed_from_the_dev_lock() -> None:
    missing_or_different = {}
    for name, pin in pins("dev").items():
        if not pin.applies():
            continue
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if installed != pin.version:
            missing_or_different[name] = (pin.version, installed)
    assert missing_or_different == {}, "run scripts/setup.sh"
