"""deploy/Dockerfile built and run for real, with podman, on a stand-in for its base image.

The base image (python:3.11.x-slim-bookworm) cannot be pulled here, so the build starts
from a stand-in made on this machine: Debian bookworm (debootstrap) with its Python 3.11,
`python` and the venv module, which is what the Dockerfile asks of its base. The rest is
the real build: the build stage makes the wheel, the image installs the runtime lock with
--require-hashes from PyPI, and the tests run the image: its default command serves the
daemon's endpoints and passes its HEALTHCHECK, any other command runs through the `oracle`
entry point, and it holds exactly the locked packages and none of the sources.

Needs podman (Debian's podman package; runc and debootstrap too) and root; skips saying
so otherwise. The stand-in is made once per machine (about 3 minutes) and kept as
STANDIN_IMAGE; the image build takes about 2 minutes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.utils import canonicalize_name

from tests.commands import quiet_venue
from tests.deploy.helpers import DEPLOY, DEPLOY_CONFIG, REPO
from tests.test_lock import linux_environment, pins

STANDIN_IMAGE = "localhost/oracle-test-base:python3.11-bookworm"
IMAGE = "localhost/oracle:test"
UID = 10001  # the Dockerfile's user
# debootstrap's own default mirror, unless this names another.
DEBIAN_MIRROR = os.environ.get("ORACLE_TEST_DEBIAN_MIRROR")
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


def podman() -> str:
    found = shutil.which("podman")
    if found is None:
        pytest.skip("podman not found (Debian's podman package; scripts/test installs it)")
    if os.geteuid() != 0:
        pytest.skip("the image tests run podman as root")
    return found


def runtime_options() -> list[str]:
    """What every container needs on this kind of machine: its sandbox refuses crun's
    cgroups setup and rlimits above its own, so runc, with modest limits."""
    options = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1000:1000"]
    if shutil.which("runc"):
        options = ["--runtime", "runc", *options]
    return options


def run(args: list[str], timeout: float, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,  # type: ignore[call-overload]
    )


def make_standin(tool: str) -> None:
    """Debian bookworm's Python 3.11 as an image, shaped like python:3.11-slim."""
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        pytest.skip("debootstrap not found (Debian's debootstrap package), for the stand-in")
    with tempfile.TemporaryDirectory(prefix="oracle-standin-") as directory:
        root = Path(directory) / "root"
        made = run(
            [
                debootstrap,
                "--variant=minbase",
                "--include=python3,python3-venv,ca-certificates",
                "bookworm",
                str(root),
                *([DEBIAN_MIRROR] if DEBIAN_MIRROR else []),
            ],
            timeout=1200,
        )
        if made.returncode != 0:
            pytest.skip(f"debootstrap could not make the stand-in: {made.stderr[-1000:]}")
        (root / "usr/bin/python").symlink_to("python3")
        # This machine reaches PyPI through a proxy with its own certificate authority:
        # give the stand-in the machine's CA bundle and make pip use it, as the real base
        # image would be given them on such a network.
        if CA_BUNDLE.is_file():
            shutil.copy(CA_BUNDLE, root / "etc/ssl/certs/ca-certificates.crt")
            (root / "etc/pip.conf").write_text(f"[global]\ncert = {CA_BUNDLE}\n")
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        imported = run(
            [tool, "import", "--change", 'CMD ["python3"]', "-", STANDIN_IMAGE],
            timeout=600,
            stdin=tar.stdout,
        )
        tar.wait(timeout=60)
        assert imported.returncode == 0, imported.stderr


@pytest.fixture(scope="module")
def image() -> str:
    tool = podman()
    if run([tool, "image", "exists", STANDIN_IMAGE], timeout=60).returncode != 0:
        make_standin(tool)
    built = run(
        [
            tool,
            "build",
            *runtime_options(),
            "--network",
            "host",
            "--format",
            "docker",  # keeps the HEALTHCHECK (OCI images have none)
            "--ignorefile",
            str(DEPLOY / "Dockerfile.dockerignore"),
            "--build-arg",
            f"PYTHON_IMAGE={STANDIN_IMAGE}",
            "--build-arg",
            "ORACLE_COMMIT=0123abc",
            "-f",
            str(DEPLOY / "Dockerfile"),
            "-t",
            IMAGE,
            str(REPO),
        ],
        timeout=1500,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return IMAGE


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A volume for /var/lib/oracle/data, writable by the image's user."""
    data = tmp_path / "data"
    data.mkdir()
    os.chown(data, UID, UID)
    return data


def container(
    image: str, data: Path, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return run(
        [
            podman(),
            "run",
            "--rm",
            *runtime_options(),
            "--network",
            "host",
            "--no-healthcheck",
            "-v",
            f"{data}:/var/lib/oracle/data",
            image,
            *args,
        ],
        timeout=timeout,
    )


def inspect(image: str) -> dict[str, Any]:
    found = run([podman(), "image", "inspect", image], timeout=60)
    assert found.returncode == 0, found.stderr
    (document,) = json.loads(found.stdout)
    result: dict[str, Any] = document
    return result


def test_the_image_runs_as_its_user_with_oracle_run_by_default(image: str) -> None:
    document = inspect(image)
    config = document["Config"]
    assert config["Entrypoint"] == ["oracle"]
    assert config["Cmd"] == ["run"]
    assert config["User"] == f"{UID}:{UID}"
    assert config["WorkingDir"] == "/var/lib/oracle"
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["ORACLE_CONFIG"] == "/etc/oracle/config.yaml"
    assert env["ORACLE_COMMIT"] == "0123abc"
    assert env["PATH"].startswith("/opt/oracle/bin:")
    assert config["StopSignal"] == "SIGTERM"
    # podman shows a docker-format image's HEALTHCHECK beside its Config.
    assert "/healthz" in " ".join(document["Healthcheck"]["Test"])


def test_any_oracle_command_runs_through_the_entry_point(image: str, data_dir: Path) -> None:
    version = container(image, data_dir, "--version")
    assert version.returncode == 0, version.stderr
    assert "0.1.0" in version.stdout
    missing = container(image, data_dir, "review", "list")
    assert missing.returncode != 0
    assert "oracle db upgrade" in missing.stderr  # the daemon's own message, not a shell's
    upgrade = container(image, data_dir, "db", "upgrade")
    assert upgrade.returncode == 0, upgrade.stderr
    listed = container(image, data_dir, "review", "list")
    assert listed.returncode == 0, listed.stderr
    assert "no open review items" in listed.stdout
    assert (data_dir / "oracle.db").stat().st_uid == UID


def test_the_shipped_configuration_refuses_to_run_until_it_has_agents_and_sources(
    image: str, data_dir: Path
) -> None:
    refused = container(image, data_dir)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip().splitlines() == [
        "error: agents, market_sources: none configured: the daemon would have nothing to do "
        "(no agent to research markets with and no market source to find markets in; see "
        "config.yaml)"
    ]


def in_image(image: str, program: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`program` run in the image in place of its entry point."""
    return run(
        [
            podman(),
            "run",
            "--rm",
            *runtime_options(),
            "--no-healthcheck",
            "--entrypoint",
            program,
            image,
            *args,
        ],
        timeout=120,
    )


LIST_DISTRIBUTIONS = (
    "import importlib.metadata as m, json, platform; print(json.dumps("
    "[platform.machine(), {d.metadata['Name']: d.version for d in m.distributions()}]))"
)


def test_the_image_holds_the_runtime_lock_and_nothing_of_the_build(image: str) -> None:
    listing = in_image(image, "python", "-c", LIST_DISTRIBUTIONS)
    assert listing.returncode == 0, listing.stderr
    machine, installed = json.loads(listing.stdout)
    environment = linux_environment(machine)
    expected = {
        name: pin.version for name, pin in pins("runtime").items() if pin.applies(environment)
    }
    got = {canonicalize_name(name): version for name, version in installed.items()}
    assert got.pop("oracle") == "0.1.0"
    # The virtualenv's own installer, from the base image's Python.
    for tool in ("pip", "setuptools"):
        if tool not in expected:
            got.pop(tool, None)
    assert got == expected
    leftovers = in_image(
        image,
        "sh",
        "-c",
        "ls -d /src /wheels /opt/build /tmp/wheels /tmp/runtime.lock 2>/dev/null;"
        " find / -xdev -name 'oracle-*.whl' -o -name runtime.lock 2>/dev/null; ls -A /tmp",
    )
    assert leftovers.stdout.strip() == ""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def working_config(directory: Path, data: Path) -> Path:
    """deploy/config.yaml with what `oracle run` needs to start (it refuses without agents
    or market sources): a replay agent and a venue without markets, on this machine."""
    (data / "recordings").mkdir()
    os.chown(data / "recordings", UID, UID)
    config = yaml.safe_load(DEPLOY_CONFIG.read_text(encoding="utf-8"))
    config["agents"] = [
        {"name": "a", "kind": "replay", "directory": "/var/lib/oracle/data/recordings"}
    ]
    config["market_sources"] = [quiet_venue()]
    path = directory / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    path.chmod(0o644)
    return path


@pytest.fixture
def daemon(image: str, data_dir: Path, tmp_path: Path) -> Iterator[tuple[str, int]]:
    assert container(image, data_dir, "db", "upgrade").returncode == 0
    config = working_config(tmp_path, data_dir)
    port = free_port()
    name = f"oracle-test-{port}"
    started = run(
        [
            podman(),
            "run",
            "-d",
            "--name",
            name,
            *runtime_options(),
            "--network",
            "host",
            "-e",
            f"ORACLE__METRICS__PORT={port}",
            "-v",
            f"{data_dir}:/var/lib/oracle/data",
            "-v",
            f"{config}:/etc/oracle/config.yaml:ro",
            image,
        ],
        timeout=120,
    )
    assert started.returncode == 0, started.stderr
    try:
        yield name, port
    finally:
        run([podman(), "rm", "-f", "-t", "0", name], timeout=120)


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_the_default_command_serves_the_daemon_and_stops_on_sigterm(
    daemon: tuple[str, int],
) -> None:
    name, port = daemon
    deadline = time.monotonic() + 120
    while True:
        try:
            status, _ = get(f"http://127.0.0.1:{port}/healthz")
            if status == 200:
                break
        except OSError:
            pass
        logs = run([podman(), "logs", name], timeout=60)
        assert time.monotonic() < deadline, logs.stdout[-3000:] + logs.stderr[-3000:]
        time.sleep(1)
    status, body = get(f"http://127.0.0.1:{port}/readyz")
    assert status == 200, body
    status, metrics = get(f"http://127.0.0.1:{port}/metrics")
    assert status == 200
    assert 'commit="0123abc"' in metrics  # oracle_build_info, from the build argument
    # The image's HEALTHCHECK command, run as the container engine runs it.
    health = run([podman(), "healthcheck", "run", name], timeout=60)
    assert health.returncode == 0, health.stdout + health.stderr
    stop = run([podman(), "stop", "-t", "90", name], timeout=150)
    assert stop.returncode == 0, stop.stderr
    state = run([podman(), "inspect", name, "--format", "{{.State.ExitCode}}"], timeout=60)
    assert state.stdout.strip() == "0"  # drained and exited, not killed
    logs = run([podman(), "logs", name], timeout=60)
    lines = (logs.stdout + logs.stderr).splitlines()
    events = [json.loads(line)["event"] for line in lines if line.startswith("{")]
    assert "daemon.started" in events
    assert events[-1] == "daemon.stopped"
