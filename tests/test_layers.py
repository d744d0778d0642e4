"""The layering rules, as tests.

- No import goes up the layers (entry → cli → app → config → venues → daemon → store →
  chain | agents → core → errors | log): the import-linter contract in pyproject.toml.
- Settings are leaves: each package's settings.py imports only the standard library,
  pydantic, yaml, oracle.core, oracle.errors and other settings modules.
- The command line starts light: `import oracle.cli`, and running `oracle consensus` and
  `oracle proof verify`, leave the chain, database, HTTP and LLM libraries unloaded;
  `oracle consensus` validates only its two sections (`oracle.config_sources`).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import oracle.core

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "oracle" / "examples" / "agreement.json"

HEAVY = (
    "web3",
    "eth_account",
    "eth_abi",
    "eth_utils",
    "eth_keys",
    "eth_keyfile",
    "sqlalchemy",
    "sqlmodel",
    "alembic",
    "aiohttp",
    "openai",
    "anthropic",
    "trafilatura",
    "apscheduler",
)

SETTINGS_MAY_IMPORT = ("pydantic", "yaml", "oracle.core", "oracle.errors")


def test_no_import_goes_up_the_layers() -> None:
    # In a process of its own: import-linter reconfigures logging in the process it runs in.
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("lint-imports")),
            "--config",
            str(ROOT / "pyproject.toml"),
            "--no-cache",
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _imported_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def _allowed_in_settings(module: str) -> bool:
    top = module.split(".", maxsplit=1)[0]
    return (
        top in sys.stdlib_module_names
        or top == "__future__"
        or module.endswith(".settings")
        or any(module == name or module.startswith(name + ".") for name in SETTINGS_MAY_IMPORT)
    )


SETTINGS_MODULES = sorted((ROOT / "oracle").rglob("settings.py"))


@pytest.mark.parametrize("path", SETTINGS_MODULES, ids=lambda path: str(path.relative_to(ROOT)))
def test_settings_modules_are_leaves(path: Path) -> None:
    outside = [name for name in _imported_modules(path) if not _allowed_in_settings(name)]
    assert outside == [], f"{path.relative_to(ROOT)} imports {outside}"


def test_every_package_with_configuration_has_a_settings_leaf() -> None:
    packages = {path.parent.name for path in SETTINGS_MODULES}
    assert {"agents", "chain", "daemon", "store", "own", "http", "uma", "reality"} <= packages


def test_the_leaf_check_refuses_a_settings_module_that_reaches_up(tmp_path: Path) -> None:
    leaky = tmp_path / "settings.py"
    leaky.write_text("from pydantic import BaseModel\nfrom oracle.chain.rpc import RpcPool\n")
    assert [name for name in _imported_modules(leaky) if not _allowed_in_settings(name)] == [
        "oracle.chain.rpc"
    ]


def _loaded_after(script: str, watched: tuple[str, ...] = HEAVY) -> list[str]:
    """The `watched` modules (or packages) in sys.modules after `script` runs in a fresh
    interpreter."""
    probe = f"""
import json, sys
{script}
watched = {list(watched)!r}
print(json.dumps(sorted(
    w for w in watched if any(n == w or n.startswith(w + ".") for n in sys.modules)
)))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_importing_the_command_line_loads_no_heavy_library() -> None:
    assert _loaded_after("import oracle.cli") == []


def test_consensus_and_proof_verify_run_without_heavy_libraries(tmp_path: Path) -> None:
    proof = tmp_path / "proof.json"
    script = f"""
import contextlib, io
from oracle.cli import cli
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(["consensus", {str(EXAMPLE)!r}, "--proof", {str(proof)!r}], standalone_mode=False)
    cli.main(["proof", "verify", {str(proof)!r}], standalone_mode=False)
"""
    assert _loaded_after(script) == []
    assert proof.exists()


def test_consensus_validates_only_the_sections_it_uses() -> None:
    # The other sections' models (and the settings loader of the whole file) cost as much
    # start-up time as the consensus itself: bench/startup.py.
    script = f"""
import contextlib, io
from oracle.cli import cli
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(["consensus", {str(EXAMPLE)!r}], standalone_mode=False)
"""
    others = (
        "oracle.config",
        "oracle.agents",
        "oracle.chain",
        "oracle.daemon",
        "oracle.store",
        "asyncio",
    )
    assert _loaded_after(script, others) == []


def test_proof_verify_builds_no_model(tmp_path: Path) -> None:
    # Checking a checksum needs the canonical JSON and a hash, not the core's pydantic
    # models: `oracle.core` exports lazily so that importing `oracle.core.proof` builds
    # none of them (bench/startup.py: `proof verify` starts as fast as `--help`).
    proof = tmp_path / "proof.json"
    make_proof = f"""
import contextlib, io
from oracle.cli import cli
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(["consensus", {str(EXAMPLE)!r}, "--proof", {str(proof)!r}], standalone_mode=False)
"""
    assert _loaded_after(make_proof, ("pydantic",)) == ["pydantic"]
    verify = f"""
import contextlib, io
from oracle.cli import cli
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(["proof", "verify", {str(proof)!r}], standalone_mode=False)
"""
    assert _loaded_after(verify, ("pydantic", "oracle.core.models", "yaml")) == []


def test_the_core_package_exports_every_name_it_lists() -> None:
    for name in oracle.core.__all__:
        assert getattr(oracle.core, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = oracle.core.no_such_name


def test_the_probe_sees_a_heavy_library_when_one_is_loaded() -> None:
    # Without this, an empty list above could come from a probe that sees nothing.
    assert _loaded_after("import sqlalchemy") == ["sqlalchemy"]
