"""The claim the oracle asserts on UMA's Optimistic Oracle V3: one sentence a disputer can
read and check, naming the market, the answer and the proof's checksum (so the proof is
reachable from the chain: `oracle proof verify`, or `verifier/verify-proof.mjs`).

Pure. The question comes from outside (a venue, a market creator): control characters and
runs of whitespace become one space, double quotes become single ones (the claim quotes
it), and it is cut at `MAX_QUESTION_CHARS`, so a claim's size stays bounded.
"""

from __future__ import annotations

import re
import unicodedata

MAX_QUESTION_CHARS = 500
_CHECKSUM = re.compile(r"^[0-9a-f]{64}$")
_MARKET_ID = re.compile(r"^[A-Za-z0-9._:/-]{1,200}$")
_OUTCOME = re.compile(r"^[^\x00-\x1f\x7f]{1,100}$")


def _plain(text: str) -> str:
    kept = "".join(
        " " if unicodedata.category(char)[0] in "CZ" else char
        for char in unicodedata.normalize("NFC", text)
    )
    return " ".join(kept.replace('"', "'").split())


def assertion_claim(*, market_id: str, question: str, outcome: str, proof_checksum: str) -> bytes:
    """The claim's UTF-8 bytes; ValueError naming the argument that cannot be used."""
    if not _MARKET_ID.fullmatch(market_id):
        raise ValueError("market_id: 1 to 200 letters, digits or ._:/-")
    if not _OUTCOME.fullmatch(outcome) or not outcome.strip():
        raise ValueError("outcome: 1 to 100 printable characters")
    checksum = proof_checksum.removeprefix("0x").lower()
    if not _CHECKSUM.fullmatch(checksum):
        raise ValueError("proof_checksum: expected 64 hex digits (a SHA-256)")
    shown = _plain(question)
    if not shown:
        raise ValueError("question: empty once control characters are removed")
    if len(shown) > MAX_QUESTION_CHARS:
        shown = shown[: MAX_QUESTION_CHARS - 1].rstrip() + "…"
    return (
        f'The answer to "{shown}" (market {market_id}) is {_plain(outcome)}. '
        f"Proof: sha256:{checksum}."
    ).encode()


MAX_CLAIM_BYTES = 8192  # of someone else's claim read at all
MAX_SHOWN_CLAIM_CHARS = 2000


def read_claim(raw: bytes) -> str:
    """Someone else's claim as one bounded line of text for research and review: at most
    `MAX_CLAIM_BYTES` read, invalid UTF-8 replaced, control characters and runs of
    whitespace made one space, cut at `MAX_SHOWN_CLAIM_CHARS`. ValueError when nothing
    readable is left. Never raises on content otherwise: claims are anyone's bytes."""
    text = _plain(raw[:MAX_CLAIM_BYTES].decode("utf-8", errors="replace"))
    if not text.strip("\ufffd "):
        raise ValueError("claim: no readable text")
    if len(text) > MAX_SHOWN_CLAIM_CHARS:
        text = text[: MAX_SHOWN_CLAIM_CHARS - 1].rstrip() + "…"
    return text
