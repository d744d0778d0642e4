"""The review console in the deploy kit: what each manifest makes the console process do.

Kubernetes, compose and systemd each run `oracle console serve` from the daemon's image
(or install) with the daemon's configuration; the console's settings, resolved from the
ConfigMap and the container's environment, put it where its probes, Service and scrape
annotations look; and it never sees a signing key."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from oracle.config import load_settings
from oracle.console.app import make_app
from oracle.store.database import open_database
from oracle.store.repository import Store
from tests.deploy.helpers import DEPLOY, DEPLOY_CONFIG
from tests.deploy.test_kubernetes import daemon_container, only, statefulset
from tests.deploy.test_manifests import dockerfile_env, k8s_documents, unit

DUMMY_DATABASE_URL = "postgresql+psycopg://oracle:dummy@db:5432/oracle"


def deployment() -> dict[str, Any]:
    return k8s_documents()["Deployment/oracle-console"]


def console_container() -> dict[str, Any]:
    return only(deployment()["spec"]["template"]["spec"]["containers"], "console")


def resolved_env(container: dict[str, Any]) -> dict[str, str]:
    env = {}
    for variable in container["env"]:
        if "value" in variable:
            env[variable["name"]] = variable["value"]
        else:
            ref = variable["valueFrom"]["secretKeyRef"]
            assert (ref["name"], ref["key"]) == ("oracle-secrets", "database-url")
            env[variable["name"]] = DUMMY_DATABASE_URL
    return env


def console_routes(tmp_path: Path) -> set[str]:
    store = Store(open_database(f"sqlite:///{tmp_path / 'routes.db'}", create=True))
    try:
        app = make_app(store, load_settings(DEPLOY_CONFIG).console)
        return {resource.canonical for resource in app.router.resources()}
    finally:
        store.engine.dispose()


def test_kubernetes_serves_the_console_where_probes_service_and_scraping_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    container = console_container()
    assert container["image"] == daemon_container()["image"]
    assert container["args"] == ["console", "serve"]  # after the image's `oracle` entry point
    assert "command" not in container
    env = resolved_env(container)
    assert env["ORACLE_CONFIG"] == dockerfile_env()["ORACLE_CONFIG"]
    for name in [n for n in os.environ if n.startswith("ORACLE")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = load_settings(DEPLOY_CONFIG)  # the ConfigMap holds deploy/config.yaml
    console = settings.console
    assert console.host == "0.0.0.0"
    assert console.secure_cookies  # behind TLS: the setting cannot be off on this address
    named_ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    served = console_routes(tmp_path)
    for probe in ("livenessProbe", "readinessProbe"):
        http = container[probe]["httpGet"]
        assert named_ports[http["port"]] == console.port
        assert http["path"] == "/healthz"
        assert http["path"] in served
    annotations = deployment()["spec"]["template"]["metadata"]["annotations"]
    assert int(annotations["prometheus.io/port"]) == console.port
    assert annotations["prometheus.io/path"] in served
    service = k8s_documents()["Service/oracle-console"]["spec"]
    assert service["selector"] == deployment()["spec"]["selector"]["matchLabels"]
    assert [named_ports[p["targetPort"]] for p in service["ports"]] == [console.port]
    # The daemon's Service and StatefulSet select the daemon only, not console pods.
    daemon_labels = statefulset()["spec"]["selector"]["matchLabels"]
    assert daemon_labels["app.kubernetes.io/component"] == "daemon"
    assert k8s_documents()["Service/oracle"]["spec"]["selector"] == daemon_labels


def test_the_console_never_sees_a_signing_key() -> None:
    spec = deployment()["spec"]["template"]["spec"]
    assert "initContainers" not in spec
    secrets = [v for v in spec["volumes"] if "secret" in v]
    assert secrets == []
    names = {variable["name"] for variable in console_container()["env"]}
    assert not {n for n in names if "SIGNER" in n or "KEYSTORE" in n}
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    assert "secrets" not in compose["services"]["console"]


def test_compose_and_systemd_run_the_console_with_the_daemons_configuration() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    services = compose["services"]
    console, daemon = services["console"], services["oracle"]
    assert console["image"] == daemon["image"]
    assert console["command"] == ["console", "serve"]
    assert (
        console["environment"]["ORACLE__DATABASE__URL"]
        == (daemon["environment"]["ORACLE__DATABASE__URL"])
    )
    assert console["environment"]["ORACLE__CONSOLE__HOST"] == "0.0.0.0"
    port = str(console["environment"]["ORACLE__CONSOLE__PORT"])
    assert console["ports"] == [f"127.0.0.1:{port}:{port}"]  # this machine only
    assert [v for v in console["volumes"] if v.endswith(":ro")] == [
        v for v in daemon["volumes"] if "config.yaml" in v
    ]
    console_unit, daemon_unit = unit("oracle-console.service"), unit()
    assert console_unit["Service"]["ExecStart"] == [
        daemon_unit["Service"]["ExecStart"][0].replace(" run", " console serve")
    ]
    for key in ("Environment", "EnvironmentFile"):
        assert set(daemon_unit["Service"][key]) <= set(console_unit["Service"][key])
    assert "oracle.service" in " ".join(console_unit["Unit"]["After"])
