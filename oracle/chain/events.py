"""Decode logs of one event from its ABI entry (no web3 contract object needed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_utils.abi import abi_to_signature, event_signature_to_log_topic
from eth_utils.address import to_checksum_address
from hexbytes import HexBytes

_DYNAMIC_INDEXED = ("string", "bytes")


def _type(component: Mapping[str, Any]) -> str:
    kind = str(component["type"])
    if kind.startswith("tuple"):
        inner = ",".join(_type(c) for c in component.get("components", ()))
        return f"({inner}){kind[len('tuple') :]}"
    return kind


def _int(value: Any) -> int:
    """web3 gives ints, raw JSON-RPC gives hex strings."""
    return int(value, 16) if isinstance(value, str) else int(value)


@dataclass(frozen=True)
class DecodedLog:
    event: str
    args: dict[str, Any]
    address: str
    block_number: int
    block_hash: str
    tx_hash: str
    log_index: int


class EventDecoder:
    """Decodes the logs of one event; `topic` is its signature hash for `eth_getLogs`.

    `strings_as_bytes`: a `string` argument that is not indexed is returned as its bytes,
    undecoded. A contract does not check that a string is UTF-8, so anyone can log one
    that is not; decoded, it would raise on every scan of that block."""

    def __init__(
        self, abi: Iterable[Mapping[str, Any]], name: str, *, strings_as_bytes: bool = False
    ) -> None:
        entries = [e for e in abi if e.get("type") == "event" and e.get("name") == name]
        if len(entries) != 1:
            raise ValueError(f"the ABI has {len(entries)} events named {name}, expected 1")
        self.entry = entries[0]
        self.name = name
        self.signature = abi_to_signature(dict(self.entry))  # type: ignore[arg-type]
        self.topic = "0x" + event_signature_to_log_topic(self.signature).hex()
        inputs = list(self.entry.get("inputs", ()))
        self._indexed = [i for i in inputs if i.get("indexed")]
        self._plain = [i for i in inputs if not i.get("indexed")]
        self._plain_types = [
            "bytes" if strings_as_bytes and _type(c) == "string" else _type(c) for c in self._plain
        ]

    def decode(self, log: Mapping[str, Any]) -> DecodedLog:
        topics = [HexBytes(t) for t in log["topics"]]
        if not topics or topics[0] != HexBytes(self.topic):
            raise ValueError(f"not a {self.name} log")
        args: dict[str, Any] = {}
        for component, topic in zip(self._indexed, topics[1:], strict=True):
            kind = _type(component)
            if kind in _DYNAMIC_INDEXED or kind.endswith("]") or kind.startswith("("):
                args[component["name"]] = bytes(topic)  # only the hash is logged
            else:
                (args[component["name"]],) = abi_decode([kind], bytes(topic))
        values = abi_decode(self._plain_types, bytes(HexBytes(log["data"])))
        for component, value in zip(self._plain, values, strict=True):
            args[component["name"]] = value
        for component in self._indexed + self._plain:
            if component["type"] == "address":
                args[component["name"]] = to_checksum_address(args[component["name"]])
        return DecodedLog(
            event=self.name,
            args=args,
            address=to_checksum_address(str(log["address"])),
            block_number=_int(log["blockNumber"]),
            block_hash=HexBytes(log["blockHash"]).to_0x_hex(),
            tx_hash=HexBytes(log["transactionHash"]).to_0x_hex(),
            log_index=_int(log["logIndex"]),
        )


def address_topic(address: str) -> str:
    """An address as an indexed event argument's topic (for eth_getLogs filters)."""
    return "0x" + "00" * 12 + to_checksum_address(address)[2:].lower()
