"""A new user's first hour, before any daemon: what the README's first commands install,
and that the commands it then shows work as written."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .anvil import free_port

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# The Debian packages scripts/setup_test_tools.sh installs for the tests alone.
TEST_ONLY = {"prometheus", "prometheus-alertmanager", "podman", "runc", "debootstrap", "chromium"}
# What scripts/setup.sh and scripts/demo run, besides bash's builtins and .venv/bin/python.
SHELL_TOOLS = ("bash", "cat", "sha256sum", "cut", "rm", "touch", "id", "env", "dirname")


def _fake_path(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A PATH holding only the shell tools setup needs and a fake `apt-get` (and `sudo`)
    that records each call: none of the test-only programs is found, so a setup that
    wants them asks apt-get for them."""
    bin_dir, calls = tmp_path / "bin", tmp_path / "apt-calls"
    bin_dir.mkdir()
    for tool in SHELL_TOOLS:
        found = next(
            (Path(d) / tool for d in ("/usr/bin", "/bin") if (Path(d) / tool).is_file()), None
        )
        if found is None:
            pytest.skip(f"{tool} not found in /usr/bin or /bin")
        (bin_dir / tool).symlink_to(found)
    for fake in ("apt-get", "sudo"):
        script = bin_dir / fake
        script.write_text(f'#!/bin/bash\necho "{fake} $*" >> {calls}\nexit 0\n')
        script.chmod(0o755)
    return {"PATH": str(bin_dir), "HOME": str(tmp_path)}, calls


def _demo_tree(tmp_path: Path) -> Path:
    """What scripts/demo's setup reads, copied, with this tree's virtualenv: skips unless
    that virtualenv is current (the test must install nothing). The contracts' npm step
    is left out (no package-lock.json): it installs no Debian package either way."""
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copytree(ROOT / "scripts", tree / "scripts")
    shutil.copytree(ROOT / "requirements", tree / "requirements")
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    (tree / ".venv").symlink_to(ROOT / ".venv")
    digest = hashlib.sha256(
        (ROOT / "pyproject.toml").read_bytes() + (ROOT / "requirements" / "dev.lock").read_bytes()
    ).hexdigest()[:16]
    if not (ROOT / ".venv" / f".installed-{digest}").is_file():
        pytest.skip("scripts/setup.sh has not run for this tree (its virtualenv is not current)")
    return tree


def _installed(calls: Path) -> set[str]:
    if not calls.is_file():
        return set()
    words = {
        w for line in calls.read_text().splitlines() if " install " in line for w in line.split()
    }
    return words & TEST_ONLY


def test_the_demo_installs_nothing_only_the_tests_need(tmp_path: Path) -> None:
    tree = _demo_tree(tmp_path)
    env, calls = _fake_path(tmp_path)
    run = subprocess.run(
        [str(tree / "scripts" / "demo"), "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "--exit" in run.stdout
    assert _installed(calls) == set(), calls.read_text()
    assert not calls.exists(), calls.read_text()


def test_the_tests_setup_installs_what_they_need(tmp_path: Path) -> None:
    env, calls = _fake_path(tmp_path)
    run = subprocess.run(
        ["bash", "-c", "set -euo pipefail; source scripts/setup_test_tools.sh"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert _installed(calls) == TEST_ONLY
    test_script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    assert "source scripts/setup_test_tools.sh" in test_script


def test_the_readme_commands_work_as_written() -> None:
    """The README writes `oracle ...`; before the first such command it says how `oracle`
    gets on the PATH, and doing so finds the virtualenv's `oracle`."""
    text = README.read_text(encoding="utf-8")
    first = re.search(r"^oracle ", text, re.MULTILINE)
    assert first is not None
    assert "source .venv/bin/activate" in text[: first.start()]
    found = subprocess.run(
        ["bash", "-c", "source .venv/bin/activate && command -v oracle"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    program = Path(found.stdout.strip())
    assert program.name == "oracle"
    assert os.access(program, os.X_OK)
    assert program.parent.resolve() == (ROOT / ".venv" / "bin").resolve()


def test_a_fresh_clone_runs_the_readmes_first_command_to_its_closing_line(
    tmp_path: Path,
) -> None:
    """`git clone` of this commit, then `./scripts/demo --exit` as the README's first
    command, with nothing set up: it installs what it needs (PyPI, npm), runs, and ends
    saying what happened and what to do next. Minutes, most of them installing."""
    if shutil.which("git") is None or shutil.which("npm") is None:
        pytest.skip("git and npm are needed to clone and set up as a new user would")
    clone = tmp_path / "oracle"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("ORACLE", "VIRTUAL"))}
    environment.pop("PYTHONPATH", None)
    run = subprocess.run(
        [
            "./scripts/demo",
            "--exit",
            "--metrics-port",
            str(free_port()),
            "--console-port",
            str(free_port()),
        ],
        cwd=clone,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    # Setup's own lines come first (npm's summary), then the demo's steps.
    assert "1. local chain: anvil started" in lines, run.stdout
    setup = lines[: lines.index("1. local chain: anvil started")]
    assert len(setup) <= 3, setup
    assert "3 questions asked on-chain" in run.stdout
    assert "http://" not in run.stdout
    assert lines[-1].startswith(
        "Done: 3 questions asked; 1 answered on-chain and final, 2 waiting for a person. "
    ), run.stdout
    assert "Next: " in lines[-1]
    # Nothing but what the demo needs, and no Python warning on the way.
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert "Warning" not in run.stderr, run.stderr[-3000:]
    assert (clone / ".venv" / "bin" / "oracle").is_file()
