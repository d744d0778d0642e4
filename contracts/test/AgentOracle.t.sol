// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {OracleBase} from "./utils/OracleBase.sol";
import {AgentOracle} from "../src/AgentOracle.sol";
import {IAgentOracle} from "../src/interfaces/IAgentOracle.sol";
import {QuestionLib} from "../src/libraries/QuestionLib.sol";
import {MockConsumer, EthRejecter, GasHungryConsumer} from "./mocks/MockConsumer.sol";
import {Vm} from "forge-std/Vm.sol";

/// @notice Requests, proposals, finality by time, settlement, withdrawals and views.
contract AgentOracleTest is OracleBase {
    // ---------------------------------------------------------------------------------------------------------
    // constructor
    // ---------------------------------------------------------------------------------------------------------

    function test_Constructor_SetsConfigAndEmits() public {
        vm.expectEmit();
        emit IAgentOracle.OwnershipTransferred(address(0), owner);
        AgentOracle o = new AgentOracle(owner, treasury, address(token), 5, 10 minutes);
        assertEq(o.owner(), owner);
        assertEq(o.treasury(), treasury);
        (address t, uint96 a) = o.bond();
        assertEq(t, address(token));
        assertEq(a, 5);
        (bool paused, uint8 k, uint8 n, uint32 minL, uint32 cbGas, uint32 safety) = o.config();
        assertFalse(paused);
        assertEq(k, 0);
        assertEq(n, 0);
        assertEq(minL, 10 minutes);
        assertEq(cbGas, 500_000);
        assertEq(safety, 2 days);
        assertEq(o.INVALID_OUTCOME(), 65535);
        assertEq(o.MAX_LIVENESS(), 90 days);
    }

    function test_RevertWhen_ConstructorOwnerIsZero() public {
        vm.expectRevert(IAgentOracle.ZeroAddress.selector);
        new AgentOracle(address(0), treasury, address(0), BOND, MIN_LIVENESS);
    }

    function test_RevertWhen_ConstructorTreasuryIsZero() public {
        vm.expectRevert(IAgentOracle.ZeroAddress.selector);
        new AgentOracle(owner, address(0), address(0), BOND, MIN_LIVENESS);
    }

    function test_RevertWhen_ConstructorTreasuryIsTheOracle() public {
        address next = vm.computeCreateAddress(address(this), vm.getNonce(address(this)));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidTreasury.selector, next));
        new AgentOracle(owner, next, address(0), BOND, MIN_LIVENESS);
    }

    function test_RevertWhen_ConstructorMinLivenessTooLong() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.ValueOutOfRange.selector, 90 days + 1, 30, 90 days));
        new AgentOracle(owner, treasury, address(0), BOND, 90 days + 1);
    }

    function test_RevertWhen_ConstructorMinLivenessZero() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.ValueOutOfRange.selector, 0, 30, 90 days));
        new AgentOracle(owner, treasury, address(0), BOND, 0);
    }

    function test_RevertWhen_ConstructorBondZero() public {
        vm.expectRevert(IAgentOracle.ZeroBond.selector);
        new AgentOracle(owner, treasury, address(0), 0, MIN_LIVENESS);
    }

    function test_RevertWhen_ConstructorBondTokenHasNoCode() public {
        address notAToken = makeAddr("notAToken");
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidBondToken.selector, notAToken));
        new AgentOracle(owner, treasury, notAToken, BOND, MIN_LIVENESS);
    }

    // ---------------------------------------------------------------------------------------------------------
    // request
    // ---------------------------------------------------------------------------------------------------------

    function test_Request_StoresAndEmits() public {
        bytes32 expected =
            oracle.questionIdOf(requester, keccak256(TEXT), 3, T0 + 100, LIVENESS, address(0), bytes32("s"));
        vm.expectEmit(address(oracle));
        emit IAgentOracle.QuestionRequested(expected, requester, 3, T0 + 100, LIVENESS, TEXT);
        vm.prank(requester);
        bytes32 id = oracle.request(TEXT, 3, T0 + 100, LIVENESS, address(0), bytes32("s"));
        assertEq(id, expected);
        IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
        assertEq(q.status, IAgentOracle.Status.Requested);
        assertEq(q.outcomeCount, 3);
        assertEq(q.earliestTime, T0 + 100);
        assertEq(q.liveness, LIVENESS);
        assertEq(q.round, 0);
        assertEq(q.callback, address(0));
        assertEq(q.proposer, address(0));
        assertEq(q.deadline, 0);
        assertEq(q.finalizedAt, 0);
    }

    function test_Request_StoresCallback() public {
        address cb = makeAddr("cb");
        bytes32 id = _askWith(2, 0, LIVENESS, cb);
        assertEq(oracle.getQuestion(id).callback, cb);
    }

    function test_Request_WorksWhilePaused() public {
        vm.prank(pauser);
        oracle.pause();
        bytes32 id = _ask();
        assertEq(_status(id), IAgentOracle.Status.Requested);
    }

    function test_Request_SameParamsDifferentRequestersDoNotCollide() public {
        bytes32 a = _ask();
        vm.prank(stranger);
        bytes32 b = oracle.request(TEXT, 2, 0, LIVENESS, address(0), bytes32(0));
        assertTrue(a != b);
    }

    function test_Request_Accepts256Outcomes() public {
        bytes32 id = _askWith(256, 0, LIVENESS, address(0));
        assertEq(oracle.getQuestion(id).outcomeCount, 256);
        _propose(id, 255);
        assertEq(oracle.getQuestion(id).outcome, 255);
    }

    function test_Request_LivenessBelowMinimumIsRaisedAtProposal() public {
        bytes32 id = _askWith(2, 0, 30, address(0));
        _propose(id, 0);
        assertEq(oracle.getQuestion(id).deadline, T0 + MIN_LIVENESS);
    }

    function testFuzz_Request_IdMatchesLibraryAndView(
        address who,
        bytes calldata text,
        uint16 outcomes,
        uint32 earliest,
        uint32 liveness,
        address callback,
        bytes32 salt
    ) public {
        vm.assume(text.length > 0);
        outcomes = uint16(bound(outcomes, 2, 256));
        liveness = uint32(bound(liveness, 30, 90 days));
        vm.recordLogs();
        vm.prank(who);
        bytes32 id = oracle.request(text, outcomes, earliest, liveness, callback, salt);
        assertEq(id, QuestionLib.questionId(who, keccak256(text), outcomes, earliest, liveness, callback, salt));
        assertEq(id, oracle.questionIdOf(who, keccak256(text), outcomes, earliest, liveness, callback, salt));
        // The hand-encoded event decodes like the declared one.
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(logs.length, 1);
        assertEq(logs[0].topics[0], IAgentOracle.QuestionRequested.selector);
        assertEq(logs[0].topics[1], id);
        assertEq(logs[0].topics[2], bytes32(uint256(uint160(who))));
        assertEq(logs[0].data, abi.encode(outcomes, earliest, liveness, text), "event data must equal abi.encode");
        IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
        assertEq(q.outcomeCount, outcomes);
        assertEq(q.earliestTime, earliest);
        assertEq(q.liveness, liveness);
        assertEq(q.callback, callback);
    }

    function test_RevertWhen_RequestTextEmpty() public {
        vm.expectRevert(IAgentOracle.EmptyText.selector);
        oracle.request("", 2, 0, LIVENESS, address(0), bytes32(0));
    }

    function test_RevertWhen_RequestOutcomeCountBelowTwo() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidOutcomeCount.selector, 1));
        oracle.request(TEXT, 1, 0, LIVENESS, address(0), bytes32(0));
    }

    function test_RevertWhen_RequestOutcomeCountAbove256() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidOutcomeCount.selector, 257));
        oracle.request(TEXT, 257, 0, LIVENESS, address(0), bytes32(0));
    }

    function testFuzz_RevertWhen_RequestOutcomeCountOutOfRange(uint16 outcomes) public {
        vm.assume(outcomes < 2 || outcomes > 256);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidOutcomeCount.selector, outcomes));
        oracle.request(TEXT, outcomes, 0, LIVENESS, address(0), bytes32(0));
    }

    function test_RevertWhen_RequestLivenessAboveMax() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidLiveness.selector, 90 days + 1, 30, 90 days));
        oracle.request(TEXT, 2, 0, 90 days + 1, address(0), bytes32(0));
    }

    function test_RevertWhen_RequestLivenessZero() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidLiveness.selector, 0, 30, 90 days));
        oracle.request(TEXT, 2, 0, 0, address(0), bytes32(0));
    }

    function testFuzz_RevertWhen_RequestLivenessOutOfRange(uint32 liveness) public {
        vm.assume(liveness < 30 || liveness > 90 days);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidLiveness.selector, liveness, 30, 90 days));
        oracle.request(TEXT, 2, 0, liveness, address(0), bytes32(0));
    }

    /// @dev Even the shortest allowed request leaves a window after the proposal's block: a dispute one block
    /// (12 seconds) later still lands.
    function test_Request_ShortestLivenessIsStillDisputable() public {
        vm.prank(owner);
        oracle.setMinLiveness(30);
        bytes32 id = _askWith(2, 0, 30, address(0));
        _propose(id, 0);
        vm.warp(T0 + 12);
        _disputeEth(id);
        assertEq(_status(id), IAgentOracle.Status.Disputed);
    }

    function test_RevertWhen_RequestQuestionExists() public {
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.QuestionExists.selector, id));
        _ask();
    }

    // ---------------------------------------------------------------------------------------------------------
    // propose
    // ---------------------------------------------------------------------------------------------------------

    function test_Propose_RecordsAndEmits() public {
        bytes32 id = _ask();
        vm.expectEmit(address(oracle));
        emit IAgentOracle.AnswerProposed(id, reporter, 1, PROOF, T0 + LIVENESS);
        _propose(id, 1);
        IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
        assertEq(q.status, IAgentOracle.Status.Proposed);
        assertEq(q.outcome, 1);
        assertEq(q.proposer, reporter);
        assertEq(q.proofHash, PROOF);
        assertEq(q.deadline, T0 + LIVENESS);
        assertEq(q.finalizedAt, 0);
        assertEq(q.earliestTime, 0);
    }

    function test_Propose_ByNonPrimaryReporter() public {
        bytes32 id = _ask();
        vm.prank(reporter2);
        oracle.propose(id, 0, PROOF);
        assertEq(oracle.getQuestion(id).proposer, reporter2);
    }

    function test_Propose_Invalid() public {
        bytes32 id = _askAndPropose(INVALID);
        vm.warp(T0 + LIVENESS);
        (uint16 outcome,,) = _final(id);
        assertEq(outcome, INVALID);
    }

    function test_Propose_AtEarliestTime() public {
        bytes32 id = _askWith(2, T0 + 1 days, LIVENESS, address(0));
        vm.warp(T0 + 1 days);
        _propose(id, 0);
        assertEq(_status(id), IAgentOracle.Status.Proposed);
    }

    function testFuzz_Propose_ValidOutcomes(uint16 outcomes, uint16 outcome) public {
        outcomes = uint16(bound(outcomes, 2, 256));
        vm.assume(outcome < outcomes || outcome == INVALID);
        bytes32 id = _askWith(outcomes, 0, LIVENESS, address(0));
        _propose(id, outcome);
        assertEq(oracle.getQuestion(id).outcome, outcome);
    }

    function testFuzz_RevertWhen_ProposeOutcomeOutOfRange(uint16 outcomes, uint16 outcome) public {
        outcomes = uint16(bound(outcomes, 2, 256));
        vm.assume(outcome >= outcomes && outcome != INVALID);
        bytes32 id = _askWith(outcomes, 0, LIVENESS, address(0));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidOutcome.selector, id, outcome));
        _propose(id, outcome);
    }

    function testFuzz_Propose_EarliestTime(uint32 earliest, uint32 at) public {
        earliest = uint32(bound(earliest, T0, T0 + 365 days));
        at = uint32(bound(at, T0, T0 + 400 days));
        bytes32 id = _askWith(2, earliest, LIVENESS, address(0));
        vm.warp(at);
        if (at < earliest) {
            vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TooEarly.selector, id, earliest));
        }
        _propose(id, 0);
    }

    function test_RevertWhen_ProposePaused() public {
        bytes32 id = _ask();
        vm.prank(pauser);
        oracle.pause();
        vm.expectRevert(IAgentOracle.ContractPaused.selector);
        _propose(id, 0);
    }

    function test_RevertWhen_ProposeInMultiOperatorMode() public {
        bytes32 id = _ask();
        vm.startPrank(owner);
        oracle.grantRole(makeAddr("op"), IAgentOracle.Role.Operator);
        oracle.setThreshold(1);
        vm.stopPrank();
        vm.expectRevert(IAgentOracle.SignaturesRequired.selector);
        _propose(id, 0);
    }

    function test_RevertWhen_ProposeCallerNotReporter() public {
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.MissingRole.selector, stranger, IAgentOracle.Role.Reporter));
        vm.prank(stranger);
        oracle.propose(id, 0, PROOF);
    }

    function test_RevertWhen_ProposeCallerIsRevokedPrimaryReporter() public {
        bytes32 id = _ask();
        vm.prank(owner);
        oracle.revokeRole(reporter, IAgentOracle.Role.Reporter);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.MissingRole.selector, reporter, IAgentOracle.Role.Reporter));
        _propose(id, 0);
    }

    function test_RevertWhen_ProposeUnknownQuestion() public {
        vm.expectRevert(
            abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, bytes32("nope"), IAgentOracle.Status.None)
        );
        _propose(bytes32("nope"), 0);
    }

    function test_RevertWhen_ProposeTwice() public {
        bytes32 id = _askAndPropose(0);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Proposed));
        _propose(id, 1);
    }

    function test_RevertWhen_ProposeAfterFinal() public {
        bytes32 id = _askAndPropose(0);
        vm.warp(T0 + LIVENESS);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Final));
        _propose(id, 1);
    }

    function test_RevertWhen_ProposeTooEarly() public {
        bytes32 id = _askWith(2, T0 + 1, LIVENESS, address(0));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TooEarly.selector, id, T0 + 1));
        _propose(id, 0);
    }

    function test_RevertWhen_ProposeInvalidOutcome() public {
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidOutcome.selector, id, 2));
        _propose(id, 2);
    }

    /// @dev The review's finding: near 2^32 the deadline's overflow bit landed in the stored proof hash.
    function test_RevertWhen_ProposeDeadlineBeyondUint32() public {
        uint256 start = uint256(type(uint32).max) - 1 hours;
        vm.warp(start);
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, start + LIVENESS));
        _propose(id, 0);
        assertEq(_status(id), IAgentOracle.Status.Requested);
    }

    function testFuzz_Propose_DeadlineFitsOrReverts(uint32 liveness, uint256 at) public {
        liveness = uint32(bound(liveness, MIN_LIVENESS, 90 days));
        at = bound(at, uint256(type(uint32).max) - 100 days, uint256(type(uint32).max));
        vm.warp(at);
        bytes32 id = _askWith(2, 0, liveness, address(0));
        if (at + liveness > type(uint32).max) {
            vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, at + liveness));
            _propose(id, 0);
        } else {
            _propose(id, 0);
            IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
            assertEq(q.deadline, at + liveness);
            assertEq(q.proofHash, PROOF);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // proposeBatch
    // ---------------------------------------------------------------------------------------------------------

    function _batch(uint256 n) internal returns (IAgentOracle.ProposalInput[] memory ps) {
        ps = new IAgentOracle.ProposalInput[](n);
        for (uint256 i; i < n; ++i) {
            ps[i] = IAgentOracle.ProposalInput(_ask(bytes32(i)), uint16(i % 2), bytes20(keccak256(abi.encode(i))));
        }
    }

    function test_ProposeBatch_ProposesAll() public {
        IAgentOracle.ProposalInput[] memory ps = _batch(5);
        vm.prank(reporter);
        oracle.proposeBatch(ps);
        for (uint256 i; i < 5; ++i) {
            IAgentOracle.QuestionView memory q = oracle.getQuestion(ps[i].questionId);
            assertEq(q.status, IAgentOracle.Status.Proposed);
            assertEq(q.outcome, ps[i].outcome);
            assertEq(q.proofHash, ps[i].proofHash);
        }
    }

    function test_RevertWhen_ProposeBatchEmpty() public {
        vm.expectRevert(IAgentOracle.EmptyBatch.selector);
        vm.prank(reporter);
        oracle.proposeBatch(new IAgentOracle.ProposalInput[](0));
    }

    function test_RevertWhen_ProposeBatchHasDuplicate() public {
        IAgentOracle.ProposalInput[] memory ps = _batch(3);
        ps[2] = ps[0];
        vm.expectRevert(
            abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, ps[0].questionId, IAgentOracle.Status.Proposed)
        );
        vm.prank(reporter);
        oracle.proposeBatch(ps);
        // all or nothing
        assertEq(_status(ps[1].questionId), IAgentOracle.Status.Requested);
    }

    function test_RevertWhen_ProposeBatchCallerNotReporter() public {
        IAgentOracle.ProposalInput[] memory ps = _batch(1);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.MissingRole.selector, stranger, IAgentOracle.Role.Reporter));
        vm.prank(stranger);
        oracle.proposeBatch(ps);
    }

    function test_RevertWhen_ProposeBatchPaused() public {
        IAgentOracle.ProposalInput[] memory ps = _batch(1);
        vm.prank(owner);
        oracle.pause();
        vm.expectRevert(IAgentOracle.ContractPaused.selector);
        vm.prank(reporter);
        oracle.proposeBatch(ps);
    }

    function test_RevertWhen_ProposeBatchInMultiOperatorMode() public {
        IAgentOracle.ProposalInput[] memory ps = _batch(1);
        vm.startPrank(owner);
        oracle.grantRole(makeAddr("op"), IAgentOracle.Role.Operator);
        oracle.setThreshold(1);
        vm.stopPrank();
        vm.expectRevert(IAgentOracle.SignaturesRequired.selector);
        vm.prank(reporter);
        oracle.proposeBatch(ps);
    }

    // ---------------------------------------------------------------------------------------------------------
    // finality by time
    // ---------------------------------------------------------------------------------------------------------

    function testFuzz_FinalityByTime(uint32 elapsed) public {
        elapsed = uint32(bound(elapsed, 0, 365 days));
        bytes32 id = _askAndPropose(1);
        vm.warp(T0 + elapsed);
        if (elapsed < LIVENESS) {
            assertEq(_status(id), IAgentOracle.Status.Proposed);
            vm.expectRevert(
                abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Proposed)
            );
            oracle.finalResult(id);
        } else {
            assertEq(_status(id), IAgentOracle.Status.Final);
            (uint16 outcome, bytes20 proofHash, uint32 finalizedAt) = _final(id);
            assertEq(outcome, 1);
            assertEq(proofHash, PROOF);
            assertEq(finalizedAt, T0 + LIVENESS);
            IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
            assertEq(q.finalizedAt, T0 + LIVENESS);
            assertEq(q.proposer, reporter);
        }
    }

    function test_RevertWhen_FinalResultNotFinal() public {
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Requested));
        oracle.finalResult(id);
    }

    function test_RevertWhen_FinalResultUnknown() public {
        vm.expectRevert(
            abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, bytes32(0), IAgentOracle.Status.None)
        );
        oracle.finalResult(bytes32(0));
    }

    // ---------------------------------------------------------------------------------------------------------
    // settle
    // ---------------------------------------------------------------------------------------------------------

    function test_Settle_NoCallback() public {
        bytes32 id = _askAndPropose(0);
        vm.warp(T0 + LIVENESS);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Settled(id, address(0), 0, true);
        vm.prank(stranger);
        oracle.settle(id);
        assertTrue(oracle.getQuestion(id).settled);
        // settling never changes the answer
        (uint16 outcome,, uint32 at) = _final(id);
        assertEq(outcome, 0);
        assertEq(at, T0 + LIVENESS);
    }

    function test_Settle_CallsCallback() public {
        MockConsumer c = new MockConsumer(address(oracle));
        bytes32 id = _askWith(2, 0, LIVENESS, address(c));
        _propose(id, 1);
        vm.warp(T0 + LIVENESS);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Settled(id, address(c), 1, true);
        oracle.settle(id);
        assertEq(c.calls(), 1);
        assertEq(c.lastQuestionId(), id);
        assertEq(c.lastOutcome(), 1);
    }

    function test_Settle_RecordsRevertingCallback() public {
        MockConsumer c = new MockConsumer(address(oracle));
        c.setMode(MockConsumer.Mode.Revert);
        bytes32 id = _askWith(2, 0, LIVENESS, address(c));
        _propose(id, 1);
        vm.warp(T0 + LIVENESS);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Settled(id, address(c), 1, false);
        oracle.settle(id);
        assertFalse(oracle.getQuestion(id).settled, "a failed callback leaves the question open for a retry");
    }

    function test_Settle_RecordsGasBurningCallback() public {
        MockConsumer c = new MockConsumer(address(oracle));
        c.setMode(MockConsumer.Mode.BurnGas);
        bytes32 id = _askWith(2, 0, LIVENESS, address(c));
        _propose(id, 1);
        vm.warp(T0 + LIVENESS);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Settled(id, address(c), 1, false);
        oracle.settle{gas: 1_000_000}(id);
    }

    function test_Settle_RecordsReturnBombCallback() public {
        MockConsumer c = new MockConsumer(address(oracle));
        c.setMode(MockConsumer.Mode.HugeRevert);
        bytes32 id = _askWith(2, 0, LIVENESS, address(c));
        _propose(id, 1);
        vm.warp(T0 + LIVENESS);
        uint256 before = gasleft();
        oracle.settle{gas: 1_000_000}(id);
        assertLt(before - gasleft(), 700_000);
        assertFalse(oracle.getQuestion(id).settled);
    }

    /// @dev The review's finding: a callback that failed once could never be retried.
    function test_Settle_RetriesAFailedCallback() public {
        MockConsumer c = new MockConsumer(address(oracle));
        c.setMode(MockConsumer.Mode.Revert);
        bytes32 id = _askWith(2, 0, LIVENESS, address(c));
        _propose(id, 1);
        vm.warp(T0 + LIVENESS);
        oracle.settle(id);
        c.setMode(MockConsumer.Mode.Succeed);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Settled(id, address(c), 1, true);
        vm.prank(stranger);
        oracle.settle(id);
        assertEq(c.calls(), 1);
        assertEq(c.lastOutcome(), 1);
        assertTrue(oracle.getQuestion(id).settled);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.AlreadySettled.selector, id));
        oracle.settle(id);
    }

    function test_Settle_ReentrantCallbackIsDeliveredOnce() public {
        MockConsumer c = new MockConsumer(address(oracle));
        c.setMode(MockConsumer.Mode.Reenter);
        bytes32 id = _askWith(2, 0, LIVENESS, address(c));
        _propose(id, 0);
        vm.warp(T0 + LIVENESS);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Settled(id, address(c), 0, true);
        oracle.settle(id);
        assertEq(c.calls(), 1);
        assertEq(c.reentryError(), abi.encodeWithSelector(IAgentOracle.AlreadySettled.selector, id));
        assertTrue(oracle.getQuestion(id).settled);
    }

    function test_Settle_ReentrantFailingCallbackCanBeRetried() public {
        MockConsumer c = new MockConsumer(address(oracle));
        c.setMode(MockConsumer.Mode.ReenterThenRevert);
        bytes32 id = _askWith(2, 0, LIVENESS, address(c));
        _propose(id, 0);
        vm.warp(T0 + LIVENESS);
        vm.recordLogs();
        oracle.settle(id);
        assertEq(vm.getRecordedLogs().length, 1, "one Settled(false), none from the nested call");
        assertFalse(oracle.getQuestion(id).settled);
        c.setMode(MockConsumer.Mode.Succeed);
        oracle.settle(id);
        assertEq(c.calls(), 1);
        assertTrue(oracle.getQuestion(id).settled);
    }

    /// @dev A call to an address without code "succeeds" without running anything: that is no delivery, e.g. a
    /// consumer deployed later at a precomputed address.
    function test_Settle_CallbackWithoutCodeIsRetriedOnceDeployed() public {
        address later = vm.computeCreateAddress(address(this), vm.getNonce(address(this)));
        bytes32 id = _askWith(2, 0, LIVENESS, later);
        _propose(id, 1);
        vm.warp(T0 + LIVENESS);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Settled(id, later, 1, false);
        oracle.settle(id);
        assertFalse(oracle.getQuestion(id).settled);
        MockConsumer c = new MockConsumer(address(oracle));
        assertEq(address(c), later);
        oracle.settle(id);
        assertEq(c.calls(), 1);
        assertTrue(oracle.getQuestion(id).settled);
    }

    /// @dev Whatever gas a caller gives, it either reverts or the callback runs with its whole allowance: a retry
    /// cannot be griefed into a failure by starving the callback.
    function testFuzz_Settle_CallbackAlwaysGetsItsAllowance(uint256 gas_) public {
        GasHungryConsumer c = new GasHungryConsumer(450_000); // the default allowance is 500,000
        bytes32 id = _askWith(2, 0, LIVENESS, address(c));
        _propose(id, 0);
        vm.warp(T0 + LIVENESS);
        gas_ = bound(gas_, 400_000, 700_000);
        try oracle.settle{gas: gas_}(id) {
            assertEq(c.calls(), 1, "a settle that returns has delivered");
            assertTrue(oracle.getQuestion(id).settled);
        } catch (bytes memory reason) {
            assertEq(bytes4(reason), IAgentOracle.InsufficientGasForCallback.selector);
            assertFalse(oracle.getQuestion(id).settled);
        }
    }

    function test_Settle_AfterArbiterResolution() public {
        bytes32 id = _askProposeDispute(0);
        vm.prank(arbiter);
        oracle.overturn(id, 1);
        oracle.settle(id);
        assertTrue(oracle.getQuestion(id).settled);
    }

    function test_Settle_WhilePaused() public {
        bytes32 id = _askAndPropose(0);
        vm.prank(owner);
        oracle.pause();
        vm.warp(T0 + LIVENESS);
        oracle.settle(id);
        assertTrue(oracle.getQuestion(id).settled);
    }

    function test_RevertWhen_SettleNotFinal() public {
        bytes32 id = _askAndPropose(0);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Proposed));
        oracle.settle(id);
    }

    function test_RevertWhen_SettleTwice() public {
        bytes32 id = _askAndPropose(0);
        vm.warp(T0 + LIVENESS);
        oracle.settle(id);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.AlreadySettled.selector, id));
        oracle.settle(id);
    }

    function test_RevertWhen_SettleWithTooLittleGasForCallback() public {
        MockConsumer c = new MockConsumer(address(oracle));
        bytes32 id = _askWith(2, 0, LIVENESS, address(c));
        _propose(id, 1);
        vm.warp(T0 + LIVENESS);
        vm.expectPartialRevert(IAgentOracle.InsufficientGasForCallback.selector);
        oracle.settle{gas: 200_000}(id);
        assertFalse(oracle.getQuestion(id).settled);
    }

    // ---------------------------------------------------------------------------------------------------------
    // withdraw
    // ---------------------------------------------------------------------------------------------------------

    function test_Withdraw_PaysCredit() public {
        bytes32 id = _askProposeDispute(0);
        vm.prank(arbiter);
        oracle.reopen(id);
        assertEq(oracle.credits(disputer, address(0)), BOND);
        address payable to = payable(makeAddr("to"));
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Withdrawn(disputer, address(0), to, BOND);
        vm.prank(disputer);
        oracle.withdraw(address(0), to);
        assertEq(to.balance, BOND);
        assertEq(oracle.credits(disputer, address(0)), 0);
        assertEq(address(oracle).balance, 0);
    }

    function test_Withdraw_TokenCredit() public {
        _useTokenBond(7 ether);
        bytes32 id = _askAndPropose(0);
        vm.prank(disputer);
        oracle.dispute(id, address(token), 7 ether);
        vm.prank(arbiter);
        oracle.confirm(id);
        vm.prank(treasury);
        oracle.withdraw(address(token), treasury);
        assertEq(token.balanceOf(treasury), 7 ether);
    }

    function test_Withdraw_TokenReturningNothing() public {
        _useTokenBond(7 ether);
        token.setReturnNothing(true);
        bytes32 id = _askAndPropose(0);
        vm.prank(disputer);
        oracle.dispute(id, address(token), 7 ether);
        vm.prank(arbiter);
        oracle.overturn(id, 1);
        vm.prank(disputer);
        oracle.withdraw(address(token), disputer);
        assertEq(token.balanceOf(disputer), 1000 ether);
    }

    function test_RevertWhen_WithdrawToZero() public {
        vm.expectRevert(IAgentOracle.ZeroAddress.selector);
        oracle.withdraw(address(0), address(0));
    }

    function test_RevertWhen_WithdrawNothing() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NothingToWithdraw.selector, stranger, address(0)));
        vm.prank(stranger);
        oracle.withdraw(address(0), stranger);
    }

    function test_RevertWhen_WithdrawEthRejected() public {
        bytes32 id = _askProposeDispute(0);
        vm.prank(arbiter);
        oracle.reopen(id);
        EthRejecter r = new EthRejecter();
        vm.expectRevert(
            abi.encodeWithSelector(IAgentOracle.TransferFailed.selector, address(0), address(r), uint256(BOND))
        );
        vm.prank(disputer);
        oracle.withdraw(address(0), address(r));
    }

    // ---------------------------------------------------------------------------------------------------------
    // views
    // ---------------------------------------------------------------------------------------------------------

    function test_GetQuestion_Unknown() public view {
        IAgentOracle.QuestionView memory q = oracle.getQuestion(bytes32("x"));
        assertEq(q.status, IAgentOracle.Status.None);
        assertEq(q.outcomeCount, 0);
    }

    /// @dev What docs/contracts.md says `deadline` is for final questions: the deadline that passed when final by
    /// time (equal to `finalizedAt`), zero when final by a ruling or a manual resolution.
    function test_GetQuestion_DeadlineOfFinalQuestions() public {
        bytes32 byTime = _askAndPropose(0);
        bytes32 byRuling = _ask(bytes32("r"));
        _propose(byRuling, 0);
        _disputeEth(byRuling);
        vm.warp(T0 + 1 days);
        vm.prank(arbiter);
        oracle.confirm(byRuling);
        IAgentOracle.QuestionView memory q = oracle.getQuestion(byTime);
        assertEq(q.status, IAgentOracle.Status.Final);
        assertEq(q.deadline, T0 + LIVENESS);
        assertEq(q.finalizedAt, T0 + LIVENESS);
        q = oracle.getQuestion(byRuling);
        assertEq(q.status, IAgentOracle.Status.Final);
        assertEq(q.deadline, 0);
        assertEq(q.finalizedAt, T0 + 1 days);
    }

    /// @dev A flagged question shows the fields of the status it was flagged in, with the deadline not yet extended.
    function test_GetQuestion_FlaggedShowsTheFrozenProposal() public {
        bytes32 id = _askAndPropose(1);
        vm.warp(T0 + 1 hours);
        vm.prank(owner);
        oracle.flag(id);
        vm.warp(T0 + 1 days);
        IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
        assertEq(q.status, IAgentOracle.Status.Flagged);
        assertEq(q.outcome, 1);
        assertEq(q.proposer, reporter);
        assertEq(q.deadline, T0 + LIVENESS);
        assertEq(q.finalizedAt, 0);
    }

    function test_Views_Roles() public view {
        assertTrue(oracle.hasRole(reporter, IAgentOracle.Role.Reporter));
        assertFalse(oracle.hasRole(reporter, IAgentOracle.Role.Arbiter));
        assertTrue(oracle.hasRole(arbiter, IAgentOracle.Role.Arbiter));
        assertTrue(oracle.hasRole(pauser, IAgentOracle.Role.Pauser));
        assertEq(oracle.reporterIdOf(reporter), 1);
        assertEq(oracle.reporterIdOf(reporter2), 2);
        assertEq(oracle.reporterIdOf(stranger), 0);
        assertEq(oracle.reporterById(1), reporter);
        assertEq(oracle.reporterById(2), reporter2);
        assertEq(oracle.primaryReporter(), reporter);
        assertEq(oracle.pendingOwner(), address(0));
    }

    function test_GetDispute_AndEmergency_Empty() public view {
        IAgentOracle.DisputeInfo memory d = oracle.getDispute(bytes32(0));
        assertEq(d.disputer, address(0));
        IAgentOracle.EmergencyInfo memory e = oracle.getEmergency(bytes32(0));
        assertEq(e.resolvableAt, 0);
    }
}
