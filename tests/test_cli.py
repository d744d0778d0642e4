"""The command line through its real entry point, as an operator runs it."""

from __future__ import annotations

import gc
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from alembic.script import ScriptDirectory
from click.testing import CliRunner

import oracle.core as core_package
from oracle import safe_json
from oracle.cli import cli as command_tree
from oracle.cli import main as entry_point
from oracle.cli.consensus import run_consensus
from oracle.console.evidence import review_summary
from oracle.core import (
    ConsensusParams,
    SourceThresholds,
    build_proof,
    evaluate,
    parse_consensus_input,
)
from oracle.core.lifecycle import MarketEvent
from oracle.core.markets import MarketSpec
from oracle.devchain import free_port
from oracle.errors import InputError
from oracle.store.database import open_database
from oracle.store.engine import make_engine
from oracle.store.migrate import MIGRATIONS, head_revision, upgrade
from oracle.store.repository import Store
from oracle.store.tables import MarketRow, ReviewItemRow
from oracle.testing import consensus_document, result_dict

from .commands import one_error_line, run_oracle


def oracle(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oracle", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def _document() -> dict[str, Any]:
    return consensus_document(
        [
            result_dict("a", "YES", 0.9),
            result_dict("b", "YES", 0.8),
            result_dict("c", "NO", 0.7),
            result_dict("thin", "NO", 0.9, 10),
        ]
    )


@pytest.fixture
def input_file(tmp_path: Path) -> Path:
    path = tmp_path / "input.json"
    path.write_text(json.dumps(_document()))
    return path


def test_consensus_json_output(input_file: Path) -> None:
    run = oracle("consensus", str(input_file))
    assert run.returncode == 0, run.stderr
    output = json.loads(run.stdout)
    for key in (
        "reached",
        "outcome",
        "confidence",
        "agreement_ratio",
        "weighted_ratio",
        "required_agreement",
        "fault_tolerance",
        "requires_human_review",
        "review_reasons",
        "excluded",
        "overlap",
        "sources",
        "proof",
    ):
        assert key in output
    assert output["outcome"] == "YES"
    assert output["required_agreement"] == pytest.approx(2 / 3)
    assert output["excluded"] == [
        {
            "agent_id": "thin",
            "reasons": [
                "only 10 distinct sources, need 50",
                "only 1 official sources, need 5",
                "only 4 news sources, need 15",
            ],
        }
    ]
    assert set(output["overlap"]) >= {"average", "max", "pairs", "total_unique_sources"}
    assert output["sources"][0]["cited_by"] == ["a"] or output["sources"][0]["cited_by"]
    assert len(output["proof"]["checksum"]) == 64


def test_consensus_markdown_and_proof_files(input_file: Path, tmp_path: Path) -> None:
    proof_path = tmp_path / "out" / "proof.json"
    proof_path.parent.mkdir()
    run = oracle("consensus", str(input_file), "--format", "markdown", "--proof", str(proof_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# Consensus proof")
    assert proof_path.with_suffix(".md").read_text() == run.stdout
    verified = oracle("proof", "verify", str(proof_path))
    assert verified.returncode == 0
    assert verified.stdout.startswith("ok: checksum ")


def test_proof_verify_detects_alteration(input_file: Path, tmp_path: Path) -> None:
    proof_path = tmp_path / "proof.json"
    assert oracle("consensus", str(input_file), "--proof", str(proof_path)).returncode == 0
    proof = json.loads(proof_path.read_text())
    proof["verdict"]["outcome"] = "NO"
    proof_path.write_text(json.dumps(proof))
    run = oracle("proof", "verify", str(proof_path))
    assert run.returncode == 1
    assert "ALTERED" in run.stderr


def test_stdin_and_config_file(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("consensus:\n  threshold: 0.8\n")
    run = oracle("consensus", "-", "--config", str(config), stdin=json.dumps(_document()))
    assert run.returncode == 0, run.stderr
    output = json.loads(run.stdout)
    assert output["reached"] is False
    assert output["required_agreement"] == 0.8


def _mutated(mutate: Any) -> str:
    document = _document()
    mutate(document)
    return json.dumps(document)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            _mutated(lambda d: d["results"][1].update(outcome="MAYBE")),
            "results[1].outcome: unknown outcome 'MAYBE'; expected one of YES, NO, UNDETERMINED",
        ),
        (
            _mutated(lambda d: d["results"][0].update(confidence=1.5)),
            "results[0].confidence: Input should be less than or equal to 1",
        ),
        (
            _mutated(lambda d: d["results"][0].update(confidence=-0.1)),
            "results[0].confidence: Input should be greater than or equal to 0",
        ),
        (
            _mutated(lambda d: d["results"][2].update(confidence=float("nan"))),
            "results[2].confidence: must be a finite number (not NaN or infinity)",
        ),
        (
            _mutated(lambda d: d["results"][3].update(agent_id="a")),
            "results[3].agent_id: duplicate agent id 'a'",
        ),
        (
            _mutated(lambda d: d["failures"].append({"agent_id": "b", "error": "x"})),
            "failures[0].agent_id: duplicate agent id 'b'",
        ),
        (
            _mutated(lambda d: d["results"][0].pop("confidence")),
            "results[0].confidence: is required",
        ),
        (_mutated(lambda d: d.pop("market")), "market: is required"),
        (
            _mutated(lambda d: d["results"][0]["sources"][4].update(url="not a url")),
            "results[0].sources[4].url: not an absolute http(s) URL",
        ),
        (
            _mutated(lambda d: d["results"][0]["sources"][4].pop("credibility_score")),
            "results[0].sources[4].credibility_score: is required",
        ),
        ("{not json", "not usable JSON (line 1, column 2"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    run = oracle("consensus", str(path))
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(f"error: {path}: "), lines[0]  # the file is named
    assert message in lines[0]
    assert "Traceback" not in run.stderr


def test_missing_input_file() -> None:
    run = oracle("consensus", "/nonexistent/input.json")
    assert run.returncode == 2
    assert run.stderr.strip() == "error: /nonexistent/input.json: no such file"


def _proof(mutate: Any) -> str:
    consensus_input = parse_consensus_input(_document())
    result = evaluate(consensus_input, ConsensusParams(), SourceThresholds())
    document = build_proof(consensus_input, result, ConsensusParams(), SourceThresholds())
    mutate(document)
    return json.dumps(document)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1}', "not a proof: no `checksum` field"),
        ("[1, 2]", "not a proof: expected a JSON object"),
        (_proof(lambda d: d.update(checksum=5)), "not a proof: `checksum` must be a string"),
        (_proof(lambda d: d.pop("proof_id")), "not a proof: no `proof_id` field"),
        (_proof(lambda d: d.update(proof_id=["x"])), "not a proof: `proof_id` must be a string"),
        (_proof(lambda d: d.pop("market")), "not a proof: no `market` field"),
        (_proof(lambda d: d.update(market="m")), "not a proof: `market` must be an object"),
        (_proof(lambda d: d.pop("version")), "not a proof: no `version` field"),
        (
            _proof(lambda d: d.update(version=99)),
            "proof version 99 is not supported (this oracle reads versions 1 and 2)",
        ),
        (
            _proof(lambda d: d["verdict"].update(confidence=float("nan"))),
            "not a proof: not representable in RFC 8785 JSON: "
            "$.verdict.confidence: nan is not a JSON number (no NaN or infinity)",
        ),
    ],
)
def test_proof_verify_names_the_file_in_every_error(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    assert one_error_line(run_oracle("proof", "verify", str(path))) == f"{path}: {message}"


def test_proof_verify_names_an_altered_file(input_file: Path, tmp_path: Path) -> None:
    proof_path = tmp_path / "proof.json"
    assert oracle("consensus", str(input_file), "--proof", str(proof_path)).returncode == 0
    proof = json.loads(proof_path.read_text())
    proof["verdict"]["outcome"] = "NO"
    proof_path.write_text(json.dumps(proof))
    run = oracle("proof", "verify", str(proof_path))
    assert run.returncode == 1
    assert run.stderr.startswith(f"ALTERED: {proof_path}: the content's checksum is ")


def test_consensus_proof_that_cannot_be_written(input_file: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    target = tmp_path / "file" / "proof.json"
    line = one_error_line(run_oracle("consensus", str(input_file), "--proof", str(target)))
    assert line == f"--proof: {target}: cannot be written (Not a directory)"


def test_config_check_masks_credentials_in_every_url(tmp_path: Path) -> None:
    key = "0123456789abcdef0123456789abcdef"
    config = tmp_path / "c.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "database": {"url": "postgresql://u:topsecret@h:5432/db"},
                "market_sources": [
                    {
                        "kind": "http",
                        "name": "venue",
                        "url": "https://venue.example/markets?apikey=venuekey77",
                        "result_url": "https://bob:resultpw@venue.example:8443/results",
                    }
                ],
                "chain": {
                    "rpc": {"urls": [f"https://eth.example:8545/v3/{key}", "http://127.0.0.1:8545"]}
                },
            }
        )
    )
    run = oracle("config", "check", "--config", str(config))
    assert run.returncode == 0, run.stderr
    for secret in ("topsecret", "venuekey77", "bob", "resultpw", key):
        assert secret not in run.stdout
    shown = yaml.safe_load(run.stdout)
    assert shown["database"]["url"] == "postgresql://***@h:5432/db"
    assert shown["market_sources"][0]["url"] == "https://venue.example/markets?***"
    assert shown["market_sources"][0]["result_url"] == "https://***@venue.example:8443/results"
    assert shown["chain"]["rpc"]["urls"] == [
        "https://eth.example:8545/v3/***",
        "http://127.0.0.1:8545",
    ]


def test_config_check_warns_when_the_daemon_would_have_nothing_to_do(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    agent = {"name": "a", "kind": "replay", "directory": str(tmp_path)}
    source = {
        "kind": "http",
        "name": "v",
        "url": "https://v.example/m",
        "result_url": "https://v.example/r",
    }
    cases = {
        "agents": ({"market_sources": [source]}, "no agent to research markets with"),
        "market_sources": ({"agents": [agent]}, "no market source to find markets in"),
    }
    for missing, (document, why) in cases.items():
        config.write_text(yaml.safe_dump(document))
        run = oracle("config", "check", "--config", str(config))
        assert run.returncode == 0, run.stderr
        assert yaml.safe_load(run.stdout)[missing] == []  # the configuration is still shown
        assert run.stderr.splitlines()[0] == (
            f"warning: {missing}: none configured: the daemon would have nothing to do ({why}; "
            "see config.yaml); `oracle run` refuses to start"
        )
    config.write_text(yaml.safe_dump({"agents": [agent], "market_sources": [source]}))
    run = oracle("config", "check", "--config", str(config))
    assert (run.returncode, "none configured" in run.stderr) == (0, False)


def test_config_check_rejects_a_duplicate_key(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("consensus:\n  threshold: 0.7\n  min_agents: 3\n  threshold: 0.9\n")
    line = one_error_line(run_oracle("config", "check", "--config", str(config)))
    assert line == f"{config}: consensus.threshold is set twice (lines 2 and 4)"


# -- commands that read the database never create or migrate one ---------------------------


READERS = (
    ("review", "list"),
    ("review", "list", "--all"),
    ("review", "show", "1"),
    ("review", "decide", "1", "--outcome", "YES", "--reason", "checked"),
)


@pytest.mark.parametrize("args", READERS)
def test_review_commands_never_create_a_database(tmp_path: Path, args: tuple[str, ...]) -> None:
    line = one_error_line(run_oracle(*args, cwd=tmp_path))
    assert line == (
        f"database.url: sqlite:///data/oracle.db: no database at {tmp_path / 'data' / 'oracle.db'} "
        "(run `oracle db upgrade` to create it)"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", READERS)
def test_review_commands_never_migrate_a_database(tmp_path: Path, args: tuple[str, ...]) -> None:
    path = tmp_path / "oracle.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE unrelated (x)")
    before = path.read_bytes()
    env = {"ORACLE__DATABASE__URL": f"sqlite:///{path}"}
    line = one_error_line(run_oracle(*args, cwd=tmp_path, env=env))
    assert line == (
        f"database.url (ORACLE__DATABASE__URL): sqlite:///{path}: no oracle schema in it "
        "(run `oracle db upgrade`)"
    )
    assert path.read_bytes() == before


def test_review_commands_work_on_an_upgraded_database(tmp_path: Path) -> None:
    assert run_oracle("db", "upgrade", cwd=tmp_path).returncode == 0
    run = run_oracle("review", "list", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "no open review items\n"


def test_db_upgrade_names_an_unreachable_server(tmp_path: Path) -> None:
    port = free_port()
    env = {"ORACLE__DATABASE__URL": f"postgresql://oracle:hunter2@127.0.0.1:{port}/oracle"}
    run = run_oracle("db", "upgrade", cwd=tmp_path, env=env)
    line = one_error_line(run)
    assert line.startswith(
        f"database.url (ORACLE__DATABASE__URL): postgresql://***@127.0.0.1:{port}/oracle: "
        "cannot connect ("
    ), line
    assert "refused" in line
    assert "hunter2" not in run.stderr


def test_keys_new_into_an_impossible_path(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    keystore = tmp_path / "file" / "key.json"
    run = run_oracle(
        "keys", "new", "--keystore", str(keystore), "--password-env", "PW", env={"PW": "pw"}
    )
    assert one_error_line(run) == f"{keystore}: cannot be written (Not a directory)"


def test_config_check_reports_bad_value(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("consensus:\n  threshold: 0.3\n")
    run = oracle("config", "check", "--config", str(config))
    assert run.returncode == 2
    assert run.stderr.startswith("error: consensus.threshold: must be between 0.5 and 1")


def test_config_check_names_the_variable_of_a_bad_environment_value(tmp_path: Path) -> None:
    run = run_oracle("config", "check", cwd=tmp_path, env={"ORACLE__CONSENSUS__THRESHOLD": "2"})
    assert one_error_line(run) == (
        "consensus.threshold (ORACLE__CONSENSUS__THRESHOLD): must be between 0.5 and 1 "
        "(above one half, so two outcomes can never both pass)"
    )


def test_review_decide_into_a_database_that_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "oracle.db"
    store = Store(open_database(f"sqlite:///{path}", create=True))
    spec = MarketSpec(source="s", external_id="1", question="Did it happen?", resolve_after=0.0)
    store.add_discovered([spec], "test")
    for event in ("due", "research_started", "research_finished", "consensus_review"):
        store.apply_event(spec.market_id, MarketEvent(event), actor="test")
    review_id = store.open_review(spec.market_id, None, ["contested"])
    store.add_user("rita", "reviewer", "correct horse battery")
    token = store.create_token("rita")
    store.engine.dispose()
    env = {
        "ORACLE__DATABASE__URL": f"sqlite:///file:{path}?mode=ro&uri=true",
        "ORACLE_CONSOLE_TOKEN": token,
    }
    decide = ("review", "decide", str(review_id), "--outcome", "YES", "--reason", "checked")
    line = one_error_line(run_oracle(*decide, cwd=tmp_path, env=env))
    assert line == (
        f"database.url (ORACLE__DATABASE__URL): sqlite:///file:{path}?***: "
        "attempt to write a readonly database"
    )


def command_paths(
    command: click.Command, path: tuple[str, ...] = ()
) -> dict[tuple[str, ...], click.Command]:
    """Every command and subcommand of the tree under `command`, by the words naming it."""
    paths = {path: command}
    if isinstance(command, click.Group):
        for name, subcommand in sorted(command.commands.items()):
            paths |= command_paths(subcommand, (*path, name))
    return paths


def test_every_command_reports_an_unknown_option_in_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the entry point, in this process (a process per command would take long):
    the usage error of every command, nested ones included, is one line and exit 2."""
    paths = command_paths(command_tree)
    assert ("console", "user", "add") in paths  # nested twice
    assert ("proof", "verify") in paths
    for path in paths:
        monkeypatch.setattr(sys, "argv", ["oracle", *path, "--xyzzy"])
        with pytest.raises(SystemExit) as exit_request:
            entry_point()
        captured = capsys.readouterr()
        assert exit_request.value.code == 2, (path, captured.err)
        assert captured.err.splitlines() == [
            f"error: {' '.join(('oracle', *path))}: no such option '--xyzzy'"
        ], captured.err
        assert captured.out == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("review", "show"), "oracle review show: missing argument 'REVIEW_ID'"),
        (
            ("consensus", "-", "--format", "html"),
            "oracle consensus: invalid value for '--format': 'html' is not one of 'json', "
            "'markdown'",
        ),
        (("accuracy", "--since"), "oracle accuracy: option '--since' requires an argument"),
        (
            ("accuracy", "record", "m", "--outcome"),
            "oracle accuracy record: option '--outcome' requires an argument",
        ),
        (
            ("review", "list", "--json=yes"),
            "oracle review list: option '--json' does not take a value",
        ),
        (("review", "undo"), "oracle review: no such command 'undo'"),
        (("proof", "verify", "a", "b"), "oracle proof verify: got unexpected extra argument (b)"),
    ],
)
def test_usage_errors_are_one_line_naming_the_command_and_the_problem(
    args: tuple[str, ...], message: str
) -> None:
    assert one_error_line(run_oracle(*args)) == message


def test_a_group_run_bare_still_shows_its_help() -> None:
    run = run_oracle("review")
    assert run.returncode == 2
    assert run.stderr.startswith("Usage: oracle review [OPTIONS] COMMAND [ARGS]...")
    assert "decide" in run.stderr
    assert "error:" not in run.stderr


def test_every_command_takes_config() -> None:
    lacking = [
        " ".join(path)
        for path, command in command_paths(command_tree).items()
        if not isinstance(command, click.Group)
        and "--config" not in {opt for param in command.params for opt in param.opts}
    ]
    assert lacking == []


def test_proof_verify_accepts_config_and_reads_none(input_file: Path, tmp_path: Path) -> None:
    proof_path = tmp_path / "proof.json"
    assert oracle("consensus", str(input_file), "--proof", str(proof_path)).returncode == 0
    run = oracle("proof", "verify", "--config", str(tmp_path / "absent.yaml"), str(proof_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok: checksum ")


REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    REPO / "README.md",
    REPO / "deploy" / "README.md",
    *sorted((REPO / "docs").rglob("*.md")),
]
# `oracle review list ...` quoted inline, or a line of a code block.
_QUOTED_COMMAND = re.compile(r"`oracle ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)")
_CODE_COMMAND = re.compile(r"^\s*oracle ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)")


def unknown_command(words: list[str]) -> str | None:
    """The first of `words` (after `oracle`) that names no subcommand where one is due."""
    command: click.Command = command_tree
    for word in words:
        if not isinstance(command, click.Group):
            return None  # a command's arguments follow
        if word not in command.commands:
            return word
        command = command.commands[word]
    return None


def test_the_documents_name_only_commands_that_exist() -> None:
    wrong = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        quoted = [m.group(1) for m in _QUOTED_COMMAND.finditer(text)]
        in_code = [
            m.group(1)
            for block in text.split("```")[1::2]
            for line in block.splitlines()
            if (m := _CODE_COMMAND.match(line))
        ]
        wrong += [
            f"{document.relative_to(REPO)}: oracle {words}"
            for words in quoted + in_code
            if unknown_command(words.split())
        ]
    # deploy/README.md lists commands as they follow the image's name, without `oracle`.
    image = (REPO / "deploy" / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"replaces `run` \(([^)]*)\)", image)
    assert listed, "deploy/README.md: the commands after the image's name are not listed"
    wrong += [
        f"deploy/README.md: {words}"
        for words in re.findall(r"`([^`]+)`", listed.group(1))
        if unknown_command(words.split())
    ]
    assert wrong == []


def test_db_upgrade_says_whether_it_created_migrated_or_left_the_schema(tmp_path: Path) -> None:
    head = head_revision()
    previous = ScriptDirectory(str(MIGRATIONS)).get_revision(head).down_revision
    assert isinstance(previous, str)

    def db_upgrade(url: str) -> str:
        run = run_oracle("db", "upgrade", cwd=tmp_path, env={"ORACLE__DATABASE__URL": url})
        assert run.returncode == 0, run.stderr
        return run.stdout

    new = f"sqlite:///{tmp_path / 'new.db'}"
    assert db_upgrade(new) == f"database at {new}: schema created (revision {head})\n"
    assert db_upgrade(new) == f"database at {new} is up to date (revision {head})\n"
    older = f"sqlite:///{tmp_path / 'older.db'}"
    engine = make_engine(older, set_wal=False)
    upgrade(engine, previous)
    engine.dispose()
    assert db_upgrade(older) == (
        f"database at {older}: migrated from revision {previous} to {head}\n"
    )


def test_review_list_json_is_the_shape_its_help_describes(tmp_path: Path) -> None:
    assert run_oracle("db", "upgrade", cwd=tmp_path).returncode == 0
    run = run_oracle("review", "list", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"reviews": []}
    described = " ".join(run_oracle("review", "list", "--help").stdout.split())
    assert '--json Print one JSON object, {"reviews": [ITEM, ...]}' in described
    fields = re.search(r"each ITEM has the item's ([^.]*) among others", described)
    assert fields, described
    named = set(re.split(r",? and |, ", fields.group(1).removesuffix(",")))
    named = {name.removesuffix(" (null until decided)") for name in named}
    # What `review list --json` prints for each item (oracle/cli/review.py).
    item = review_summary(
        ReviewItemRow(id=1, market_id="m", reasons=["low confidence"], created_at=0.0),
        MarketRow(
            id="m",
            source="venue",
            external_id="m",
            question="Q?",
            outcomes=["YES", "NO"],
            resolve_after=0.0,
            state="review",
            state_changed_at=0.0,
        ),
        now=60.0,
    )
    assert named <= set(item), sorted(named - set(item))
    assert item["decision"] is None


def test_consensus_shows_no_float_noise_and_leaves_the_proof_as_built(tmp_path: Path) -> None:
    # Weights such as 0.8999999999999998 and a confidence of 0.7533333333333334 before.
    document = consensus_document(
        [
            result_dict("a", "YES", 0.9),
            result_dict("b", "YES", 0.8),
            result_dict("c", "YES", 0.56),
            result_dict("d", "NO", 0.7),
        ]
    )
    proof_path = tmp_path / "proof.json"
    run = oracle("consensus", "-", "--proof", str(proof_path), stdin=json.dumps(document))
    assert run.returncode == 0, run.stderr
    output = json.loads(run.stdout)
    proof = output.pop("proof")
    noisy = re.findall(r"\d\.\d{7,}", json.dumps(output))
    assert noisy == []
    assert output["confidence"] == pytest.approx(0.753333, abs=1e-9)
    assert proof == json.loads(proof_path.read_text())
    assert oracle("proof", "verify", str(proof_path)).returncode == 0
    markdown = oracle("consensus", "-", "--format", "markdown", stdin=json.dumps(document))
    assert re.findall(r"\d\.\d{7,}", markdown.stdout) == []
    assert proof["checksum"] in markdown.stdout


def test_consensus_pauses_the_garbage_collector_only_while_it_computes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []

    def watching(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(core_package, "evaluate", watching)
    document = consensus_document([result_dict(f"agent-{i}", "YES", 0.8) for i in range(3)])
    params, thresholds = ConsensusParams(), SourceThresholds()
    result, proof = run_consensus(document, params, thresholds)
    assert (seen, gc.isenabled(), result.outcome) == ([False], True, "YES")
    parsed = parse_consensus_input(document)
    expected = build_proof(parsed, evaluate(parsed, params, thresholds), params, thresholds)
    assert proof == expected
    with pytest.raises(InputError):
        run_consensus({"market": {}}, params, thresholds)
    assert gc.isenabled()
    gc.disable()
    try:
        run_consensus(document, params, thresholds)
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()


def test_the_consensus_command_decodes_its_input_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Decoding a large input builds as many objects as its verdict does."""
    seen: list[bool] = []
    decode = safe_json.loads

    def watching(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return decode(*args, **kwargs)

    monkeypatch.setattr(safe_json, "loads", watching)
    document = tmp_path / "input.json"
    document.write_text(
        json.dumps(consensus_document([result_dict(f"agent-{i}", "YES", 0.8) for i in range(3)]))
    )
    outcome = CliRunner().invoke(command_tree, ["consensus", str(document)])
    assert (outcome.exit_code, seen, gc.isenabled()) == (0, [False], True), outcome.output


def test_consensus_moves_what_it_built_to_the_oldest_generation_unscanned() -> None:
    """Re-enabling the collector after thousands of new objects would start a young
    collection at the next allocation, scanning every one; they are promoted instead."""
    document = consensus_document([result_dict(f"agent-{i}", "YES", 0.8) for i in range(3)])
    collections: list[int] = []

    def started(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(started)
    try:
        _, proof = run_consensus(document, ConsensusParams(), SourceThresholds())
        oldest = any(item is proof for item in gc.get_objects(generation=2))
    finally:
        gc.callbacks.remove(started)
    assert (collections, oldest) == ([], True)
