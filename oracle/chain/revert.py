"""Revert data -> a readable error: custom errors from any ABI, `Error(string)`, `Panic`.

`ErrorDecoder(abi, ...)` indexes every `{"type": "error"}` entry of the ABIs it is given
by its 4-byte selector (keccak-256 of the canonical signature). `decode(data)` returns a
`DecodedError` whose `name` is the custom error's name (`QuestionExists`), `"Error"` for a
`require`/`revert` string, `"Panic"` for a compiler panic, or `"Unknown"`/`"Empty"`.

Besides the ABIs it is given, every decoder knows `WELL_KNOWN_ERRORS`: the refusals a
venue's contract may raise that its ABI in this package does not carry (UMA's managed
OOv2 whitelists, OpenZeppelin's access control), so that a refusal for good is named, and
`oracle.core.failures.classify_revert` can tell it from a failure worth retrying.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from eth_abi.abi import decode as abi_decode
from eth_abi.exceptions import DecodingError
from eth_utils.abi import abi_to_signature, function_signature_to_4byte_selector
from hexbytes import HexBytes
from web3.exceptions import Web3RPCError

from oracle.errors import RpcUnavailable

T = TypeVar("T")

ERROR_STRING_SELECTOR = bytes.fromhex("08c379a0")  # Error(string)
PANIC_SELECTOR = bytes.fromhex("4e487b71")  # Panic(uint256)

PANIC_CODES = {
    0x00: "generic compiler panic",
    0x01: "assertion failed",
    0x11: "arithmetic overflow or underflow",
    0x12: "division or modulo by zero",
    0x21: "invalid enum value",
    0x22: "corrupted storage byte array",
    0x31: "pop on empty array",
    0x32: "array index out of bounds",
    0x41: "out of memory",
    0x51: "call to an uninitialised function pointer",
}


def _type_string(component: Mapping[str, Any]) -> str:
    kind = str(component["type"])
    if kind.startswith("tuple"):
        inner = ",".join(_type_string(c) for c in component.get("components", ()))
        return f"({inner}){kind[len('tuple') :]}"
    return kind


def _render(value: Any) -> str:
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    if isinstance(value, str) and not value.startswith("0x"):
        return repr(value)
    return str(value)


@dataclass(frozen=True)
class DecodedError:
    name: str
    args: tuple[tuple[str, Any], ...] = ()
    selector: str = ""
    raw: str = field(default="", repr=False)
    why: str = ""  # for "Empty": what is known of why there is no data

    def __str__(self) -> str:
        if self.name == "Empty":
            return "a revert without data" + (f": {self.why}" if self.why else "")
        if self.name == "Unknown":
            return f"an unknown error (selector {self.selector})"
        inner = ", ".join(f"{k}={_render(v)}" if k else _render(v) for k, v in self.args)
        return f"{self.name}({inner})"


@dataclass(frozen=True)
class _ErrorAbi:
    name: str
    types: tuple[str, ...]
    names: tuple[str, ...]


def _error(name: str, *inputs: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "error",
        "name": name,
        "inputs": [{"name": n, "type": t} for n, t in inputs],
    }


# Refusals a venue may raise whose ABI this package does not hold: UMA's managed
# Optimistic Oracle V2 (UMAprotocol/managed-oracle, Polymarket's oracle) and
# OpenZeppelin 5's access control (`onlyResolver` settles, owners, roles).
WELL_KNOWN_ERRORS: tuple[dict[str, Any], ...] = (
    _error("ProposerNotWhitelisted"),
    _error("SenderNotWhitelisted"),
    _error("RequesterNotWhitelisted"),
    _error("UnsupportedCurrency"),
    _error("AccessControlUnauthorizedAccount", ("account", "address"), ("neededRole", "bytes32")),
    _error("OwnableUnauthorizedAccount", ("account", "address")),
)


class ErrorDecoder:
    """Decodes revert data against the custom errors of one or more ABIs (and
    `WELL_KNOWN_ERRORS`; an ABI's own entry wins a shared selector)."""

    def __init__(self, *abis: Iterable[Mapping[str, Any]]) -> None:
        self._errors: dict[bytes, _ErrorAbi] = {}
        self._given: set[str] = set()
        for abi in (WELL_KNOWN_ERRORS, *abis):
            for entry in abi:
                if entry.get("type") != "error":
                    continue
                inputs: Sequence[Mapping[str, Any]] = entry.get("inputs", ())
                types = tuple(_type_string(i) for i in inputs)
                signature = abi_to_signature(dict(entry))  # type: ignore[arg-type]
                selector = function_signature_to_4byte_selector(signature)
                self._errors[selector] = _ErrorAbi(
                    str(entry["name"]), types, tuple(str(i.get("name", "")) for i in inputs)
                )
                if abi is not WELL_KNOWN_ERRORS:
                    self._given.add(str(entry["name"]))

    @property
    def names(self) -> list[str]:
        """The custom errors of the ABIs given (not the well-known ones every decoder has)."""
        return sorted(self._given)

    def decode(self, data: bytes | str | None) -> DecodedError:
        raw = bytes(HexBytes(data)) if data else b""
        if not raw:
            return DecodedError("Empty")
        selector, body = raw[:4], raw[4:]
        hex_selector = "0x" + selector.hex()
        try:
            if selector == ERROR_STRING_SELECTOR:
                (message,) = abi_decode(["string"], body)
                return DecodedError("Error", (("", message),), hex_selector, raw.hex())
            if selector == PANIC_SELECTOR:
                (code,) = abi_decode(["uint256"], body)
                reason = PANIC_CODES.get(code, "unknown panic code")
                return DecodedError("Panic", (("code", hex(code)), ("", reason)), hex_selector)
            known = self._errors.get(selector)
            if known is not None:
                values = abi_decode(list(known.types), body)
                args = tuple(zip(known.names, values, strict=True))
                return DecodedError(known.name, args, hex_selector, raw.hex())
        except (DecodingError, ValueError, OverflowError):
            pass
        return DecodedError("Unknown", (), hex_selector, raw.hex())


def revert_data(error: BaseException) -> bytes | None:
    """The revert data carried by a web3 exception from eth_call / eth_estimateGas, if any."""
    data = getattr(error, "data", None)
    if isinstance(data, str | bytes) and data:
        try:
            return bytes(HexBytes(data))
        except ValueError:
            return None
    if isinstance(error, Web3RPCError) and isinstance(error.rpc_response, dict):
        body = error.rpc_response.get("error")
        if isinstance(body, dict):
            inner = body.get("data")
            if isinstance(inner, dict):
                inner = inner.get("data")
            if isinstance(inner, str) and inner.startswith("0x"):
                return bytes(HexBytes(inner))
    return None


def is_revert(error: BaseException) -> bool:
    """True when the node says the call reverts (as opposed to a transport problem)."""
    if revert_data(error) is not None:
        return True
    text = str(getattr(error, "message", "") or error).lower()
    return "revert" in text


async def unless_reverted(call: Awaitable[T]) -> T | None:
    """What a contract `call` gives; None when the node says it reverts (`is_revert`).
    No node answering (RpcUnavailable) and any other failure are raised."""
    try:
        return await call
    except RpcUnavailable:
        raise
    except Exception as error:  # web3 raises several kinds for a revert
        if is_revert(error):
            return None
        raise
