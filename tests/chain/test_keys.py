"""Key custody: keystores, passwords, the signer, and that no secret ever leaks."""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data
from pydantic import SecretStr, ValidationError

from oracle.chain.keys import (
    LocalSigner,
    Signer,
    create_keystore,
    import_keystore,
    keystore_address,
    load_keystore,
    read_password,
    signer_from_settings,
)
from oracle.chain.settings import ChainSettings, SignerSettings
from oracle.errors import KeystoreError, SetupError

# anvil's first development account; public knowledge, never a real key.
DEV_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
DEV_ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
PASSWORD = "correct horse battery staple"
FAST = 2  # PBKDF2 iterations: keeps the unit tests fast; the CLI uses scrypt


def _assert_clean(text: str, *secrets: str) -> None:
    lowered = text.lower()
    for secret in secrets:
        assert secret.lower() not in lowered
        assert secret.lower().removeprefix("0x") not in lowered


def test_create_load_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "k.json"
    address = create_keystore(path, SecretStr(PASSWORD), iterations=FAST)
    assert keystore_address(path) == address
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    signer = load_keystore(path, SecretStr(PASSWORD))
    assert signer.address == address
    assert isinstance(signer, Signer)
    _assert_clean(path.read_text(), PASSWORD)


def test_import_then_refuse_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "k.json"
    assert import_keystore(path, SecretStr(DEV_KEY), SecretStr(PASSWORD), iterations=FAST) == (
        DEV_ADDRESS
    )
    _assert_clean(path.read_text(), DEV_KEY, PASSWORD)
    with pytest.raises(KeystoreError, match="already exists"):
        import_keystore(path, SecretStr(DEV_KEY), SecretStr(PASSWORD), iterations=FAST)
    assert load_keystore(path, SecretStr(PASSWORD)).address == DEV_ADDRESS


def test_wrong_password_names_the_file_only(tmp_path: Path) -> None:
    path = tmp_path / "k.json"
    import_keystore(path, SecretStr(DEV_KEY), SecretStr(PASSWORD), iterations=FAST)
    with pytest.raises(KeystoreError) as caught:
        load_keystore(path, SecretStr("not the password"))
    assert str(path) in str(caught.value)
    assert "wrong password" in str(caught.value)
    _assert_clean(str(caught.value) + repr(caught.value), "not the password", DEV_KEY)
    assert caught.value.__context__ is None
    assert caught.value.__cause__ is None


def test_bad_key_does_not_echo_it() -> None:
    bad = "0x" + "zz" + DEV_KEY[4:]
    with pytest.raises(KeystoreError) as caught:
        LocalSigner(bad)
    _assert_clean(str(caught.value) + repr(caught.value), bad)
    assert caught.value.__context__ is None


def test_malformed_keystores(tmp_path: Path) -> None:
    with pytest.raises(KeystoreError, match="no such keystore"):
        keystore_address(tmp_path / "missing.json")
    (tmp_path / "x.json").write_text("{nope")
    with pytest.raises(KeystoreError, match="keystore is not usable JSON"):
        keystore_address(tmp_path / "x.json")
    (tmp_path / "y.json").write_text('{"address": "00"}')
    with pytest.raises(KeystoreError, match="crypto"):
        keystore_address(tmp_path / "y.json")


def test_signer_repr_and_pickle_hide_the_key() -> None:
    signer = LocalSigner(DEV_KEY)
    assert repr(signer) == f"LocalSigner({DEV_ADDRESS})"
    _assert_clean(repr(signer) + str(signer), DEV_KEY)
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(signer)
    assert not hasattr(signer, "__dict__")


def test_signatures_recover_to_the_address() -> None:
    signer = LocalSigner(DEV_KEY)
    tx = {
        "chainId": 31337,
        "nonce": 0,
        "to": "0x" + "11" * 20,
        "value": 1,
        "gas": 21000,
        "maxFeePerGas": 2 * 10**9,
        "maxPriorityFeePerGas": 10**9,
        "type": 2,
    }
    signed = asyncio.run(signer.sign_transaction(tx))
    assert Account.recover_transaction(signed.raw) == DEV_ADDRESS
    assert DEV_KEY.removeprefix("0x") not in repr(signed)
    typed = {
        "types": {
            "EIP712Domain": [{"name": "name", "type": "string"}],
            "Ping": [{"name": "n", "type": "uint256"}],
        },
        "primaryType": "Ping",
        "domain": {"name": "t"},
        "message": {"n": 7},
    }
    signature = asyncio.run(signer.sign_typed_data(typed))
    assert len(signature) == 65
    recovered = Account.recover_message(encode_typed_data(full_message=typed), signature=signature)
    assert recovered == DEV_ADDRESS


def test_read_password_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "pw"
    file.write_text(PASSWORD + "\n")
    assert read_password(file, None).get_secret_value() == PASSWORD
    monkeypatch.setenv("TEST_KS_PW", PASSWORD)
    assert read_password(None, "TEST_KS_PW").get_secret_value() == PASSWORD
    monkeypatch.delenv("TEST_KS_PW")
    with pytest.raises(KeystoreError, match=r"\$TEST_KS_PW"):
        read_password(None, "TEST_KS_PW")
    with pytest.raises(KeystoreError, match="cannot be read"):
        read_password(tmp_path / "none", None)
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(KeystoreError, match="empty"):
        read_password(tmp_path / "empty", None)
    with pytest.raises(KeystoreError, match="no keystore password"):
        read_password(None, None)


def test_dev_key_only_behind_explicit_setting_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ValidationError, match="type is keystore"):
        SignerSettings(dev_private_key=SecretStr(DEV_KEY))
    with pytest.raises(ValidationError, match="required"):
        SignerSettings(type="dev_private_key")
    settings = SignerSettings(type="dev_private_key", dev_private_key=SecretStr(DEV_KEY))
    _assert_clean(repr(settings) + str(settings), DEV_KEY)
    with caplog.at_level(logging.DEBUG):
        signer = signer_from_settings(settings)
    assert signer.address == DEV_ADDRESS
    warnings = [r for r in caplog.records if getattr(r, "event", None) == "signer.dev_private_key"]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING
    _assert_clean(caplog.text, DEV_KEY)


def test_signer_from_keystore_settings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "k.json"
    import_keystore(path, SecretStr(DEV_KEY), SecretStr(PASSWORD), iterations=FAST)
    monkeypatch.setenv("ORACLE_KEYSTORE_PASSWORD", PASSWORD)
    with caplog.at_level(logging.DEBUG):
        signer = signer_from_settings(SignerSettings(keystore=str(path)))
    assert signer.address == DEV_ADDRESS
    _assert_clean(caplog.text, DEV_KEY, PASSWORD)
    with pytest.raises(SetupError, match=r"^chain\.signer\.keystore: is required"):
        signer_from_settings(SignerSettings())


def test_a_signer_that_does_not_unlock_names_the_setting_not_the_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "k.json"
    import_keystore(path, SecretStr(DEV_KEY), SecretStr(PASSWORD), iterations=FAST)
    monkeypatch.setenv("TEST_KS_PW", "wrong-" + PASSWORD)
    with pytest.raises(SetupError) as caught:
        signer_from_settings(SignerSettings(keystore=str(path), password_env="TEST_KS_PW"))
    assert caught.value.key == "chain.signer.password_env"
    assert caught.value.problem == (
        f"$TEST_KS_PW does not unlock the keystore {path} (wrong password, or a damaged keystore)"
    )
    _assert_clean(str(caught.value) + repr(caught.value), DEV_KEY, PASSWORD)
    with pytest.raises(SetupError, match=r"^chain\.signer\.password_file: .*cannot be read"):
        signer_from_settings(
            SignerSettings(keystore=str(path), password_file=str(tmp_path / "missing"))
        )
    with pytest.raises(SetupError, match=r"^chain\.signer\.keystore: .*no such keystore"):
        signer_from_settings(SignerSettings(keystore=str(tmp_path / "missing.json")))
    with pytest.raises(SetupError, match=r"^chain\.signer\.dev_private_key: not a valid"):
        signer_from_settings(
            SignerSettings(type="dev_private_key", dev_private_key=SecretStr("0x1234"))
        )


def _oracle(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oracle", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        check=False,
    )


def test_cli_keys_new_import_address(tmp_path: Path) -> None:
    env = {"MY_PW": PASSWORD, "ORACLE_CONFIG": str(tmp_path / "none.yaml")}
    (tmp_path / "none.yaml").write_text("{}\n")
    imported = tmp_path / "imported.json"
    result = _oracle(
        "keys", "import", "--keystore", str(imported), "--password-env", "MY_PW",
        env=env, stdin=DEV_KEY + "\n",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == DEV_ADDRESS
    _assert_clean(result.stdout + result.stderr + imported.read_text(), DEV_KEY, PASSWORD)

    result = _oracle("keys", "address", "--keystore", str(imported), env=env)
    assert result.stdout.strip() == DEV_ADDRESS

    fresh = tmp_path / "new.json"
    result = _oracle("keys", "new", "--keystore", str(fresh), "--password-env", "MY_PW", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == keystore_address(fresh)
    assert load_keystore(fresh, SecretStr(PASSWORD)).address == result.stdout.strip()

    result = _oracle(
        "keys", "import", "--keystore", str(tmp_path / "bad.json"), "--password-env", "MY_PW",
        env=env, stdin="0xnot-a-key\n",
    )  # fmt: skip
    assert result.returncode == 2
    assert "not a valid 32-byte hex key" in result.stderr
    assert "0xnot-a-key" not in result.stderr
    assert not (tmp_path / "bad.json").exists()


def test_config_check_masks_chain_secrets(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "chain:\n"
        "  rpc:\n"
        "    urls: ['https://user:pw@rpc.example/v3/0123456789abcdef0123456789abcdef']\n"
        "  signer:\n"
        "    type: dev_private_key\n"
        f"    dev_private_key: '{DEV_KEY}'\n"
    )
    result = _oracle("config", "check", "--config", str(config), env={})
    assert result.returncode == 0, result.stderr
    _assert_clean(result.stdout, DEV_KEY, "0123456789abcdef0123456789abcdef", ":pw@")
    assert "chain:" in result.stdout
    assert ChainSettings().tx.confirmations == 3
