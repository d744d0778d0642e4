"""deploy/kubernetes/: what the manifests make each pod do, not only their shape.

The StatefulSet's pods are played here without a cluster: each pod's name as Kubernetes
gives it (`<statefulset>-<ordinal>`), its init container's script run by `sh` against a
directory laid out as the Secret volume would be, and the daemon's settings loaded from
the ConfigMap and the container's environment, resolved the way the kubelet resolves it.
Then the signer each pod would unlock is unlocked for real.

No cluster and no schema validator (kubeconform) is available offline; `kubectl kustomize`
is run where kubectl exists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from oracle.chain.keys import create_keystore, signer_from_settings
from oracle.config import Settings, load_settings
from tests.deploy.helpers import DEPLOY, DEPLOY_CONFIG
from tests.deploy.test_manifests import (
    SECRET_WORDS,
    dockerfile,
    dockerfile_env,
    k8s_documents,
    routes,
    unit,
)

K8S = DEPLOY / "kubernetes"
DUMMY_DATABASE_URL = "postgresql+psycopg://oracle:dummy@db:5432/oracle"


def statefulset() -> dict[str, Any]:
    return k8s_documents()["StatefulSet/oracle"]


def pod_spec() -> dict[str, Any]:
    spec: dict[str, Any] = statefulset()["spec"]["template"]["spec"]
    return spec


def only(items: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (item,) = [i for i in items if i["name"] == name]
    return item


def daemon_container() -> dict[str, Any]:
    return only(pod_spec()["containers"], "oracle")


def signer_init_container() -> dict[str, Any]:
    return only(pod_spec()["initContainers"], "signer")


def volume(name: str) -> dict[str, Any]:
    return only(pod_spec()["volumes"], name)


def pod_names() -> list[str]:
    """What Kubernetes names the StatefulSet's pods: <name>-0 ... <name>-(replicas-1)."""
    name = statefulset()["metadata"]["name"]
    return [f"{name}-{ordinal}" for ordinal in range(statefulset()["spec"]["replicas"])]


@dataclass
class Pod:
    """One pod of the StatefulSet, its volumes as directories of this machine."""

    name: str
    volumes: dict[str, Path]  # volume name -> the directory standing for it

    def host_path(self, container: dict[str, Any], path: str) -> Path:
        """Where `path`, as `container` sees it, lies here (through its volume mounts)."""
        for mount in sorted(container["volumeMounts"], key=lambda m: -len(m["mountPath"])):
            prefix = mount["mountPath"].rstrip("/") + "/"
            if path.startswith(prefix):
                return self.volumes[mount["name"]] / path.removeprefix(prefix)
        raise AssertionError(f"{path} is on no volume of container {container['name']}")

    def env(self, container: dict[str, Any]) -> dict[str, str]:
        """The container's environment as the kubelet resolves it for this pod."""
        env: dict[str, str] = {}
        for variable in container.get("env", []):
            source = variable.get("valueFrom", {})
            if "value" in variable:
                env[variable["name"]] = variable["value"]
            elif source.get("fieldRef", {}).get("fieldPath") == "metadata.name":
                env[variable["name"]] = self.name
            elif "secretKeyRef" in source:
                ref = source["secretKeyRef"]
                assert (ref["name"], ref["key"]) == ("oracle-secrets", "database-url")
                env[variable["name"]] = DUMMY_DATABASE_URL
            else:
                raise AssertionError(f"unexpected source of {variable['name']}: {source}")
        return env

    def run_init(self, container: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        """The init container's command, its mount paths pointing at this pod's volumes."""
        command = list(container["command"])
        assert command[:2] == ["sh", "-c"]
        script = command[2]
        for mount in container["volumeMounts"]:
            script = script.replace(mount["mountPath"], str(self.volumes[mount["name"]]))
        assert "/var/run/oracle" not in script
        assert "/run/oracle" not in script
        return subprocess.run(
            ["sh", "-c", script],
            env={"PATH": os.environ["PATH"], **self.env(container)},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    def settings(self, monkeypatch: pytest.MonkeyPatch) -> Settings:
        container = daemon_container()
        env = self.env(container)
        config = self.host_path(container, env["ORACLE_CONFIG"])
        for name in [n for n in os.environ if n.startswith("ORACLE")]:
            monkeypatch.delenv(name)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        settings = load_settings(config)
        signer = settings.chain_settings().signer
        # The daemon reads these files where the container sees them; here, where they are.
        moved = {
            field: str(self.host_path(container, value))
            for field in ("keystore", "password_file")
            if (value := getattr(signer, field)) is not None
        }
        chain = settings.chain_settings()
        chain = chain.model_copy(update={"signer": signer.model_copy(update=moved)})
        return settings.model_copy(update={"chains": (chain,)})


@pytest.fixture
def keystores(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The Secret `oracle-keystores` as its volume shows it: a keystore and its password for
    each pod of the StatefulSet. Returns the directory and {pod name: address}."""
    directory = tmp_path / "secret-oracle-keystores"
    directory.mkdir()
    addresses = {}
    for name in pod_names():
        password = f"password of {name}"
        (directory / f"{name}.password").write_text(f"{password}\n")  # as `openssl rand` writes
        addresses[name] = create_keystore(
            directory / f"{name}.json", SecretStr(password), iterations=2
        )
    return directory, addresses


def make_pod(name: str, tmp_path: Path, keystores_dir: Path) -> Pod:
    volumes: dict[str, Path] = {}
    for spec in pod_spec()["volumes"]:
        if spec.get("secret", {}).get("secretName") == "oracle-keystores":
            volumes[spec["name"]] = keystores_dir
        elif "configMap" in spec:
            directory = tmp_path / name / spec["name"]
            directory.mkdir(parents=True)
            configmap = k8s_documents()[f"ConfigMap/{spec['configMap']['name']}"]
            for key, text in configmap["data"].items():
                (directory / key).write_text(text)
            volumes[spec["name"]] = directory
        else:
            volumes[spec["name"]] = tmp_path / name / spec["name"]
            volumes[spec["name"]].mkdir(parents=True)
    return Pod(name, volumes)


def test_each_replica_signs_with_its_own_key(
    keystores: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keystores_dir, addresses = keystores
    assert len(pod_names()) >= 2
    seen: dict[str, str] = {}
    for name in pod_names():
        pod = make_pod(name, tmp_path, keystores_dir)
        init = pod.run_init(signer_init_container())
        assert init.returncode == 0, init.stderr
        assert f"{name} signs with the keystore {name}.json" in init.stdout
        settings = pod.settings(monkeypatch)
        assert settings.daemon.replica_id == name  # leases and the audit log name the pod
        signer = signer_from_settings(settings.chain_settings().signer)
        assert signer.address == addresses[name], name
        seen[name] = signer.address
        # The copies the daemon reads are its own: not readable by anyone else.
        ours = settings.chain_settings().signer
        for path in (ours.keystore, ours.password_file):
            assert path is not None
            assert Path(path).stat().st_mode & 0o077 == 0, path
    assert len(set(seen.values())) == len(seen)  # no two replicas share a key


def test_a_pod_without_its_keys_stops_in_its_init_container_naming_them(
    keystores: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    keystores_dir, _ = keystores
    # Scaled up past the keys in the Secret:
    name = f"{statefulset()['metadata']['name']}-{statefulset()['spec']['replicas']}"
    pod = make_pod(name, tmp_path, keystores_dir)
    init = pod.run_init(signer_init_container())
    assert init.returncode != 0
    assert f"oracle-keystores has no key {name}.json for pod {name}" in init.stderr
    assert not any(pod.volumes["signer"].iterdir())
    # A password without its keystore, or an empty file, is refused the same way.
    (keystores_dir / f"{name}.password").write_text("secret")
    (keystores_dir / f"{name}.json").write_text("")
    init = pod.run_init(signer_init_container())
    assert init.returncode != 0
    assert f"no key {name}.json" in init.stderr


def test_only_the_init_container_sees_every_replicas_keys() -> None:
    keystores = [v for v in pod_spec()["volumes"] if "secret" in v]
    assert [v["secret"]["secretName"] for v in keystores] == ["oracle-keystores"]
    (keystore_volume,) = keystores
    daemon_mounts = {m["name"] for m in daemon_container()["volumeMounts"]}
    init_mounts = {m["name"]: m for m in signer_init_container()["volumeMounts"]}
    assert keystore_volume["name"] not in daemon_mounts
    assert init_mounts[keystore_volume["name"]]["readOnly"] is True
    # The copy of one key lives in memory, read-only for the daemon.
    signer = volume("signer")
    assert signer["emptyDir"]["medium"] == "Memory"
    assert only(daemon_container()["volumeMounts"], "signer")["readOnly"] is True
    # The Secret's files belong to root; the pod's user reads them through fsGroup.
    assert keystore_volume["secret"]["defaultMode"] & 0o040
    assert not keystore_volume["secret"]["defaultMode"] & 0o007
    assert pod_spec()["securityContext"]["fsGroup"] == pod_spec()["securityContext"]["runAsGroup"]
    for container in (signer_init_container(), daemon_container()):
        assert container["image"] == daemon_container()["image"]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["allowPrivilegeEscalation"] is False


def test_the_headless_service_names_each_pod_and_lists_every_replica() -> None:
    service = k8s_documents()[f"Service/{statefulset()['spec']['serviceName']}"]["spec"]
    assert service["clusterIP"] == "None"  # headless: oracle-N.oracle.<namespace>.svc
    assert service["publishNotReadyAddresses"] is True  # a starting replica is scraped too
    labels = statefulset()["spec"]["template"]["metadata"]["labels"]
    assert statefulset()["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["selector"].items() <= labels.items()
    assert statefulset()["spec"]["podManagementPolicy"] == "Parallel"


def test_probes_and_scraping_hit_what_the_pods_daemon_serves(
    keystores: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keystores_dir, _ = keystores
    pod = make_pod(pod_names()[0], tmp_path, keystores_dir)
    settings = pod.settings(monkeypatch)
    # Where the daemon of this pod listens, from its own settings:
    assert settings.metrics.enabled is True
    assert settings.metrics.host == "0.0.0.0"  # reachable by the kubelet and Prometheus
    port = settings.metrics.port
    container = daemon_container()
    named_ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    served = routes()
    for probe, path in (
        ("startupProbe", "/healthz"),
        ("livenessProbe", "/healthz"),
        ("readinessProbe", "/readyz"),
    ):
        http = container[probe]["httpGet"]
        assert (http["path"], named_ports.get(http["port"], http["port"])) == (path, port)
        assert path in served
    annotations = statefulset()["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == port
    assert annotations["prometheus.io/path"] == "/metrics"
    assert "/metrics" in served
    service = k8s_documents()["Service/oracle"]["spec"]
    assert [named_ports[p["targetPort"]] for p in service["ports"]] == [port]
    monitor = k8s_documents()["PodMonitor/oracle"]["spec"]
    assert {named_ports[e["port"]] for e in monitor["podMetricsEndpoints"]} == {port}


def test_every_deployment_runs_oracle_run_with_the_config_the_image_ships() -> None:
    image_env = dockerfile_env()
    config_path = image_env["ORACLE_CONFIG"]
    instructions = dict(dockerfile())
    assert (instructions["ENTRYPOINT"], instructions["CMD"]) == ('["oracle"]', '["run"]')
    assert (f"deploy/config.yaml {config_path}") in [
        args for word, args in dockerfile() if word == "COPY"
    ]
    # Kubernetes: the image's entry point and command, the ConfigMap at the image's path.
    container = daemon_container()
    assert "command" not in container
    assert "args" not in container
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["ORACLE_CONFIG"] == config_path
    (mount,) = [
        m for m in container["volumeMounts"] if config_path.startswith(m["mountPath"] + "/")
    ]
    configmap = volume(mount["name"])["configMap"]["name"]
    key = config_path.removeprefix(mount["mountPath"] + "/")
    assert k8s_documents()[f"ConfigMap/{configmap}"]["data"][key] == DEPLOY_CONFIG.read_text()
    # compose: the image's command, deploy/config.yaml mounted at the image's path.
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    oracle = compose["services"]["oracle"]
    assert "command" not in oracle
    assert "entrypoint" not in oracle
    assert "ORACLE_CONFIG" not in oracle.get("environment", {})
    mounts = dict(v.split(":")[:2][::-1] for v in oracle["volumes"])
    assert (DEPLOY / mounts[config_path]).resolve() == DEPLOY_CONFIG
    # systemd: `oracle run`, deploy/config.yaml installed at the same path.
    service = unit()["Service"]
    assert service["ExecStart"][-1].split()[-2:][1] == "run"
    assert service["ExecStart"][-1].split()[0].endswith("/bin/oracle")
    assert f"ORACLE_CONFIG={config_path}" in " ".join(service["Environment"]).split()


def test_no_secret_value_is_written_in_the_manifests() -> None:
    private_key = re.compile(r"\b(0x)?[0-9a-fA-F]{64}\b")
    url_with_password = re.compile(r"://[^/\s:@]+:[^/\s@]+@")
    for path in sorted(K8S.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert not private_key.search(text), path.name
        assert not url_with_password.search(text), path.name
        for document in yaml.safe_load_all(text):
            if document is None:
                continue
            assert document["kind"] != "Secret", f"{path.name}: create Secrets with kubectl"
    for key, document in k8s_documents().items():
        template = document.get("spec", {}).get("template", {}).get("spec", {})
        for container in template.get("initContainers", []) + template.get("containers", []):
            for variable in container.get("env", []):
                if SECRET_WORDS.search(variable["name"]) and "value" in variable:
                    # Only the path of a file that holds a secret may be written here.
                    assert variable["name"].endswith("_FILE"), (key, variable["name"])


def test_kustomize_builds_every_manifest() -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not found (it carries kustomize)")
    run = subprocess.run(
        [kubectl, "kustomize", str(K8S)], capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 0, run.stderr
    built = {f"{d['kind']}/{d['metadata']['name']}": d for d in yaml.safe_load_all(run.stdout) if d}
    expected = {k for k in k8s_documents() if not k.startswith(("Kustomization/", "PodMonitor/"))}
    assert set(built) == expected
    for document in built.values():
        assert document["metadata"]["labels"]["app.kubernetes.io/part-of"] == "oracle"
    # kustomize labels the selector too: the Service still finds the pods.
    pod_labels = built["StatefulSet/oracle"]["spec"]["template"]["metadata"]["labels"]
    assert built["Service/oracle"]["spec"]["selector"].items() <= pod_labels.items()
