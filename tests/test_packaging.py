"""The package as it is installed for real: every third-party import declared, and the page
reader working in a venv made the way deploy/Dockerfile makes one (wheel + runtime lock)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_dependencies() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {
        _canonical(re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0])
        for requirement in project["dependencies"]
    }


def third_party_imports() -> dict[str, set[str]]:
    """Top-level module -> the files of oracle/ that import it (standard library aside)."""
    imports: dict[str, set[str]] = {}
    for path in (ROOT / "oracle").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "oracle":
                    imports.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return imports


def test_every_third_party_import_is_a_declared_dependency() -> None:
    distributions = importlib.metadata.packages_distributions()
    declared = declared_dependencies()
    undeclared = {
        module: sorted(files)
        for module, files in third_party_imports().items()
        if not {_canonical(d) for d in distributions.get(module, [module])} & declared
    }
    assert undeclared == {}


def test_what_justext_needs_is_declared_directly() -> None:
    # justext asks for lxml[html_clean]; pip 23.2 (Python 3.11's own) does not match that
    # extra's name (html-clean) and installs lxml without it, so every page read failed.
    assert "lxml-html-clean" in declared_dependencies()


READ_A_PAGE = """
import asyncio, http.server, ipaddress, sys, threading
from oracle.agents.pages import PageReader, PageSettings

HTML = (
    b"<html><head><title>Certified results</title></head><body><nav>Menu</nav><article>"
    + b"<p>The commission certified the results today, officials said.</p>" * 8
    + b"</article></body></html>"
)

class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(HTML)))
        self.end_headers()
        self.wfile.write(HTML)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
threading.Thread(target=server.serve_forever, daemon=True).start()

async def main():
    settings = PageSettings(allowed_networks=(ipaddress.ip_network("127.0.0.1/32"),))
    reader = PageReader(settings)
    try:
        return await reader.fetch(f"http://127.0.0.1:{server.server_port}/results")
    finally:
        await reader.aclose()

page = asyncio.run(main())
print(page.title)
print(page.text)
"""


def _pip(venv: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_page_reader_works_when_installed_as_the_dockerfile_installs_it(
    tmp_path: Path,
) -> None:
    # What deploy/Dockerfile does, outside a container: a wheel built with the build lock's
    # setuptools, then a fresh virtualenv (its pip not upgraded) given the runtime lock with
    # --require-hashes --no-deps and the wheel with --no-deps. `pip check` then fails if
    # the lock left out anything the package or its dependencies ask for.
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "oracle", source / "oracle", ignore=shutil.ignore_patterns("__pycache__")
    )
    build, venv = tmp_path / "build", tmp_path / "venv"
    for path in (build, venv):
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=120)
    requirements = ROOT / "requirements"
    steps = [
        (build, ["install", "--require-hashes", "--no-deps", "-r", f"{requirements}/build.lock"]),
        (
            build,
            ["wheel", "--no-deps", "--no-build-isolation", "-w", f"{tmp_path}/wheels", str(source)],
        ),
        (venv, ["install", "--require-hashes", "--no-deps", "-r", f"{requirements}/runtime.lock"]),
    ]
    for environment, args in steps:
        step = _pip(environment, "--no-input", *args, timeout=900)
        if step.returncode != 0:
            probe = _pip(
                venv, "download", "--no-deps", "-d", str(tmp_path / "probe"), "idna", timeout=120
            )
            if probe.returncode != 0:
                pytest.skip(f"the package registry cannot be reached: {probe.stderr[-500:]}")
            pytest.fail(
                f"pip {' '.join(args)} failed:\n{step.stdout[-3000:]}\n{step.stderr[-3000:]}"
            )
    (wheel,) = (tmp_path / "wheels").glob("oracle-*.whl")
    install = _pip(venv, "install", "--no-deps", str(wheel), timeout=300)
    assert install.returncode == 0, install.stderr[-3000:]
    check = _pip(venv, "check", timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    pip_version = _pip(venv, "--version", timeout=60).stdout
    read = subprocess.run(
        [str(venv / "bin" / "python"), "-c", READ_A_PAGE],
        cwd=tmp_path,  # not the repository: the installed package, not the source tree
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert read.returncode == 0, f"{pip_version}\n{read.stderr[-3000:]}"
    title, text = read.stdout.split("\n", 1)
    assert title == "Certified results"
    assert "The commission certified the results today" in text
    assert "Menu" not in text  # trafilatura's extraction, not the plain-text fallback
