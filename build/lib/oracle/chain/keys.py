"""Key custody: encrypted JSON keystores, password sources, and the `Signer` interface.

The transaction manager only sees a `Signer`: an address and two async signing methods.
`LocalSigner` keeps a decrypted key in memory; an external signer or KMS implements the
same three members and plugs in without any change to the transaction manager.

No private key or password is ever logged, put into an exception message or shown by a
repr: `LocalSigner`'s repr is its address, it refuses to be pickled, and every error
from decoding a key or a keystore is replaced by a message that names only the file or
the setting.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, Protocol, runtime_checkable

from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_account.signers.local import LocalAccount
from eth_typing import ChecksumAddress, HexStr
from eth_utils.address import to_checksum_address
from pydantic import SecretStr

from oracle.chain.passwords import read_password
from oracle.chain.settings import SignerSettings
from oracle.errors import JsonError, KeystoreError, SetupError
from oracle.files import make_directory
from oracle.log import emit
from oracle.safe_json import loads

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SignedTx:
    """A signed transaction: the raw bytes to broadcast and their hash."""

    raw: bytes = field(repr=False)
    hash: bytes

    @property
    def hash_hex(self) -> str:
        return "0x" + self.hash.hex()


@runtime_checkable
class Signer(Protocol):
    """What the transaction manager needs from a key holder.

    Implementations must be safe to call concurrently and must never include key
    material in exceptions, logs or reprs.
    """

    @property
    def address(self) -> ChecksumAddress:
        """The account that signs; transactions are sent from it."""
        ...

    async def sign_transaction(self, tx: Mapping[str, Any]) -> SignedTx:
        """Sign a complete EIP-1559 transaction dict (chainId, nonce, gas, fees, to, ...)."""
        ...

    async def sign_typed_data(self, typed_data: Mapping[str, Any]) -> bytes:
        """Sign an EIP-712 message given as the full JSON document
        (`types`, `primaryType`, `domain`, `message`); returns the 65-byte r||s||v."""
        ...


def _bad_key() -> NoReturn:
    # Raised outside any `except` block so that no underlying exception (whose message
    # could quote the input) is chained as __context__.
    raise KeystoreError("private key: not a valid 32-byte hex key")


def _account_from_key(secret: str | bytes) -> LocalAccount:
    try:
        account: LocalAccount | None = Account.from_key(secret)
    except Exception:
        account = None
    if account is None:
        _bad_key()
    return account


class LocalSigner:
    """A `Signer` holding a decrypted private key in this process's memory."""

    __slots__ = ("__account",)

    def __init__(self, private_key: SecretStr | str | bytes) -> None:
        secret = (
            private_key.get_secret_value() if isinstance(private_key, SecretStr) else private_key
        )
        self.__account = _account_from_key(secret)

    @property
    def address(self) -> ChecksumAddress:
        return to_checksum_address(self.__account.address)

    async def sign_transaction(self, tx: Mapping[str, Any]) -> SignedTx:
        signed = self.__account.sign_transaction(dict(tx))
        return SignedTx(raw=bytes(signed.raw_transaction), hash=bytes(signed.hash))

    async def sign_typed_data(self, typed_data: Mapping[str, Any]) -> bytes:
        message = encode_typed_data(full_message=dict(typed_data))
        return bytes(self.__account.sign_message(message).signature)

    def __repr__(self) -> str:
        return f"LocalSigner({self.address})"

    __str__ = __repr__

    def __reduce__(self) -> NoReturn:
        raise TypeError("a LocalSigner holds a private key and cannot be pickled")


# --- keystores -----------------------------------------------------------------------------


def _write_new(path: Path, document: dict[str, Any]) -> None:
    if path.exists():
        raise KeystoreError(f"{path}: already exists; refusing to overwrite a keystore")
    temporary = path.with_name(path.name + ".tmp")
    try:
        make_directory(path.parent)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        raise KeystoreError(f"{path}: cannot be written ({error.strerror})") from None


def _encrypt(private_key: bytes | HexStr, password: SecretStr, iterations: int | None) -> Any:
    try:
        if iterations is None:
            document = Account.encrypt(private_key, password.get_secret_value())
        else:
            document = Account.encrypt(
                private_key, password.get_secret_value(), kdf="pbkdf2", iterations=iterations
            )
    except Exception:
        document = None
    if document is None:
        _bad_key()
    return document


def create_keystore(path: Path, password: SecretStr, *, iterations: int | None = None) -> str:
    """Generate a key, write it encrypted to `path` (mode 0600); returns its address.

    `iterations` switches to a cheap PBKDF2 for tests; the default is scrypt.
    """
    account = Account.create()
    document = _encrypt(account.key, password, iterations)
    _write_new(path, document)
    return to_checksum_address(account.address)


def import_keystore(
    path: Path, private_key: SecretStr, password: SecretStr, *, iterations: int | None = None
) -> str:
    """Encrypt an existing private key into a new keystore at `path`; returns its address."""
    address = LocalSigner(private_key).address
    key = HexStr(private_key.get_secret_value().strip())
    document = _encrypt(key, password, iterations)
    _write_new(path, document)
    return address


def _read_keystore(path: Path) -> dict[str, Any]:
    try:
        document = loads(path.read_bytes())
    except FileNotFoundError:
        raise KeystoreError(f"{path}: no such keystore") from None
    except OSError as error:
        raise KeystoreError(f"{path}: keystore cannot be read ({error.strerror})") from None
    except JsonError as error:
        raise KeystoreError(f"{path}: keystore is {error}") from None
    if not isinstance(document, dict) or "crypto" not in {k.lower() for k in document}:
        raise KeystoreError(f"{path}: not an encrypted JSON keystore (no `crypto` field)")
    return document


def keystore_address(path: Path) -> str:
    """The address a keystore declares, without decrypting it."""
    document = _read_keystore(path)
    address = document.get("address")
    if not isinstance(address, str):
        raise KeystoreError(f"{path}: keystore has no `address` field")
    try:
        return to_checksum_address(address if address.startswith("0x") else "0x" + address)
    except ValueError:
        raise KeystoreError(f"{path}: keystore `address` is not an address") from None


def _decrypt(path: Path, document: dict[str, Any], password: SecretStr) -> LocalSigner | None:
    """The keystore's signer; None when the password does not decrypt it."""
    try:
        key: bytes | None = bytes(Account.decrypt(document, password.get_secret_value()))
    except Exception:
        key = None
    if key is None:
        return None
    signer = LocalSigner(key)
    declared = document.get("address")
    if isinstance(declared, str) and declared.lower().removeprefix("0x") != (
        signer.address.lower().removeprefix("0x")
    ):
        raise KeystoreError(f"{path}: keystore `address` does not match its key")
    return signer


def load_keystore(path: Path, password: SecretStr) -> LocalSigner:
    """Decrypt `path`; KeystoreError when the password is wrong or the file is damaged."""
    signer = _decrypt(path, _read_keystore(path), password)
    if signer is None:
        raise KeystoreError(f"{path}: wrong password or damaged keystore")
    return signer


def signer_from_settings(settings: SignerSettings) -> Signer:
    """The configured signer; the development key logs a warning every time it is used.

    A signer that cannot be made is a SetupError naming the setting to fix:
    `chain.signer.keystore` (missing, unreadable, not a keystore), `chain.signer.password_file`
    or `chain.signer.password_env` (no password there, or one that does not unlock the
    keystore), `chain.signer.dev_private_key` (not a key). Neither names the secret.
    """
    if settings.type == "dev_private_key":
        assert settings.dev_private_key is not None  # guaranteed by the settings validator
        try:
            signer = LocalSigner(settings.dev_private_key)
        except KeystoreError:
            raise SetupError(
                "chain.signer.dev_private_key", "not a valid 32-byte hex key"
            ) from None
        emit(
            logger,
            logging.WARNING,
            "signer.dev_private_key",
            address=signer.address,
            note="raw private key from the configuration; development only",
        )
        return signer
    if settings.keystore is None:
        raise SetupError("chain.signer.keystore", "is required when type is keystore")
    path = Path(settings.keystore)
    try:
        document = _read_keystore(path)
    except KeystoreError as error:
        raise SetupError("chain.signer.keystore", str(error)) from None
    password_file = Path(settings.password_file) if settings.password_file else None
    if password_file is not None:
        key, origin = "chain.signer.password_file", str(password_file)
    else:
        key, origin = "chain.signer.password_env", f"${settings.password_env}"
    try:
        password = read_password(password_file, settings.password_env)
    except KeystoreError as error:
        if password_file is None and not settings.password_env:
            problem = "no keystore password: set it, or chain.signer.password_file"
            raise SetupError(key, problem) from None
        raise SetupError(key, str(error)) from None
    try:
        unlocked = _decrypt(path, document, password)
    except KeystoreError as error:  # a keystore whose declared address is not its key's
        raise SetupError("chain.signer.keystore", str(error)) from None
    if unlocked is None:
        problem = f"does not unlock the keystore {path} (wrong password, or a damaged keystore)"
        raise SetupError(key, f"{origin} {problem}")
    return unlocked
