// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IAgentOracle} from "../interfaces/IAgentOracle.sol";

/// @title QuestionLib
/// @notice The whole state of a question packed into one storage word, so that a request writes one fresh slot and
/// a proposal rewrites that same slot.
/// @dev Bit layout (bit 0 = least significant):
///
/// | bits     | field       | meaning                                                                         |
/// |----------|-------------|---------------------------------------------------------------------------------|
/// | 0..2     | status      | stored status: 1 Requested, 2 Proposed, 3 Disputed, 4 Final, 5 Flagged          |
/// | 3        | settled     | `settle` delivered the result (its callback succeeded, or there is none)        |
/// | 4..7     | round       | 0..15, incremented when the arbiter reopens the question                        |
/// | 8..15    | maxOutcome  | outcomeCount - 1 (1..255)                                                       |
/// | 16..31   | outcome     | proposed / final outcome index, 65535 = INVALID                                 |
/// | 32..39   | proposer    | reporter id of the proposer (0 = none / arbiter / owner)                        |
/// | 40..63   | liveness    | challenge window in seconds (< 2^24)                                            |
/// | 64..95   | time        | Requested: earliest time; Proposed/Disputed: deadline; Final: finalized at      |
/// | 96..255  | proofHash   | bytes20(sha256(proof)); the word's top 20 bytes                                 |
///
/// A stored `Proposed` whose deadline has passed is reported as `Final` (finality by time).
/// Every writer of the time field reverts `TimeOverflow` for a time that does not fit its 32 bits, which would
/// otherwise spill into the proof hash above it.
library QuestionLib {
    uint256 internal constant REQUESTED = 1;
    uint256 internal constant PROPOSED = 2;
    uint256 internal constant DISPUTED = 3;
    uint256 internal constant FINAL = 4;
    uint256 internal constant FLAGGED = 5;

    uint256 internal constant STATUS_MASK = 0x7;
    uint256 internal constant SETTLED_BIT = 1 << 3;
    uint256 internal constant ROUND_SHIFT = 4;
    uint256 internal constant MAX_OUTCOME_SHIFT = 8;
    uint256 internal constant OUTCOME_SHIFT = 16;
    uint256 internal constant PROPOSER_SHIFT = 32;
    uint256 internal constant LIVENESS_SHIFT = 40;
    uint256 internal constant TIME_SHIFT = 64;
    uint256 internal constant HASH_SHIFT = 96;

    /// @dev Bits kept across proposals and rulings: round, maxOutcome, liveness.
    uint256 internal constant KEEP_MASK =
        (0xf << ROUND_SHIFT) | (0xff << MAX_OUTCOME_SHIFT) | (0xffffff << LIVENESS_SHIFT);
    uint256 internal constant TIME_MASK = uint256(0xffffffff) << TIME_SHIFT;

    uint16 internal constant INVALID_OUTCOME = type(uint16).max;
    uint256 internal constant MAX_ROUND = 15;

    /// @notice The question id: `keccak256(abi.encode(requester, textHash, outcomeCount, earliestTime, liveness,
    /// callback, salt))`. The requester is part of it, so nobody can take another requester's id.
    function questionId(
        address requester,
        bytes32 textHash,
        uint16 count,
        uint32 earliest,
        uint32 window,
        address callback,
        bytes32 salt
    ) internal pure returns (bytes32 id) {
        id = keccak256(abi.encode(requester, textHash, count, earliest, window, callback, salt));
    }

    /// @notice The word written by a request.
    function requested(uint256 count, uint256 window, uint256 earliest) internal pure returns (uint256) {
        return REQUESTED | ((count - 1) << MAX_OUTCOME_SHIFT) | (window << LIVENESS_SHIFT) | (earliest << TIME_SHIFT);
    }

    /// @notice The word after a proposal (status Proposed, time = deadline).
    function proposed(uint256 w, uint256 answer, uint256 reporterId, uint256 deadline, bytes20 hash)
        internal
        pure
        returns (uint256)
    {
        checkTime(deadline);
        return (w & KEEP_MASK) | PROPOSED | (answer << OUTCOME_SHIFT) | (reporterId << PROPOSER_SHIFT)
            | (deadline << TIME_SHIFT) | uint256(bytes32(hash));
    }

    /// @notice The word after an arbiter or manual resolution with a new outcome (proposer and hash cleared).
    function resolved(uint256 w, uint256 answer, uint256 finalizedAt) internal pure returns (uint256) {
        checkTime(finalizedAt);
        return (w & KEEP_MASK) | FINAL | (answer << OUTCOME_SHIFT) | (finalizedAt << TIME_SHIFT);
    }

    /// @notice The word after the arbiter reopened the question: Requested in the next round, no earliest time.
    function reopened(uint256 w) internal pure returns (uint256) {
        return ((w & KEEP_MASK) + (1 << ROUND_SHIFT)) | REQUESTED;
    }

    /// @notice Replaces the stored status.
    function withStatus(uint256 w, uint256 s) internal pure returns (uint256) {
        return (w & ~STATUS_MASK) | s;
    }

    /// @notice Replaces the time field.
    function withTime(uint256 w, uint256 t) internal pure returns (uint256) {
        checkTime(t);
        return (w & ~TIME_MASK) | (t << TIME_SHIFT);
    }

    /// @notice Reverts unless `t` fits a `uint32` time field.
    function checkTime(uint256 t) internal pure {
        if (t > type(uint32).max) revert IAgentOracle.TimeOverflow(t);
    }

    /// @notice The stored status code (0 = none).
    function rawStatus(uint256 w) internal pure returns (uint256) {
        return w & STATUS_MASK;
    }

    /// @notice The status at time `now_`, with finality by time applied.
    function status(uint256 w, uint256 now_) internal pure returns (IAgentOracle.Status) {
        uint256 s = w & STATUS_MASK;
        if (s == PROPOSED && now_ >= time(w)) return IAgentOracle.Status.Final;
        return IAgentOracle.Status(s);
    }

    /// @notice Whether `settle` has delivered the result.
    function settled(uint256 w) internal pure returns (bool) {
        return w & SETTLED_BIT != 0;
    }

    /// @notice The round.
    function round(uint256 w) internal pure returns (uint8) {
        return uint8((w >> ROUND_SHIFT) & 0xf);
    }

    /// @notice Number of outcomes.
    function outcomeCount(uint256 w) internal pure returns (uint16) {
        return uint16(((w >> MAX_OUTCOME_SHIFT) & 0xff) + 1);
    }

    /// @notice The outcome.
    function outcome(uint256 w) internal pure returns (uint16) {
        return uint16(w >> OUTCOME_SHIFT);
    }

    /// @notice The proposer's reporter id.
    function proposerId(uint256 w) internal pure returns (uint8) {
        return uint8(w >> PROPOSER_SHIFT);
    }

    /// @notice The liveness.
    function liveness(uint256 w) internal pure returns (uint32) {
        return uint32((w >> LIVENESS_SHIFT) & 0xffffff);
    }

    /// @notice The time field.
    function time(uint256 w) internal pure returns (uint32) {
        return uint32(w >> TIME_SHIFT);
    }

    /// @notice The proof hash.
    function proofHash(uint256 w) internal pure returns (bytes20) {
        return bytes20(bytes32(w));
    }

    /// @notice Whether `o` is a valid outcome for the question: an index below the outcome count, or INVALID.
    function isValidOutcome(uint256 w, uint256 o) internal pure returns (bool) {
        return o <= (w >> MAX_OUTCOME_SHIFT) & 0xff || o == INVALID_OUTCOME;
    }
}
