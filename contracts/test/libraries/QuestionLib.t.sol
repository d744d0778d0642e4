// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "forge-std/Test.sol";
import {QuestionLib} from "../../src/libraries/QuestionLib.sol";
import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";

/// @dev External entry points, so that a library revert can be expected.
contract QuestionLibHarness {
    using QuestionLib for uint256;

    function proposed(uint256 w, uint256 deadline) external pure returns (uint256) {
        return w.proposed(0, 1, deadline, bytes20(uint160(1)));
    }

    function resolved(uint256 w, uint256 at) external pure returns (uint256) {
        return w.resolved(0, at);
    }

    function withTime(uint256 w, uint256 t) external pure returns (uint256) {
        return w.withTime(t);
    }
}

contract QuestionLibTest is Test {
    using QuestionLib for uint256;

    QuestionLibHarness internal harness = new QuestionLibHarness();

    function testFuzz_Requested_RoundTrips(uint16 count, uint24 liveness, uint32 earliest) public pure {
        count = uint16(bound(count, 2, 256));
        uint256 w = QuestionLib.requested(count, liveness, earliest);
        assertEq(w.rawStatus(), QuestionLib.REQUESTED);
        assertEq(w.outcomeCount(), count);
        assertEq(w.liveness(), liveness);
        assertEq(w.time(), earliest);
        assertEq(w.round(), 0);
        assertFalse(w.settled());
        assertEq(w.outcome(), 0);
        assertEq(w.proposerId(), 0);
        assertEq(w.proofHash(), bytes20(0));
        assertTrue(w != 0, "a request is never the zero word");
    }

    function testFuzz_Proposed_KeepsRequestFields(
        uint16 count,
        uint24 liveness,
        uint32 earliest,
        uint16 outcome,
        uint8 reporterId,
        uint32 deadline,
        bytes20 hash
    ) public pure {
        count = uint16(bound(count, 2, 256));
        uint256 w = QuestionLib.requested(count, liveness, earliest).reopened(); // round 1
        uint256 p = w.proposed(outcome, reporterId, deadline, hash);
        assertEq(p.rawStatus(), QuestionLib.PROPOSED);
        assertEq(p.outcomeCount(), count);
        assertEq(p.liveness(), liveness);
        assertEq(p.round(), 1);
        assertEq(p.outcome(), outcome);
        assertEq(p.proposerId(), reporterId);
        assertEq(p.time(), deadline);
        assertEq(p.proofHash(), hash);
        assertFalse(p.settled());
    }

    function testFuzz_Resolved(uint256 w, uint16 outcome, uint32 at) public pure {
        uint256 r = w.resolved(outcome, at);
        assertEq(r.rawStatus(), QuestionLib.FINAL);
        assertEq(r.outcome(), outcome);
        assertEq(r.time(), at);
        assertEq(r.proposerId(), 0);
        assertEq(r.proofHash(), bytes20(0));
        assertEq(r.round(), w.round());
        assertEq(r.outcomeCount(), w.outcomeCount());
        assertEq(r.liveness(), w.liveness());
    }

    function testFuzz_Reopened_IncrementsRound(uint16 count, uint8 rounds) public pure {
        rounds = uint8(bound(rounds, 0, 15));
        uint256 w = QuestionLib.requested(bound(count, 2, 256), 100, 5);
        for (uint256 i; i < rounds; ++i) {
            w = w.proposed(1, 1, 1, bytes20(uint160(1))).reopened();
        }
        assertEq(w.round(), rounds);
        assertEq(w.rawStatus(), QuestionLib.REQUESTED);
        assertEq(w.time(), rounds == 0 ? 5 : 0);
        assertEq(w.liveness(), 100);
    }

    function testFuzz_Status_FinalityByTime(uint32 deadline, uint32 now_) public pure {
        uint256 w = QuestionLib.requested(2, 1, 0).proposed(0, 1, deadline, bytes20(0));
        IAgentOracle.Status s = w.status(now_);
        if (now_ >= deadline) assertEq(uint8(s), uint8(IAgentOracle.Status.Final));
        else assertEq(uint8(s), uint8(IAgentOracle.Status.Proposed));
    }

    function testFuzz_WithStatusAndTime(uint256 w, uint8 s, uint32 t) public pure {
        s = uint8(bound(s, 0, 7));
        uint256 x = w.withStatus(s).withTime(t);
        assertEq(x.rawStatus(), s);
        assertEq(x.time(), t);
        assertEq(x >> 96, w >> 96, "hash untouched");
        assertEq(x & 0xfffffffffffffff8, w & 0xfffffffffffffff8, "low fields untouched");
    }

    function testFuzz_IsValidOutcome(uint16 count, uint16 outcome) public pure {
        count = uint16(bound(count, 2, 256));
        uint256 w = QuestionLib.requested(count, 1, 0);
        assertEq(w.isValidOutcome(outcome), outcome < count || outcome == 65535);
    }

    function testFuzz_QuestionId_IsAbiEncodeHash(
        address r,
        bytes32 t,
        uint16 c,
        uint32 e,
        uint32 l,
        address cb,
        bytes32 s
    ) public pure {
        assertEq(QuestionLib.questionId(r, t, c, e, l, cb, s), keccak256(abi.encode(r, t, c, e, l, cb, s)));
    }

    function test_SettledBit() public pure {
        uint256 w = QuestionLib.requested(2, 1, 0) | QuestionLib.SETTLED_BIT;
        assertTrue(w.settled());
        assertEq(w.rawStatus(), QuestionLib.REQUESTED);
    }

    /// @dev A time at or above 2^32 would spill into the proof hash above the time field.
    function testFuzz_RevertWhen_TimeDoesNotFit(uint256 t, bytes20 hash) public {
        t = bound(t, uint256(type(uint32).max) + 1, type(uint256).max >> 96);
        uint256 w = QuestionLib.requested(2, 100, 5).proposed(0, 1, 7, hash);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, t));
        harness.proposed(w, t);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, t));
        harness.resolved(w, t);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, t));
        harness.withTime(w, t);
    }

    function test_TimeFieldTakesUint32Max() public view {
        uint256 w = QuestionLib.requested(2, 100, 5);
        assertEq(harness.proposed(w, type(uint32).max).time(), type(uint32).max);
        assertEq(harness.resolved(w, type(uint32).max).time(), type(uint32).max);
        assertEq(harness.withTime(w, type(uint32).max).time(), type(uint32).max);
    }
}
