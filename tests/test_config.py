"""Configuration: defaults, partial files, environment overrides, errors with key paths."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from oracle.config import SECTIONS, Settings, config_key, effective_config, load_settings
from oracle.config_sources import load_section
from oracle.core.params import ConsensusParams
from oracle.core.urls import redact_url
from oracle.errors import ConfigError
from oracle.venues.reality.settings import RealitySourceConfig
from oracle.venues.uma.settings import UmaSourceConfig, UmaV3SourceConfig

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no ./config.yaml unless a test writes one
    monkeypatch.delenv("ORACLE_CONFIG", raising=False)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "oracle.yaml"
    path.write_text(text)
    return path


def test_defaults_match_the_documented_keys() -> None:
    settings = load_settings()
    assert settings.consensus.model_dump() == {
        "min_agents": 3,
        "threshold": 0.67,
        "use_weighted_voting": True,
        "min_confidence": 0.5,
        "max_source_overlap": 0.8,
        "agent_timeout": 300.0,
        "min_model_families": 2,
        "strategy": "bft-weighted",
        "conflict_resolution": "escalate",
        "debate": {
            "max_rounds": 3,
            "stop_posterior": 0.8,
            "topology": "all-to-all",
            "sparsity": 0.5,
            "round_timeout": 300.0,
        },
    }
    assert settings.sources.model_dump() == {
        "min_total": 50,
        "min_categories": 5,
        "min_official": 5,
        "min_news": 15,
    }


def test_shipped_config_yaml_is_the_defaults() -> None:
    assert load_settings(ROOT / "config.yaml") == load_settings()


# Lists of entries (venues, agents): commented examples in config.yaml, empty by default.
EXAMPLES_ONLY = {"agents", "market_sources"}


def _keys(document: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Every key path of `document` ('daemon.schedule.grace') with its value; a mapping's
    own path too, so a nested section is named when it is missing as a whole."""
    keys: dict[str, Any] = {}
    for key, value in document.items():
        path = f"{prefix}{key}"
        keys[path] = value
        if isinstance(value, dict):
            keys.update(_keys(value, f"{path}."))
    return keys


def test_config_yaml_lists_every_setting_with_its_default() -> None:
    """The documented default configuration shows every key of every section, nested ones
    too (daemon.schedule.*), with its default value; lists of entries stay examples."""
    shipped = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    defaults = json.loads(
        json.dumps(
            Settings().model_dump(),
            default=lambda v: v.get_secret_value() if isinstance(v, SecretStr) else str(v),
        )
    )  # as written in YAML: secrets shown, paths as text
    for section in EXAMPLES_ONLY:
        assert defaults.pop(section) == []
        assert section not in shipped, f"{section}: commented examples only"
    # The old single-chain section: read when a file sets it, documented in a comment.
    assert defaults.pop("chain") is None
    assert "chain" not in shipped
    # One chain by default, written out in full: its keys are walked as a section's.
    assert len(defaults["chains"]) == len(shipped["chains"]) == 1
    defaults["chains"], shipped["chains"] = defaults["chains"][0], shipped["chains"][0]
    written = _keys(shipped)
    missing = [path for path in _keys(defaults) if path not in written]
    assert missing == [], f"config.yaml lacks {missing}"
    different = {
        path: (written[path], value)
        for path, value in _keys(defaults).items()
        if not isinstance(value, dict) and written[path] != value
    }
    assert different == {}, "config.yaml (shown, default)"
    unknown = [path for path in written if path not in _keys(defaults)]
    assert unknown == []


def test_partial_file_keeps_other_defaults(tmp_path: Path) -> None:
    settings = load_settings(_write(tmp_path, "consensus:\n  threshold: 0.8\n"))
    assert settings.consensus.threshold == 0.8
    assert settings.consensus.min_agents == 3
    assert settings.sources.min_total == 50


def test_environment_overrides_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORACLE__CONSENSUS__THRESHOLD", "0.75")
    monkeypatch.setenv("ORACLE__SOURCES__MIN_NEWS", "3")
    settings = load_settings(_write(tmp_path, "consensus:\n  threshold: 0.8\n  min_agents: 5\n"))
    assert settings.consensus.threshold == 0.75
    assert settings.consensus.min_agents == 5
    assert settings.sources.min_news == 3


def test_config_file_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORACLE_CONFIG", str(_write(tmp_path, "sources:\n  min_total: 7\n")))
    assert load_settings().sources.min_total == 7


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("consensus:\n  threshold: 0.4\n", "consensus.threshold: must be between 0.5 and 1"),
        ("consensus:\n  threshold: 1.5\n", "consensus.threshold: must be between 0.5 and 1"),
        ("consensus:\n  threshold: .nan\n", "consensus.threshold: must be a finite number"),
        (
            "consensus:\n  min_agents: 1\n",
            "consensus.min_agents: Input should be greater than or equal to 2",
        ),
        (
            "consensus:\n  min_confidence: 2\n",
            "consensus.min_confidence: Input should be less than or equal to 1",
        ),
        ("consensus:\n  treshold: 0.7\n", "consensus.treshold: unknown key"),
        ("consensus:\n  strategy: magic\n", "consensus.strategy: unknown strategy 'magic'"),
        ("sources:\n  min_total: many\n", "sources.min_total: Input should be a valid integer"),
        ("nonsense: 1\n", "nonsense: unknown key"),
        ("consensus: [1, 2]\n", "consensus: Input should be a valid dictionary"),
        ("- just\n- a list\n", "expected a mapping of sections"),
        ("consensus:\n  threshold: [\n", "not valid YAML at line"),
    ],
)
def test_invalid_values_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_settings(_write(tmp_path, text))
    assert message in str(error.value)


def test_invalid_environment_value_names_the_key_and_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ORACLE__CONSENSUS__THRESHOLD", "0.3")
    with pytest.raises(
        ConfigError,
        match=r"^consensus\.threshold \(ORACLE__CONSENSUS__THRESHOLD\): must be between 0\.5 and 1",
    ):
        load_settings()


def test_a_misspelt_environment_variable_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORACLE__CONSENUS__THRESHOLD", "0.9")
    with pytest.raises(ConfigError) as error:
        load_settings()
    assert str(error.value) == "consenus.threshold (ORACLE__CONSENUS__THRESHOLD): unknown key"


def test_keys_set_by_the_environment_name_their_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORACLE__DATABASE__URL", "sqlite:///x.db")
    monkeypatch.setenv("oracle__chain__rpc__chain_id", "5")  # names are not case-sensitive
    monkeypatch.setenv("ORACLE__CHAIN__RPC__URLS", '["http://127.0.0.1:8545"]')
    monkeypatch.setenv("ORACLE__CONSENSUS", '{"threshold": 0.8}')
    assert config_key("database.url") == "database.url (ORACLE__DATABASE__URL)"
    assert config_key("chain.rpc.chain_id") == "chain.rpc.chain_id (oracle__chain__rpc__chain_id)"
    assert config_key("chain.rpc.urls[0]") == "chain.rpc.urls[0] (ORACLE__CHAIN__RPC__URLS)"
    assert config_key("consensus.threshold") == "consensus.threshold (ORACLE__CONSENSUS)"
    assert config_key("consensus.min_agents") == "consensus.min_agents"  # not in that JSON
    assert config_key("metrics.port") == "metrics.port"


def test_a_duplicate_key_is_an_error_naming_it_and_its_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, "consensus:\n  threshold: 0.7\n  min_agents: 3\n  threshold: 0.9\n")
    with pytest.raises(ConfigError) as error:
        load_settings(path)
    assert str(error.value) == f"{path}: consensus.threshold is set twice (lines 2 and 4)"
    path = _write(tmp_path, "agents:\n  - name: a\n    kind: replay\n    name: b\n")
    with pytest.raises(ConfigError, match=r"agents\[0\]\.name is set twice \(lines 2 and 4\)"):
        load_settings(path)
    path = _write(tmp_path, "log: {level: INFO}\nlog: {format: text}\n")
    with pytest.raises(ConfigError, match=r": log is set twice \(lines 1 and 2\)"):
        load_settings(path)


def test_yaml_merge_keys_are_not_duplicates(tmp_path: Path) -> None:
    path = _write(tmp_path, "log:\n  <<: {level: DEBUG, format: text}\n  level: INFO\n")
    settings = load_settings(path)
    assert (settings.log.level, settings.log.format) == ("INFO", "text")


def test_one_chain_market_source_at_most(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "market_sources:\n  - {kind: chain, name: a}\n  - {kind: chain, name: b}\n",
    )
    with pytest.raises(ConfigError, match=r"^market_sources: at most one source of kind chain"):
        load_settings(path)


WINDOW_AGENTS = """
agents:
  - {name: recorded, kind: replay, directory: /tmp}
  - {name: nano, kind: llm, model: gpt-4.1-nano, api_key_env: KEY, search: [{kind: gdelt}]}
"""


def test_the_window_model_names_an_llm_agent(tmp_path: Path) -> None:
    settings = load_settings(_write(tmp_path, f"daemon:\n  window_model: nano\n{WINDOW_AGENTS}"))
    assert settings.daemon.window_model == "nano"
    assert load_settings().daemon.window_model is None


@pytest.mark.parametrize(
    ("name", "llm_agents", "reason"),
    [
        ("recorded", WINDOW_AGENTS, "'recorded' is not one (llm agents: nano)"),
        ("nobody", WINDOW_AGENTS, "'nobody' is not one (llm agents: nano)"),
        ("nano", "", "'nano' is not one (there are none)"),
    ],
)
def test_a_window_model_that_is_no_llm_agent_is_one_error_naming_the_key(
    tmp_path: Path, name: str, llm_agents: str, reason: str
) -> None:
    with pytest.raises(ConfigError) as error:
        load_settings(_write(tmp_path, f"daemon:\n  window_model: {name}\n{llm_agents}"))
    assert str(error.value) == (
        f"daemon.window_model: must name an llm agent of `agents`: {reason}"
    )


def test_a_window_model_from_the_environment_is_named_with_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ORACLE__DAEMON__WINDOW_MODEL", "nobody")
    with pytest.raises(
        ConfigError, match=r"^daemon\.window_model \(ORACLE__DAEMON__WINDOW_MODEL\):"
    ):
        load_settings()


def test_every_problem_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_settings(_write(tmp_path, "consensus:\n  threshold: 2\n  min_agents: 0\n"))
    assert str(error.value).count("\n") == 1


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no-such\.yaml: no such configuration file"):
        load_settings(tmp_path / "no-such.yaml")


def test_passwords_are_masked(tmp_path: Path) -> None:
    settings = load_settings(
        _write(tmp_path, "database:\n  url: postgresql+psycopg://oracle:hunter2@db:5432/oracle\n")
    )
    shown = effective_config(settings)
    assert shown["database"]["url"] == "postgresql+psycopg://***@db:5432/oracle"
    assert "hunter2" not in repr(shown)


def test_database_urls_are_shown_as_the_logs_show_them() -> None:
    assert redact_url("sqlite:///data/oracle.db") == "sqlite:///data/oracle.db"
    assert redact_url("sqlite:////var/lib/oracle/2024-01/oracle.db") == (
        "sqlite:////var/lib/oracle/2024-01/oracle.db"  # a file path, not a credential
    )
    assert redact_url("sqlite:///file:data/o.db?mode=ro&uri=true") == "sqlite:///file:data/o.db?***"
    assert redact_url("postgresql+psycopg://u:pw@db/oracle?sslmode=require") == (
        "postgresql+psycopg://***@db/oracle?***"
    )
    assert redact_url("postgresql+psycopg:///oracle?host=/run/postgresql") == (
        "postgresql+psycopg:///oracle?***"
    )


def test_a_venue_url_that_is_no_url_is_refused_without_echoing_it(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "market_sources:\n"
        "  - kind: http\n"
        "    name: venue\n"
        "    url: 'http://[::1/markets?apikey=venuekey77'\n"
        "    result_url: https://venue.example/results\n",
    )
    with pytest.raises(ConfigError) as error:
        load_settings(path)
    assert str(error.value) == (
        "market_sources[0].http.url: must be an http:// or https:// URL with a host"
    )


def test_the_light_loader_knows_every_section() -> None:
    assert set(Settings.model_fields) == SECTIONS


def test_one_section_is_validated_with_the_same_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, "consensus:\n  threshold: 0.8\n  min_agents: 5\nchain: {bogus: 1}\n")
    monkeypatch.setenv("ORACLE__CONSENSUS__THRESHOLD", "0.75")
    params = load_section(path, "consensus", ConsensusParams)
    assert (params.threshold, params.min_agents) == (0.75, 5)  # the broken chain is not read
    monkeypatch.setenv("ORACLE__CONSENSUS__THRESHOLD", "0.3")
    with pytest.raises(
        ConfigError, match=r"^consensus\.threshold \(ORACLE__CONSENSUS__THRESHOLD\)"
    ):
        load_section(path, "consensus", ConsensusParams)
    monkeypatch.setenv("ORACLE__CONSENUS__THRESHOLD", "0.9")
    with pytest.raises(ConfigError, match=r"^consenus\.threshold \(ORACLE__CONSENUS__THRESHOLD\)"):
        load_section(path, "consensus", ConsensusParams)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "ORACLE__CHAIN__RPC__URLS",
            '["http://a", ',
            "chain.rpc.urls (ORACLE__CHAIN__RPC__URLS): not valid JSON",
        ),
        ("ORACLE__CONSENSUS____THRESHOLD", "0.7", "ORACLE__CONSENSUS____THRESHOLD: an empty key"),
        (
            "ORACLE__DAEMON__REPLICA_ID",
            "[1]",
            "daemon.replica_id (ORACLE__DAEMON__REPLICA_ID): Input should be a valid string",
        ),
    ],
)
def test_malformed_environment_values_name_their_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, message: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as error:
        load_settings()
    assert str(error.value).startswith(message)
    assert "http://a" not in str(error.value)  # a value is never echoed: it may be a secret


def test_a_uma_market_source_is_validated_up_front(tmp_path: Path) -> None:
    oracle = "0x" + "ab" * 20
    settings = load_settings(
        _write(
            tmp_path,
            "market_sources:\n"
            f"  - {{kind: uma, oracle_address: '{oracle}',\n"
            "     risk: {max_bond_outstanding: 250.5, native_token_price: 0.2}}\n",
        )
    )
    (uma,) = settings.market_sources
    assert isinstance(uma, UmaSourceConfig)
    assert (uma.name, uma.identifiers, uma.settle, uma.allow_too_early, uma.dispute) == (
        "uma",
        ("YES_OR_NO_QUERY",),
        True,
        False,
        "never",
    )
    assert uma.risk.max_bond_outstanding == Decimal("250.5")
    assert uma.requesters is None
    disputing = load_settings(
        _write(
            tmp_path,
            f"market_sources:\n  - {{kind: uma, oracle_address: '{oracle}', "
            "dispute: after_review}\n",
        )
    ).market_sources[0]
    assert isinstance(disputing, UmaSourceConfig)
    assert disputing.dispute == "after_review"
    for text, message in (
        ("{kind: uma}", "market_sources[0].uma: set exactly one of oracle_address"),
        (
            "{kind: uma, oracle_address: '0x12'}",
            "market_sources[0].uma.oracle_address: must be a 0x-prefixed address",
        ),
        (
            f"{{kind: uma, oracle_address: '{oracle}', requesters: ['{oracle}', 'x']}}",
            "market_sources[0].uma.requesters: [1] must be a 0x-prefixed",
        ),
        (
            f"{{kind: uma, oracle_address: '{oracle}', identifiers: ['{'X' * 33}']}}",
            "market_sources[0].uma.identifiers: [0] must be 1 to 32",
        ),
        (
            f"{{kind: uma, oracle_address: '{oracle}', dispute: always}}",
            "market_sources[0].uma.dispute: Input should be 'never' or 'after_review'",
        ),
        (
            f"{{kind: uma, oracle_address: '{oracle}', dispute: true}}",
            "market_sources[0].uma.dispute: Input should be 'never' or 'after_review'",
        ),
        (
            f"{{kind: uma, oracle_address: '{oracle}', risk: {{max_bond_per_request: -1}}}}",
            "market_sources[0].uma.risk.max_bond_per_request: Input should be greater than 0",
        ),
    ):
        with pytest.raises(ConfigError) as error:
            load_settings(_write(tmp_path, f"market_sources:\n  - {text}\n"))
        assert message in str(error.value), str(error.value)


def test_a_uma_bulletin_board_is_validated_up_front(tmp_path: Path) -> None:
    oracle, board = "0x" + "ab" * 20, "0x" + "cd" * 20
    source = f"  - {{kind: uma, oracle_address: '{oracle}', bulletin_board: "
    settings = load_settings(
        _write(tmp_path, f"market_sources:\n{source}{{address: '{board}', max_updates: 3}}}}\n")
    )
    (uma,) = settings.market_sources
    assert isinstance(uma, UmaSourceConfig)
    assert uma.bulletin_board is not None
    assert (uma.bulletin_board.address, uma.bulletin_board.max_updates) == (board, 3)
    assert uma.bulletin_board.max_total_chars == 8000
    for text, message in (
        ("{}", "market_sources[0].uma.bulletin_board.address: is required"),
        (
            "{address: '0x12'}",
            "market_sources[0].uma.bulletin_board.address: must be a 0x-prefixed address",
        ),
        (
            f"{{address: '{board}', max_update_chars: 9000}}",
            "max_update_chars must not exceed max_total_chars",
        ),
        (
            f"{{address: '{board}', max_updates: 0}}",
            "market_sources[0].uma.bulletin_board.max_updates: Input should be greater than",
        ),
        (f"{{address: '{board}', owner: x}}", "bulletin_board.owner: unknown key"),
    ):
        with pytest.raises(ConfigError) as error:
            load_settings(_write(tmp_path, f"market_sources:\n{source}{text}}}\n"))
        assert message in str(error.value), str(error.value)


def test_a_reality_market_source_is_validated_up_front(tmp_path: Path) -> None:
    contract = "0x" + "cd" * 20
    settings = load_settings(
        _write(
            tmp_path,
            "market_sources:\n"
            f"  - {{kind: reality, contract_address: '{contract}',\n"
            "     bond: {initial_wei: 1000, defend: true, max_per_question_wei: 8000}}\n",
        )
    )
    (reality,) = settings.market_sources
    assert isinstance(reality, RealitySourceConfig)
    assert (reality.name, reality.templates, reality.claim, reality.allow_unresolved) == (
        "reality",
        (0, 2),
        True,
        False,
    )
    assert (reality.counter_answer, reality.arbitrators, reality.askers) == ("never", None, None)
    countering = load_settings(
        _write(
            tmp_path,
            f"market_sources:\n  - {{kind: reality, contract_address: '{contract}', "
            "bond: {initial_wei: 1}, counter_answer: after_review}\n",
        )
    ).market_sources[0]
    assert isinstance(countering, RealitySourceConfig)
    assert countering.counter_answer == "after_review"
    assert countering.commit_reveal is False  # answers are sent in the open by default
    assert (reality.bond.defend, reality.bond.max_total_wei, reality.bond.past_cap) == (
        True,
        None,
        "review",
    )
    good = f"kind: reality, contract_address: '{contract}'"
    for text, message in (
        (f"{{{good}}}", "market_sources[0].reality.bond: is required"),
        (
            "{kind: reality, contract_address: '0x12', bond: {initial_wei: 1}}",
            "market_sources[0].reality.contract_address: must be a 0x-prefixed address",
        ),
        (
            f"{{{good}, bond: {{initial_wei: 0}}}}",
            "market_sources[0].reality.bond.initial_wei: Input should be greater than 0",
        ),
        (
            f"{{{good}, bond: {{initial_wei: 1, defend: true}}}}",
            "defend: true needs max_per_question_wei",
        ),
        (
            f"{{{good}, bond: {{initial_wei: 10, max_total_wei: 5}}}}",
            "max_total_wei 5 is below initial_wei 10",
        ),
        (
            f"{{{good}, bond: {{initial_wei: 1}}, templates: [0, 5]}}",
            "template 5: only the built-in templates 0 to 4 can be answered",
        ),
        (
            f"{{{good}, bond: {{initial_wei: 1}}, templates: [0, 3, 3]}}",
            "a template id is named twice",
        ),
        (
            f"{{{good}, bond: {{initial_wei: 1}}, arbitrators: []}}",
            "market_sources[0].reality.arbitrators: name at least one address",
        ),
        (
            f"{{{good}, bond: {{initial_wei: 1}}, askers: ['{contract}', 'x']}}",
            "market_sources[0].reality.askers: [1] must be a 0x-prefixed",
        ),
        (
            f"{{{good}, bond: {{initial_wei: 1}}, commit_reveal: sometimes}}",
            "market_sources[0].reality.commit_reveal: Input should be a valid boolean",
        ),
        (
            f"{{{good}, bond: {{initial_wei: 1}}, counter_answer: at_once}}",
            "market_sources[0].reality.counter_answer: Input should be 'never' or 'after_review'",
        ),
    ):
        with pytest.raises(ConfigError) as error:
            load_settings(_write(tmp_path, f"market_sources:\n  - {text}\n"))
        assert message in str(error.value), str(error.value)


def test_a_uma_v3_market_source_is_validated_up_front(tmp_path: Path) -> None:
    oracle = "0x" + "ef" * 20
    settings = load_settings(
        _write(
            tmp_path,
            "market_sources:\n"
            f"  - kind: uma_v3\n"
            f"    oracle_address: '{oracle}'\n"
            "    markets:\n"
            "      - {id: launch, question: 'Did it launch?', resolve_after: "
            "'2026-06-01T00:00:00Z'}\n"
            f"    second_opinion: {{asserters: ['{oracle}']}}\n"
            "    bond: {amount: 10, liveness: 3600}\n"
            "    risk: {max_bond_outstanding: 250.5, max_bond_per_assertion: 20}\n",
        )
    )
    (v3,) = settings.market_sources
    assert isinstance(v3, UmaV3SourceConfig)
    assert (v3.name, v3.settle, v3.dispute, v3.start_block) == ("uma-v3", True, "never", None)
    (market,) = v3.markets
    assert (market.id, market.outcomes) == ("launch", ("YES", "NO"))
    assert market.resolve_after.timestamp() == 1_780_272_000
    assert v3.bond.amount == Decimal(10)
    assert v3.bond.currency is None
    assert v3.risk.max_bond_outstanding == Decimal("250.5")
    assert v3.second_opinion is not None
    assert v3.second_opinion.asserters == (oracle,)
    disputing = load_settings(
        _write(
            tmp_path,
            "market_sources:\n"
            f"  - {{kind: uma_v3, oracle_address: '{oracle}', dispute: after_review, "
            f"second_opinion: {{asserters: ['{oracle}']}}}}\n",
        )
    ).market_sources[0]
    assert isinstance(disputing, UmaV3SourceConfig)
    assert disputing.dispute == "after_review"
    good = f"kind: uma_v3, oracle_address: '{oracle}'"
    market = "{id: m, question: 'Q?', resolve_after: '2026-06-01T00:00:00Z'}"
    watch = f"second_opinion: {{asserters: ['{oracle}']}}"
    for text, message in (
        (
            f"{{kind: uma_v3, {watch}}}",
            "market_sources[0].uma_v3: set exactly one of oracle_address",
        ),
        (f"{{{good}}}", "nothing to do: name markets, a second_opinion, or both"),
        (
            f"{{kind: uma_v3, oracle_address: '0x12', {watch}}}",
            "market_sources[0].uma_v3.oracle_address: must be a 0x-prefixed address",
        ),
        (
            f"{{{good}, name: uma_v3, {watch}}}",
            "market_sources[0].uma_v3.name: String should match pattern",
        ),
        (f"{{{good}, second_opinion: {{}}}}", "name asserters, escalation_managers or claim"),
        (
            f"{{{good}, second_opinion: {{escalation_managers: ['{oracle}', 'x']}}}}",
            "second_opinion.escalation_managers: [1] must be a 0x-prefixed",
        ),
        (
            f"{{{good}, {watch}, bond: {{currency: '0x1'}}}}",
            "uma_v3.bond.currency: must be a 0x-prefixed address",
        ),
        (f"{{{good}, {watch}, bond: {{amount: 0}}}}", "bond.amount: Input should be greater"),
        (
            f"{{{good}, {watch}, bond: {{amount: 30}}, risk: {{max_bond_per_assertion: 20}}}}",
            "bond.amount 30 is above risk.max_bond_per_assertion 20",
        ),
        (
            f"{{{good}, markets: [{market}], dispute: after_review}}",
            "market_sources[0].uma_v3: dispute: after_review disputes others' assertions: it needs "
            "a second_opinion",
        ),
        (f"{{{good}, {watch}, dispute: sometimes}}", "uma_v3.dispute: Input should be 'never'"),
        (
            f"{{{good}, markets: [{{id: m, question: 'Q?', resolve_after: '2026-06-01'}}]}}",
            "uma_v3.markets[0].resolve_after: Input should have timezone info",
        ),
        (f"{{{good}, markets: [{market}, {market}]}}", "markets: [1].id: m is used twice"),
        (
            f"{{{good}, markets: [{{id: 'A b', question: 'Q?', "
            "resolve_after: '2026-06-01T00:00:00Z'}]}",
            "uma_v3.markets[0].id: String should match pattern",
        ),
        (
            f"{{{good}, markets: [{{id: m, question: 'Q?', outcomes: ['YES'], "
            "resolve_after: '2026-06-01T00:00:00Z'}]}",
            "name at least two outcomes",
        ),
    ):
        with pytest.raises(ConfigError) as error:
            load_settings(_write(tmp_path, f"market_sources:\n  - {text}\n"))
        assert message in str(error.value), str(error.value)


def test_a_reality_source_names_its_contract_version_bond_token_and_claim_batch(
    tmp_path: Path,
) -> None:
    contract, token = "0x" + "cd" * 20, "0x" + "ab" * 20
    head = f"market_sources:\n  - {{kind: reality, contract_address: '{contract}', "
    default = load_settings(_write(tmp_path, head + "bond: {initial_wei: 1}}\n")).market_sources[0]
    assert isinstance(default, RealitySourceConfig)
    assert (default.contract, default.bond_token, default.claim_batch) == ("v3", None, 1)
    erc20 = load_settings(
        _write(
            tmp_path, head + f"bond: {{initial_wei: 1}}, bond_token: '{token}', claim_batch: 8}}\n"
        )
    ).market_sources[0]
    assert isinstance(erc20, RealitySourceConfig)
    assert (erc20.contract, erc20.bond_token, erc20.claim_batch) == ("v3", token, 8)
    omen = load_settings(
        _write(tmp_path, head + "bond: {initial_wei: 1}, contract: v2.1}\n")
    ).market_sources[0]
    assert isinstance(omen, RealitySourceConfig)
    assert omen.contract == "v2.1"
    for text, message in (
        (f"contract: v2.1, bond_token: '{token}'", "ERC-20 bonds are answered on contract v3 only"),
        ("contract: v4", "market_sources[0].reality.contract: Input should be 'v3' or 'v2.1'"),
        ("bond_token: '0x12'", "market_sources[0].reality.bond_token: must be a 0x-prefixed"),
        ("claim_batch: 0", "market_sources[0].reality.claim_batch: Input should be greater"),
        ("claim_batch: 65", "market_sources[0].reality.claim_batch: Input should be less"),
    ):
        with pytest.raises(ConfigError) as error:
            load_settings(_write(tmp_path, head + f"bond: {{initial_wei: 1}}, {text}}}\n"))
        assert message in str(error.value), str(error.value)
