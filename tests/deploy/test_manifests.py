"""Kubernetes, compose, systemd and the Dockerfile: they parse and agree with the application.

Each check ties a deployment file to the code it runs: the probe paths are routes of
the daemon's web app, the ports are the metrics port, grace periods exceed the drain
timeout, and the configuration each deployment hands the daemon is valid.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
import yaml

from oracle.config import Settings, load_settings
from oracle.daemon.runner import build_web_app
from oracle.daemon.settings import DaemonSettings, MetricsSettings
from tests.deploy.helpers import (
    ALERTMANAGER_CONFIG,
    ALERTMANAGER_TEMPLATES,
    DEPLOY,
    DEPLOY_CONFIG,
    PROMETHEUS_CONFIG,
    REPO,
)

K8S = DEPLOY / "kubernetes"
SECRET_WORDS = re.compile(r"PASSWORD|SECRET|TOKEN|PRIVATE|DATABASE__URL|API_KEY", re.IGNORECASE)
DUMMY_DATABASE_URL = "postgresql+psycopg://oracle:dummy@db:5432/oracle"


def routes() -> set[str]:
    app = build_web_app(daemon=None, scheduler=None)  # type: ignore[arg-type]
    return {resource.canonical for resource in app.router.resources()}


def deploy_config() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(DEPLOY_CONFIG.read_text(encoding="utf-8"))
    return data


def drain_timeout() -> float:
    """The larger of the default and the deployed configuration's drain timeout."""
    configured = deploy_config().get("daemon", {}).get("drain_timeout", 0)
    return max(DaemonSettings().drain_timeout, float(configured))


def metrics_port() -> int:
    port = deploy_config().get("metrics", {}).get("port", MetricsSettings().port)
    assert port == MetricsSettings().port, "deploy/config.yaml moves the metrics port"
    return int(port)


def seconds(value: str | int) -> float:
    """`90`, `90s`, `1m30s`, `2min` as seconds (compose and systemd spellings)."""
    if isinstance(value, int):
        return float(value)
    units = {"ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*(ms|min|sec|s|m|h)?", value.strip())
    assert parts, value
    return sum(float(number) * units[unit or "s"] for number, unit in parts)


def settings_with(env: dict[str, str], monkeypatch: pytest.MonkeyPatch, path: Path) -> Settings:
    """The daemon's settings from `path` and exactly the environment `env`."""
    for name in [n for n in os.environ if n.startswith("ORACLE")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return load_settings(path)


# -- Kubernetes ----------------------------------------------------------------------------


def k8s_documents() -> dict[str, dict[str, Any]]:
    documents = {}
    for path in sorted(K8S.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if document is not None:
                documents[f"{document['kind']}/{document.get('metadata', {}).get('name')}"] = (
                    document
                )
    return documents


def statefulset() -> dict[str, Any]:
    return k8s_documents()["StatefulSet/oracle"]


def container() -> dict[str, Any]:
    containers = statefulset()["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    result: dict[str, Any] = containers[0]
    return result


def test_kubernetes_manifests_parse_and_kustomization_lists_them() -> None:
    kinds = {key.split("/")[0] for key in k8s_documents()}
    assert kinds >= {"StatefulSet", "Service", "ConfigMap", "Kustomization", "PodMonitor"}
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    for name in listed:
        assert (K8S / name).is_file(), name
    # Everything but the kustomization itself and the operator-only PodMonitor.
    expected = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", "podmonitor.yaml"}
    assert listed == expected


def test_statefulset_runs_several_replicas_and_outlasts_the_drain() -> None:
    spec = statefulset()["spec"]
    assert spec["replicas"] >= 2
    grace = spec["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace > drain_timeout()
    # One pod at a time: the others keep working through an update.
    assert spec["updateStrategy"]["type"] == "RollingUpdate"
    assert spec["updateStrategy"].get("rollingUpdate", {}).get("maxUnavailable", 1) == 1


def test_probes_use_routes_of_the_daemon_on_the_metrics_port() -> None:
    c = container()
    port = metrics_port()
    named_ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert named_ports == {"metrics": port}
    assert {"/metrics", "/healthz", "/readyz"} <= routes()
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        http = c[probe]["httpGet"]
        assert http["path"] in routes(), probe
        assert named_ports.get(http["port"], http["port"]) == port, probe
    annotations = statefulset()["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == port
    assert annotations["prometheus.io/path"] in routes()


def test_secrets_come_from_secret_references_only() -> None:
    env = container()["env"]
    secret_refs = {
        e["name"]: e["valueFrom"]["secretKeyRef"]
        for e in env
        if "secretKeyRef" in e.get("valueFrom", {})
    }
    assert set(secret_refs) >= {"ORACLE__DATABASE__URL"}
    for e in env:
        # A *_FILE variable names a file (the signer's password: test_kubernetes.py).
        if SECRET_WORDS.search(e["name"]) and not e["name"].endswith("_FILE"):
            assert "value" not in e, f"{e['name']} is inline"
            assert e["name"] in secret_refs
    assert {ref["name"] for ref in secret_refs.values()} == {"oracle-secrets"}


def test_the_configmap_is_deploy_config_yaml_and_valid_with_the_pod_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    configmap = k8s_documents()["ConfigMap/oracle-config"]
    text = configmap["data"]["config.yaml"]
    assert text == DEPLOY_CONFIG.read_text(encoding="utf-8")
    volumes = {v["name"]: v for v in statefulset()["spec"]["template"]["spec"]["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in container()["volumeMounts"]}
    env: dict[str, str] = {}
    for e in container()["env"]:
        if "value" in e:
            env[e["name"]] = e["value"]
        elif e["name"] == "ORACLE__DATABASE__URL":
            env[e["name"]] = DUMMY_DATABASE_URL
        else:
            env[e["name"]] = "dummy"
    config_dir = str(Path(env["ORACLE_CONFIG"]).parent)
    assert volumes[mounts[config_dir]]["configMap"]["name"] == "oracle-config"
    path = tmp_path / "config.yaml"
    path.write_text(text)
    settings = settings_with(env, monkeypatch, path)
    assert settings.metrics.host == "0.0.0.0"
    assert settings.metrics.port == metrics_port()
    assert settings.database.url.startswith("postgresql")  # replicas share PostgreSQL
    assert settings.daemon.replica_id == "dummy"  # each pod names itself


def test_pod_is_non_root_with_a_read_only_root_and_writable_state() -> None:
    pod = statefulset()["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    security = container()["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    mounts = {m["mountPath"]: m["name"] for m in container()["volumeMounts"]}
    volumes = {v["name"] for v in pod["volumes"]}
    assert set(mounts.values()) <= volumes
    assert "/var/lib/oracle/data" in mounts  # SQLite or proofs: the image's WORKDIR/data
    assert "/tmp" in mounts


def test_service_pdb_and_podmonitor_select_the_pods() -> None:
    documents = k8s_documents()
    labels = statefulset()["spec"]["template"]["metadata"]["labels"]
    assert statefulset()["spec"]["selector"]["matchLabels"].items() <= labels.items()
    service = documents["Service/oracle"]["spec"]
    assert service["selector"].items() <= labels.items()
    port_names = {p["name"] for p in container()["ports"]}
    assert {p["targetPort"] for p in service["ports"]} <= port_names
    assert [p["port"] for p in service["ports"]] == [metrics_port()]
    pdb = documents["PodDisruptionBudget/oracle"]["spec"]
    assert pdb["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["minAvailable"] < statefulset()["spec"]["replicas"]
    monitor = documents["PodMonitor/oracle"]["spec"]
    assert monitor["selector"]["matchLabels"].items() <= labels.items()
    assert labels[monitor["jobLabel"]] == "oracle"  # the job the rules select on
    assert {e["port"] for e in monitor["podMetricsEndpoints"]} <= port_names
    assert {e["path"] for e in monitor["podMetricsEndpoints"]} <= routes()


# -- compose -------------------------------------------------------------------------------


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    return data


def interpolate(value: str) -> str:
    """compose's `${VAR:-default}` as its default; `${VAR}` and `${VAR:?message}` as dummy."""

    def replace(match: re.Match[str]) -> str:
        operator, rest = match.group(2) or "", match.group(3) or ""
        return rest if operator in (":-", "-") else "dummy"

    return re.sub(r"\$\{(\w+)(?:(:?[-?])([^}]*))?\}", replace, value)


def test_compose_runs_oracle_postgres_prometheus_and_grafana() -> None:
    services = compose()["services"]
    assert set(services) >= {"oracle", "postgres", "prometheus", "grafana"}
    build = services["oracle"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    assert services["oracle"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert seconds(services["oracle"]["stop_grace_period"]) > drain_timeout()
    assert services["oracle"]["stop_signal"] == "SIGTERM"
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), f"{name}: {source} does not exist"


def test_compose_keeps_secrets_out_of_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    services = compose()["services"]
    for name, service in services.items():
        for key, value in service.get("environment", {}).items():
            if SECRET_WORDS.search(key) and not key.endswith("_FILE"):
                assert "${" in str(value), f"{name}: {key} is inline"
            if "://" in str(value) and "@" in str(value):
                userinfo = str(value).split("://", 1)[1].split("@", 1)[0]
                assert ":" not in userinfo or "${" in userinfo, f"{name}: {key} holds a password"
    oracle = services["oracle"]
    secret_files = {f"/run/secrets/{s}" for s in oracle["secrets"]}
    env = {k: interpolate(str(v)) for k, v in oracle["environment"].items()}
    assert env["ORACLE__CHAINS__DEFAULT__SIGNER__PASSWORD_FILE"] in secret_files
    assert set(oracle["secrets"]) <= set(compose()["secrets"])
    # The image's own environment, then compose's, on the mounted config file.
    env = {**dockerfile_env(), **env}
    mounts = dict(reversed(v.split(":")[:2]) for v in oracle["volumes"])
    assert mounts[env["ORACLE_CONFIG"]] == "./config.yaml"
    settings = settings_with(env, monkeypatch, DEPLOY_CONFIG)
    assert settings.database.url == "postgresql+psycopg://oracle:dummy@postgres:5432/oracle"
    assert settings.metrics.host == "0.0.0.0"
    assert settings.chain_settings().signer.password_file == "/run/secrets/keystore_password"
    postgres = services["postgres"]["environment"]
    assert settings.database.url.endswith(f"/{postgres['POSTGRES_DB']}")
    assert f"//{postgres['POSTGRES_USER']}:" in settings.database.url


def test_prometheus_scrapes_the_compose_service_on_the_metrics_port() -> None:
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text(encoding="utf-8"))
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    oracle = jobs["oracle"]  # the rules and the dashboard select job="oracle"
    assert oracle.get("metrics_path", "/metrics") in routes()
    (sd,) = oracle["dns_sd_configs"]
    assert sd["names"] == ["oracle"]
    assert sd["port"] == metrics_port()
    assert "oracle" in compose()["services"]
    mounts = dict(
        reversed(v.split(":")[:2]) for v in compose()["services"]["prometheus"]["volumes"]
    )
    for rule_file in config["rule_files"]:
        assert (PROMETHEUS_CONFIG.parent / rule_file).is_file()
        assert f"/etc/prometheus/{rule_file}" in mounts


# -- systemd -------------------------------------------------------------------------------


def unit(name: str = "oracle.service") -> dict[str, dict[str, list[str]]]:
    """deploy/systemd/`name` as {section: {key: [values]}} (keys may repeat)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for raw in (DEPLOY / "systemd" / name).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def test_systemd_unit_is_hardened_and_outlasts_the_drain() -> None:
    service = {key: values[-1] for key, values in unit()["Service"].items()}
    assert service["ExecStart"].endswith("/oracle run")
    assert service["KillSignal"] == "SIGTERM"
    assert seconds(service["TimeoutStopSec"]) > drain_timeout()
    assert service["Restart"] == "on-failure"
    assert service["NoNewPrivileges"] == "yes"
    assert service["ProtectSystem"] == "strict"
    assert service.get("DynamicUser") == "yes" or service.get("User") not in (None, "root")
    state = service["StateDirectory"]
    assert service["WorkingDirectory"] == f"/var/lib/{state}"  # relative paths land there
    assert "/etc/oracle/config.yaml" in " ".join(unit()["Service"]["Environment"])
    assert unit()["Install"]["WantedBy"] == ["multi-user.target"]


def test_systemd_unit_keeps_secrets_out_of_the_file() -> None:
    for value in unit()["Service"].get("Environment", []):
        assert not SECRET_WORDS.search(value), value
    assert unit()["Service"]["EnvironmentFile"][0].lstrip("-").startswith("/etc/oracle/")


def test_systemd_analyze_accepts_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze not found (Debian's systemd package)")
    text = (DEPLOY / "systemd/oracle.service").read_text(encoding="utf-8")
    # The unit names the installed program; verify checks that it exists.
    copy = tmp_path / "oracle.service"
    copy.write_text(text.replace("/opt/oracle/venv/bin/oracle run", "/bin/true"))
    run = subprocess.run(
        [analyze, "verify", str(copy)], capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Unknown key" not in run.stderr, run.stderr


# -- Alertmanager --------------------------------------------------------------------------


def alertmanager_config() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ALERTMANAGER_CONFIG.read_text(encoding="utf-8"))
    return data


def secret_files() -> set[str]:
    """The files alertmanager.yml reads its receivers' secrets from."""
    files = set()
    for receiver in alertmanager_config()["receivers"]:
        for kind, key in (
            ("slack_configs", "api_url_file"),
            ("pagerduty_configs", "routing_key_file"),
        ):
            files |= {c[key] for c in receiver.get(kind, [])}
    return files


def templates() -> list[Path]:
    return sorted(ALERTMANAGER_TEMPLATES.glob("*.tmpl"))


def alertmanager_pod() -> tuple[dict[str, Any], dict[str, Any]]:
    pod: dict[str, Any] = k8s_documents()["Deployment/alertmanager"]["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    return pod, c


def flags(args: list[str]) -> dict[str, str]:
    return dict(arg.split("=", 1) for arg in args)


def test_the_alertmanager_configmap_is_deploy_alertmanager_verbatim() -> None:
    data = k8s_documents()["ConfigMap/alertmanager-config"]["data"]
    assert set(data) == {"alertmanager.yml", *(t.name for t in templates())}
    assert data["alertmanager.yml"] == ALERTMANAGER_CONFIG.read_text(encoding="utf-8")
    for template in templates():
        assert data[template.name] == template.read_text(encoding="utf-8"), template.name


def test_the_alertmanager_pod_finds_its_config_templates_and_secret_files() -> None:
    pod, c = alertmanager_pod()
    args = flags(c["args"])
    assert args["--cluster.listen-address"] == ""  # one instance, no gossip
    assert k8s_documents()["Deployment/alertmanager"]["spec"]["replicas"] == 1
    volumes = {v["name"]: v for v in pod["volumes"]}
    files: dict[str, str] = {}  # path in the container -> the ConfigMap's or Secret's key
    for mount in c["volumeMounts"]:
        volume = volumes[mount["name"]]
        source = volume.get("configMap") or volume.get("secret") or {}
        for item in source.get("items", []):
            files[f"{mount['mountPath']}/{item['path']}"] = item["key"]
    config_file = args["--config.file"]
    assert files[config_file] == "alertmanager.yml"
    directory = str(Path(config_file).parent)
    (pattern,) = alertmanager_config()["templates"]
    for template in templates():
        placed = [path for path, key in files.items() if key == template.name]
        assert len(placed) == 1, template
        assert fnmatch(placed[0], f"{directory}/{pattern}"), template
    secret_volumes = [v for v in pod["volumes"] if "secret" in v]
    assert {v["secret"]["secretName"] for v in secret_volumes} == {"alertmanager-secrets"}
    assert secret_files() <= set(files), sorted(secret_files() - set(files))
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert any(m["mountPath"] == args["--storage.path"] for m in c["volumeMounts"])
    named_ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert named_ports == {"http": 9093}
    assert c["livenessProbe"]["httpGet"]["path"] == "/-/healthy"
    assert c["readinessProbe"]["httpGet"]["path"] == "/-/ready"
    service = k8s_documents()["Service/alertmanager"]["spec"]
    labels = k8s_documents()["Deployment/alertmanager"]["spec"]["template"]["metadata"]["labels"]
    assert service["selector"].items() <= labels.items()
    assert [(p["port"], p["targetPort"]) for p in service["ports"]] == [(9093, "http")]


def test_compose_and_prometheus_send_alerts_to_alertmanager_with_secrets_from_files() -> None:
    services = compose()["services"]
    manager = services["alertmanager"]
    assert "alertmanager" in services["prometheus"]["depends_on"]
    prometheus = yaml.safe_load(PROMETHEUS_CONFIG.read_text(encoding="utf-8"))
    (alertmanagers,) = prometheus["alerting"]["alertmanagers"]
    (targets,) = [c["targets"] for c in alertmanagers["static_configs"]]
    assert targets == ["alertmanager:9093"]
    args = flags([a for a in manager["command"] if "=" in a])
    assert args["--cluster.listen-address"] == ""
    mounts = dict(v.split(":")[:2][::-1] for v in manager["volumes"])
    config_dir = str(Path(args["--config.file"]).parent)
    assert (DEPLOY / mounts[config_dir]).resolve() == ALERTMANAGER_CONFIG.parent
    assert {f"/run/secrets/{name}" for name in manager["secrets"]} == secret_files()
    assert set(manager["secrets"]) <= set(compose()["secrets"])
    (k8s_container,) = k8s_documents()["Deployment/alertmanager"]["spec"]["template"]["spec"][
        "containers"
    ]
    assert manager["image"] == k8s_container["image"]


# -- Dockerfile ----------------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    instructions = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            instructions.append((word.upper(), rest.strip()))
    return instructions


def dockerfile_env() -> dict[str, str]:
    env = {}
    for word, args in dockerfile():
        if word == "ENV":
            env.update(dict(re.findall(r"(\w+)=(\S+)", args)))
    return env


def stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's instructions, one list per stage (the ARGs before the first FROM
    are a stage of their own)."""
    result: list[list[tuple[str, str]]] = [[]]
    for word, args in dockerfile():
        if word == "FROM":
            result.append([])
        result[-1].append((word, args))
    return result


def mounted_sources(args: str) -> list[str]:
    """The build-context files a RUN binds (`--mount=type=bind,source=...` without from=)."""
    sources = []
    for mount in re.findall(r"--mount=(\S+)", args):
        options = dict(option.split("=", 1) for option in mount.split(","))
        if options.get("type") == "bind" and "from" not in options:
            sources.append(options["source"])
    return sources


def test_dockerfile_pins_its_base_image_by_tag_and_digest() -> None:
    preamble, *built = stages()
    (arg,) = [args for word, args in preamble if word == "ARG"]
    name, _, image = arg.partition("=")
    assert name == "PYTHON_IMAGE"
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm@sha256:[0-9a-f]{64}", image), image
    assert [stage[0] for stage in built] == [
        ("FROM", "${PYTHON_IMAGE} AS build"),
        ("FROM", "${PYTHON_IMAGE}"),
    ]
    assert not (DEPLOY / "Dockerfile").read_text(encoding="utf-8").startswith("# syntax=")


def test_dockerfile_builds_a_wheel_and_installs_it_with_the_runtime_lock() -> None:
    _, build, final = stages()
    build_runs = [args for word, args in build if word == "RUN"]
    assert "--require-hashes --no-deps -r requirements/build.lock" in build_runs[0]
    # The lock is installed before the sources are copied: its layer outlives code changes.
    (lock_run,) = [args for args in build_runs if "runtime.lock" in args]
    pip = "/opt/oracle/bin/pip install --require-hashes --no-deps"
    assert f"{pip} -r requirements/runtime.lock" in lock_run
    copies = [args for word, args in build if word == "COPY"]
    assert copies[0] == "requirements/build.lock requirements/runtime.lock ./requirements/"
    sources_copied = [a for w, a in build].index("pyproject.toml README.md ./")
    assert sources_copied > [a for w, a in build].index(lock_run)
    wheel_run = build_runs[-1]
    assert "pip wheel --no-deps --no-build-isolation" in wheel_run
    assert "/opt/oracle/bin/pip install --no-deps /wheels/oracle-" in wheel_run
    assert "pip check" in wheel_run  # the lock left nothing out
    # Inputs by COPY only: a bind mount's content is not in podman's layer cache key.
    assert not any("--mount" in args for word, args in build + final if word == "RUN")
    # The image gets the virtualenv and deploy/config.yaml, nothing else.
    assert [args for word, args in final if word == "COPY"] == [
        "--from=build /opt/oracle /opt/oracle",
        "deploy/config.yaml /etc/oracle/config.yaml",
    ]
    assert not any("rm -rf" in args for word, args in final if word == "RUN")


def test_dockerfile_builds_a_non_root_oracle_run_image() -> None:
    instructions = stages()[-1]
    words = [w for w, _ in instructions]
    user = [args for w, args in instructions if w == "USER"][-1]
    assert user.split(":")[0] not in ("root", "0")
    assert words.index("USER") > max(i for i, w in enumerate(words) if w == "RUN")
    # `oracle` with `run` as the default command: `docker run IMAGE review list` works.
    assert json.loads(dict(instructions)["ENTRYPOINT"]) == ["oracle"]
    assert json.loads(dict(instructions)["CMD"]) == ["run"]
    assert [args for w, args in instructions if w == "EXPOSE"] == [str(metrics_port())]
    env = dockerfile_env()
    assert env["ORACLE__METRICS__HOST"] == "0.0.0.0"
    assert int(env["ORACLE__METRICS__PORT"]) == metrics_port()
    assert env["PATH"].startswith("/opt/oracle/bin:")  # the virtualenv's oracle and python
    healthcheck = dict(instructions)["HEALTHCHECK"]
    assert "/healthz" in healthcheck
    assert "/healthz" in routes()


def test_the_health_check_holds_whichever_way_the_image_is_built() -> None:
    """An OCI image (podman's and buildah's default format) drops the HEALTHCHECK: every
    documented podman build asks for Docker's format, and compose states the same check."""
    healthcheck = dict(stages()[-1])["HEALTHCHECK"]
    options, _, command = healthcheck.partition(" CMD ")
    timings = dict(option.removeprefix("--").split("=") for option in options.split())
    service = compose()["services"]["oracle"]["healthcheck"]
    assert service["test"] == ["CMD", *json.loads(command)]
    assert {
        "interval": service["interval"],
        "timeout": service["timeout"],
        "start-period": service["start_period"],
        "retries": str(service["retries"]),
    } == timings
    texts = [DEPLOY / "README.md", DEPLOY / "Dockerfile", REPO / "README.md"]
    builds = [
        line
        for path in texts
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.match(r"[#\s]*(podman|buildah) (build|bud) ", line)
    ]
    assert builds, "the podman build is documented"
    for line in builds:
        assert "--format docker" in line, line


def test_dockerfile_copies_files_that_exist_and_the_build_context_sends() -> None:
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    # From the build context (a COPY --from=<stage> copies from a stage, not the context).
    copies = [
        args.split()
        for word, args in dockerfile()
        if word == "COPY" and not args.startswith("--from=")
    ]
    destinations = {}
    used = set()
    for *sources, destination in copies:
        for source in sources:
            assert (REPO / source).exists(), source
            assert source.rstrip("/") in allowed, f"{source} is excluded from the context"
            destinations[source] = destination
            used.add(source.rstrip("/"))
    for word, args in dockerfile():
        if word == "RUN":
            for source in mounted_sources(args):
                assert (REPO / source).is_file(), source
                assert source in allowed, f"{source} is excluded from the context"
                used.add(source)
    assert used == allowed  # the context sends nothing the build does not use
    assert dockerfile_env()["ORACLE_CONFIG"] == destinations["deploy/config.yaml"]
