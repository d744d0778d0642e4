"""The bulletin board where Polymarket's question creators post clarifications (UMA's CTF
adapter carries it: `IBulletinBoard`), read for the UMA venue.

`getUpdates(questionID, owner)` returns every update `owner` posted for `questionID`
(keccak256 of the request's ancillary data), oldest first, as (timestamp, bytes) pairs;
anyone may post, so the reader always names the owner (the question's initializer) and
never reads anyone else's. The call is encoded and decoded here from the interface (not
from an artifact: the board is whatever contract the venue is configured with), and its
answer is refused unread past `max_response_bytes`, so a board holding megabytes costs a
bounded amount of memory and time; the text itself is bounded by
`oracle.core.clarifications`.
"""

from __future__ import annotations

from collections.abc import Sequence

from eth_abi.abi import decode as abi_decode
from eth_abi.abi import encode as abi_encode
from eth_abi.exceptions import DecodingError
from eth_typing import HexStr
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak
from hexbytes import HexBytes

from oracle.chain.revert import is_revert
from oracle.chain.rpc import RpcPool
from oracle.core.clarifications import BoardUpdate
from oracle.errors import ChainError

GET_UPDATES = "getUpdates(bytes32,address)"
_SELECTOR = keccak(text=GET_UPDATES)[:4]
_UPDATES = "(uint256,bytes)[]"


def question_id(ancillary_data: bytes) -> bytes:
    """The board's question id: keccak256 of the request's ancillary data."""
    return keccak(bytes(ancillary_data))


class BoardUnreadable(ChainError):
    """The board answered, but not with updates this reader can use (too large, or not
    the board's ABI): a fact about the configured contract, not the node."""


class BulletinBoard:
    def __init__(self, pool: RpcPool, address: str, *, max_response_bytes: int) -> None:
        self.pool = pool
        self.address = to_checksum_address(address)
        self.max_response_bytes = max_response_bytes

    async def updates(
        self, questions: Sequence[tuple[bytes, str]]
    ) -> list[list[BoardUpdate] | BoardUnreadable]:
        """For each (question id, owner): the owner's updates, oldest first, or why the
        board's answer could not be used; one JSON-RPC batch. A node failure raises
        ChainError (the caller tries again later)."""
        if not questions:
            return []
        calldata = [
            HexStr(
                "0x"
                + (
                    _SELECTOR
                    + abi_encode(["bytes32", "address"], [qid, to_checksum_address(owner)])
                ).hex()
            )
            for qid, owner in questions
        ]
        try:
            raws = await self.pool.eth_calls(f"BulletinBoard.{GET_UPDATES}", self.address, calldata)
        except ChainError:
            raise
        except Exception as error:
            if not is_revert(error):
                raise
            # A real board never reverts here: the contract configured is not one.
            unreadable = BoardUnreadable(
                f"bulletin board {self.address}: getUpdates reverts; is it a bulletin board?"
            )
            return [unreadable] * len(questions)
        return [self._decode(bytes(HexBytes(raw))) for raw in raws]

    def _decode(self, raw: bytes) -> list[BoardUpdate] | BoardUnreadable:
        if len(raw) > self.max_response_bytes:
            return BoardUnreadable(
                f"bulletin board {self.address}: getUpdates answered {len(raw)} bytes, more "
                f"than the limit of {self.max_response_bytes}"
            )
        try:
            (pairs,) = abi_decode([_UPDATES], raw)
        except (DecodingError, ValueError, OverflowError) as error:
            return BoardUnreadable(
                f"bulletin board {self.address}: getUpdates answer is not a list of "
                f"(timestamp, bytes) ({type(error).__name__})"
            )
        return [BoardUpdate(int(timestamp), bytes(update)) for timestamp, update in pairs]
