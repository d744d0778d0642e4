"""Reopening a Reality.eth v3 question that finalized as "answered too soon".

A question whose final answer is `0xff..fe` (RealityETH_v3_0's `UNRESOLVED_ANSWER`,
`isSettledTooSoon`) can be asked again with `reopenQuestion(template_id, question,
arbitrator, timeout, opening_ts, nonce, min_bond, reopens_question_id)`: the same text,
arbitrator, timeout, opening time and minimum bond (the contract checks each), a new
nonce. The contract records the reopening (`reopened_questions(original)`), moves the
original's bounty to it, and lets a reopening that was itself settled too soon be
replaced by reopening the original again (never the reopening itself).

`reopen_question` sends it once per (original, reopening it replaces), keyed
`reality-reopen:<chain id>:<contract>:<original>:<replaced>`, with a nonce derived from
both (so a crash and a retry ask the same question) and no value: it costs gas only.
`reopened_as` reads which question currently stands in for a question (None: none).
"""

from __future__ import annotations

from eth_utils.crypto import keccak

from oracle.chain.intents import Intent, IntentState
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.errors import TxError
from oracle.venues.reality.binding import RealityETH, question_bytes
from oracle.venues.reality.rules import NULL_HASH

REOPEN_PREFIX = "reality-reopen:"


async def reopened_as(reality: RealityETH, qid: bytes | str) -> bytes | None:
    """The question that reopened `qid` last (`reopened_questions`), or None (always on a
    contract that cannot reopen)."""
    if not reality.reopenable:
        return None
    reopening = bytes(await reality.read("reopened_questions", question_bytes(qid)))
    return None if reopening == NULL_HASH else reopening


async def reopen_question(
    manager: TxManager,
    reality: RealityETH,
    *,
    original: bytes | str,
    template_id: int,
    text: str,
    arbitrator: str,
    timeout: int,
    opening_ts: int,
    min_bond: int,
) -> bytes:
    """Reopen `original` (settled too soon), once; the id of the question that stands in
    for it now (ours, or one someone else opened meanwhile)."""
    first = question_bytes(original)
    replaced = await reopened_as(reality, first) or NULL_HASH
    nonce = int.from_bytes(keccak(b"oracle-reopen" + first + replaced), "big")
    reopening = reality.derived_id(
        template_id=template_id,
        opening_ts=opening_ts,
        text=text,
        arbitrator=arbitrator,
        timeout=timeout,
        min_bond=min_bond,
        asker=manager.address,
        nonce=nonce,
    )
    key = (
        f"{REOPEN_PREFIX}{manager.chain_id}:{reality.address.lower()}:0x{first.hex()}:"
        f"0x{replaced.hex()}"
    )

    async def done() -> bool:
        return (await reopened_as(reality, first) or NULL_HASH) != replaced

    intent = await manager.submit(
        TxRequest(
            key=key,
            to=reality.address,
            data=reality.encode(
                "reopenQuestion",
                template_id,
                text,
                arbitrator,
                timeout,
                opening_ts,
                nonce,
                min_bond,
                first,
            ),
            already_done=done,
            subjects=(key,),
        )
    )
    if intent.state not in (IntentState.CONFIRMED, IntentState.SKIPPED):
        raise TxError(f"{key}: ended {intent.state.value}: {intent.error}")
    standing = await reopened_as(reality, first)
    return standing if standing is not None else reopening


def register_reopen_check(manager: TxManager, contract: str) -> None:
    """The pre-send check of reopenings on `contract` found in the store after a restart:
    done once the original's reopening is no longer the one the intent replaces."""

    async def done(intent: Intent) -> bool:
        original, replaced = intent.key.rsplit(":", 2)[1:]
        reality = RealityETH(manager.pool, intent.to or "")
        standing = await reopened_as(reality, original) or NULL_HASH
        return standing != bytes.fromhex(replaced[2:])

    manager.register_precheck(REOPEN_PREFIX, done, contract=contract)
