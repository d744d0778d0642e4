"""`chains:`: several named chains; the old single `chain:` section; sources naming theirs."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from oracle.config import effective_config, legacy_chain_warning, load_settings
from oracle.core.amounts import Token
from oracle.errors import ConfigError

from .commands import one_error_line, oracle_in_process, run_oracle

UMA = "0x" + "11" * 20
REALITY = "0x" + "22" * 20
OTHER_UMA = "0x" + "33" * 20
OTHER_REALITY = "0x" + "44" * 20
NO_POLYGON = r"no chain named 'polygon' \(configured: gnosis, local\)"
BOND = "bond: {initial_wei: 1}"  # reality's required bond policy
HTTP = "{kind: http, name: h, url: 'http://x.example/m', result_url: 'http://x.example/r'}"
WATCH = f"second_opinion: {{asserters: ['{UMA}']}}"

TWO_CHAINS = """\
chains:
  - name: gnosis
    chain_id: 100
    rpc: {urls: ["https://user:secret@rpc.gnosis.example/v1/KEY123"]}
    signer: {type: dev_private_key, dev_private_key: "0x%s"}
  - name: local
    rpc: {urls: ["http://127.0.0.1:8545"], chain_id: 31337}
    deployment_file: data/local.json
    signer: {keystore: data/missing-keystore.json}
""" % ("ab" * 32)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ORACLE_CONFIG", raising=False)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "oracle.yaml"
    path.write_text(text)
    return path


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as error:
        load_settings(_write(tmp_path, text))
    return str(error.value)


def test_by_default_one_chain_named_default_that_every_source_is_on(tmp_path: Path) -> None:
    path = _write(tmp_path, f"market_sources:\n  - {{kind: uma, oracle_address: '{UMA}'}}\n")
    settings = load_settings(path)
    assert [c.name for c in settings.chains] == ["default"]
    assert settings.chain is None
    assert legacy_chain_warning(settings) is None
    assert settings.chain_name(settings.market_sources[0]) == "default"  # type: ignore[arg-type]
    assert settings.chain_settings().name == "default"


def test_several_chains_each_source_naming_its_own(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        TWO_CHAINS
        + "market_sources:\n"
        + "  - {kind: chain, chain: local}\n"
        + f"  - {{kind: uma, name: uma-a, chain: gnosis, oracle_address: '{UMA}'}}\n"
        + f"  - {{kind: uma, name: uma-b, chain: gnosis, oracle_address: '{OTHER_UMA}'}}\n"
        + f"  - {{kind: reality, name: r-a, chain: gnosis, {BOND},\n"
        + f"      contract_address: '{REALITY}'}}\n"
        + f"  - {{kind: reality, name: r-b, chain: gnosis, {BOND},\n"
        + f"      contract_address: '{OTHER_REALITY}'}}\n",
    )
    settings = load_settings(path)
    gnosis, local = settings.chains
    # chain_id is rpc.chain_id's short form, in both directions.
    assert (gnosis.chain_id, gnosis.rpc.chain_id) == (100, 100)
    assert (local.chain_id, local.rpc.chain_id) == (31337, 31337)
    assert local.deployment_file == "data/local.json"
    on = {s.name: settings.chain_name(s) for s in settings.market_sources}  # type: ignore[arg-type]
    assert on == {
        "chain": "local",
        "uma-a": "gnosis",
        "uma-b": "gnosis",
        "r-a": "gnosis",
        "r-b": "gnosis",
    }
    assert settings.chain_settings("gnosis") is gnosis
    with pytest.raises(ConfigError, match=r"^chains: several are configured \(gnosis, local\)"):
        settings.chain_settings()
    with pytest.raises(ConfigError, match=NO_POLYGON):
        settings.chain_settings("polygon")


def test_the_effective_config_masks_every_chains_urls_and_names_each_sources_chain(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path,
        TWO_CHAINS
        + "market_sources:\n"
        + f"  - {{kind: uma, chain: gnosis, oracle_address: '{UMA}'}}\n",
    )
    shown = effective_config(load_settings(path))
    text = yaml.safe_dump(shown)
    assert "secret" not in text
    assert "KEY123" not in text
    assert "abab" not in text
    assert shown["chains"][0]["rpc"]["urls"] == ["https://***@rpc.gnosis.example/v1/***"]
    assert shown["market_sources"][0]["chain"] == "gnosis"


def test_the_old_chain_section_is_one_chain_named_default_with_a_warning(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "chain:\n  rpc: {urls: ['http://127.0.0.1:9999'], chain_id: 5}\n"
        "  tx: {confirmations: 7}\n"
        f"market_sources:\n  - {{kind: uma, oracle_address: '{UMA}'}}\n",
    )
    settings = load_settings(path)
    (chain,) = settings.chains
    assert chain.name == "default"
    assert chain.chain_id == 5
    assert chain.tx.confirmations == 7
    assert chain.rpc.urls[0].get_secret_value() == "http://127.0.0.1:9999"
    assert settings.chain is not None
    assert settings.chain.tx.confirmations == 7
    warning = legacy_chain_warning(settings)
    assert warning is not None
    assert "chains:" in warning
    assert "- name: default" in warning
    # A source may name it.
    path.write_text(path.read_text().replace("kind: uma,", "kind: uma, chain: default,"))
    assert load_settings(path).chains[0].name == "default"


def test_config_check_shows_the_warning_and_the_chain_of_each_source(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "chain:\n  rpc: {urls: ['http://127.0.0.1:9999']}\n"
        f"market_sources:\n  - {{kind: uma, oracle_address: '{UMA}'}}\n",
    )
    run = oracle_in_process("config", "check", "--config", str(path))
    assert run.returncode == 0, run.stderr
    assert "warning: chain: is the old single-chain section" in run.stderr
    shown = yaml.safe_load(run.stdout)
    assert shown["chains"][0]["name"] == "default"
    assert shown["market_sources"][0]["chain"] == "default"
    path.write_text(TWO_CHAINS)
    run = oracle_in_process("config", "check", "--config", str(path))
    assert run.returncode == 0
    assert "old single-chain" not in run.stderr


def test_an_old_chain_section_that_is_invalid_is_named_as_written(tmp_path: Path) -> None:
    message = _error(tmp_path, "chain:\n  tx: {confirmations: 0}\n")
    assert message.startswith("chain.tx.confirmations: ")
    assert "chains" not in message


def test_both_sections_at_once_is_an_error(tmp_path: Path) -> None:
    message = _error(tmp_path, TWO_CHAINS + "chain:\n  tx: {confirmations: 7}\n")
    assert message.startswith("chain: set chains or the old single-chain section chain, not both")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            TWO_CHAINS
            + "market_sources:\n"
            + f"  - {{kind: uma, name: u, chain: polygon, oracle_address: '{UMA}'}}\n",
            "market_sources[0].chain: source u names the chain 'polygon', which is not in "
            "chains (configured: gnosis, local)",
        ),
        (
            TWO_CHAINS
            + f"market_sources:\n  - {HTTP}\n"
            + f"  - {{kind: reality, name: r, contract_address: '{REALITY}', {BOND}}}\n",
            "market_sources[1].chain: source r must name its chain: several are configured "
            "(gnosis, local)",
        ),
        (
            "market_sources:\n"
            f"  - {{kind: uma_v3, name: v, chain: gnosis, oracle_address: '{UMA}', {WATCH}}}\n",
            "market_sources[0].chain: source v names the chain 'gnosis', which is not in "
            "chains (configured: default)",
        ),
        (
            TWO_CHAINS + "market_sources:\n  - {kind: chain, name: a, chain: local}\n"
            "  - {kind: chain, name: b, chain: local}\n",
            "market_sources: at most one source of kind chain per chain: a, b are all on local",
        ),
        (
            "chains:\n  - {name: a}\n  - {name: a}\n",
            "chains: names must be unique; repeated: a",
        ),
        ("chains: []\n", "chains: at least one chain"),
        (
            "chains:\n  - {name: a, chain_id: 100}\n  - {name: b, rpc: {chain_id: 100}}\n",
            "chains: a and b are both chain id 100 with the same signer: make them one entry",
        ),
        ("chains:\n  - {name: 'Not A Name'}\n", "chains[0].name: String should match pattern"),
        (
            "chains:\n  - {name: a, chain_id: 100, rpc: {chain_id: 5}}\n",
            "chains[0]: chain_id 100 and rpc.chain_id 5 disagree: set one of them",
        ),
        ("chains:\n  - {name: a, chain_id: 0}\n", "chains[0].chain_id: Input should be greater"),
    ],
)
def test_chain_errors_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    assert message in _error(tmp_path, text).splitlines()[-1]


def test_the_own_contract_on_each_of_two_chains_is_allowed(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        TWO_CHAINS
        + "market_sources:\n  - {kind: chain, name: a, chain: local}\n"
        + "  - {kind: chain, name: b, chain: gnosis}\n",
    )
    assert len(load_settings(path).market_sources) == 2


def test_environment_variables_set_a_chain_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, TWO_CHAINS)
    monkeypatch.setenv("ORACLE__CHAINS__GNOSIS__TX__CONFIRMATIONS", "9")
    monkeypatch.setenv("ORACLE__CHAINS__LOCAL__SIGNER__KEYSTORE", "/run/secrets/key.json")
    settings = load_settings(path)
    gnosis, local = settings.chains
    assert gnosis.tx.confirmations == 9
    assert local.tx.confirmations == 3
    assert local.signer.keystore == "/run/secrets/key.json"
    assert gnosis.signer.keystore is None
    assert gnosis.rpc.chain_id == 100  # the rest of the entry is the file's
    monkeypatch.setenv("ORACLE__CHAINS__POLYGON__TX__CONFIRMATIONS", "9")
    with pytest.raises(ConfigError, match=NO_POLYGON):
        load_settings(path)


def test_old_environment_variables_set_the_only_chain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A deployment that sets ORACLE__CHAIN__SIGNER__... keeps working with the new file.
    monkeypatch.setenv("ORACLE__CHAIN__SIGNER__KEYSTORE", "/run/secrets/key.json")
    one = _write(tmp_path, "chains:\n  - {name: main, chain_id: 100}\n")
    settings = load_settings(one)
    assert settings.chains[0].signer.keystore == "/run/secrets/key.json"
    assert settings.chains[0].chain_id == 100
    assert settings.chain is None
    # Without a file's chains, they are the old section: one chain, named default.
    (tmp_path / "empty.yaml").write_text("log: {level: INFO}\n")
    assert load_settings(tmp_path / "empty.yaml").chains[0].signer.keystore == (
        "/run/secrets/key.json"
    )
    # With several chains they cannot say which.
    with pytest.raises(ConfigError, match=r"ORACLE__CHAIN__\.\.\.: the file lists several chains"):
        load_settings(_write(tmp_path, TWO_CHAINS))


def test_the_retired_checkpoint_file_setting_loads_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Scan checkpoints are in the database; nothing read the file setting.
    path = _write(tmp_path, "chain:\n  scanner: {checkpoint_file: data/x.json, confirmations: 2}\n")
    with caplog.at_level(logging.WARNING, logger="oracle.config"):
        settings = load_settings(path)
    assert settings.chains[0].scanner.confirmations == 2
    assert "checkpoint_file" not in settings.chains[0].scanner.model_dump()
    assert any("scanner.checkpoint_file is ignored" in r.getMessage() for r in caplog.records)


def test_oracle_run_names_an_unknown_chain_in_one_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        f"market_sources:\n  - {{kind: uma, name: u, chain: mainnet, oracle_address: '{UMA}'}}\n",
    )
    line = one_error_line(run_oracle("run", "--once", "--config", str(path), cwd=tmp_path))
    assert line == (
        "market_sources[0].chain: source u names the chain 'mainnet', which is not in "
        "chains (configured: default)"
    )


def test_chain_and_keys_commands_take_the_chain_by_name(tmp_path: Path) -> None:
    path = _write(tmp_path, TWO_CHAINS)
    run = oracle_in_process("keys", "address", "--config", str(path))
    assert run.returncode == 2
    assert run.stderr == (
        "error: chains: several are configured (gnosis, local); name one (--chain NAME)\n"
    )
    run = oracle_in_process("keys", "address", "--config", str(path), "--chain", "polygon")
    assert run.returncode == 2
    assert "no chain named 'polygon' (configured: gnosis, local)" in run.stderr
    # The named chain's signer is the one used: local's keystore, which is missing.
    run = oracle_in_process("keys", "address", "--config", str(path), "--chain", "local")
    assert run.returncode == 2
    assert "no such keystore" in run.stderr


def test_each_chain_names_its_native_token_for_amounts(tmp_path: Path) -> None:
    text = TWO_CHAINS.replace(
        "    chain_id: 100\n", "    chain_id: 100\n    native_token: {symbol: xDAI}\n"
    )
    settings = load_settings(_write(tmp_path, text))
    gnosis, local = settings.chains
    assert (gnosis.native_token.symbol, gnosis.native_token.decimals) == ("xDAI", 18)
    assert (local.native_token.symbol, local.native_token.decimals) == ("ETH", 18)
    tokens = settings.token_table()
    assert tokens.of(None, {}, "gnosis") == Token("xDAI", 18)
    assert tokens.of(None, {}, "local") == Token("ETH", 18)
    assert "symbol" in _error(tmp_path, text.replace("{symbol: xDAI}", "{symbol: ''}"))


def test_the_one_native_token_of_the_console_applies_to_chains_naming_none_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = TWO_CHAINS.replace(
        "    chain_id: 100\n", "    chain_id: 100\n    native_token: {symbol: xDAI}\n"
    )
    text += "console:\n  native_token: {symbol: POL}\n"
    with caplog.at_level(logging.WARNING, logger="oracle.config"):
        settings = load_settings(_write(tmp_path, text))
    [warning] = [r.getMessage() for r in caplog.records if "native_token" in r.getMessage()]
    assert warning.startswith("console.native_token is deprecated: set native_token in each")
    tokens = settings.token_table()
    assert tokens.of(None, {}, "gnosis") == Token("xDAI", 18)  # its own
    assert tokens.of(None, {}, "local") == Token("POL", 18)  # it named none
    assert tokens.of(None, {}, None) == Token("POL", 18)  # a market of no known chain
