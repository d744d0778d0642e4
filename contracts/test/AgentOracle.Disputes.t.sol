// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {OracleBase} from "./utils/OracleBase.sol";
import {IAgentOracle} from "../src/interfaces/IAgentOracle.sol";
import {FalseToken, MockERC20} from "./mocks/MockERC20.sol";

/// @notice Disputes, bonds and the arbiter's rulings.
contract AgentOracleDisputesTest is OracleBase {
    // ---------------------------------------------------------------------------------------------------------
    // dispute
    // ---------------------------------------------------------------------------------------------------------

    function test_Dispute_EthBond() public {
        bytes32 id = _askAndPropose(0);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.AnswerDisputed(id, disputer, address(0), BOND);
        _disputeEth(id);
        assertEq(_status(id), IAgentOracle.Status.Disputed);
        IAgentOracle.DisputeInfo memory d = oracle.getDispute(id);
        assertEq(d.disputer, disputer);
        assertEq(d.amount, BOND);
        assertEq(d.token, address(0));
        assertEq(address(oracle).balance, BOND);
        // a disputed proposal does not become final by time
        vm.warp(T0 + 365 days);
        assertEq(_status(id), IAgentOracle.Status.Disputed);
        IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
        assertEq(q.outcome, 0);
        assertEq(q.deadline, T0 + LIVENESS);
    }

    function test_Dispute_TokenBond() public {
        _useTokenBond(5 ether);
        bytes32 id = _askAndPropose(0);
        vm.prank(disputer);
        oracle.dispute(id, address(token), 5 ether);
        assertEq(token.balanceOf(address(oracle)), 5 ether);
        assertEq(oracle.getDispute(id).token, address(token));
    }

    function test_Dispute_WorksWhilePaused() public {
        bytes32 id = _askAndPropose(0);
        vm.prank(pauser);
        oracle.pause();
        _disputeEth(id);
        assertEq(_status(id), IAgentOracle.Status.Disputed);
    }

    function test_Dispute_KeepsBondAfterBondChange() public {
        bytes32 id = _askProposeDispute(0);
        vm.prank(owner);
        oracle.setBond(address(token), 3);
        vm.prank(arbiter);
        oracle.overturn(id, 1);
        assertEq(oracle.credits(disputer, address(0)), BOND);
    }

    function test_Dispute_ChargesALoweredBond() public {
        _useTokenBond(5 ether);
        bytes32 id = _askAndPropose(0);
        vm.prank(owner);
        oracle.setBond(address(token), 3 ether);
        _disputeToken(id, 5 ether);
        assertEq(token.balanceOf(address(oracle)), 3 ether);
        assertEq(oracle.getDispute(id).amount, 3 ether);
    }

    /// @dev The front-run of the review: a `setBond` mined before the dispute must not take more than the
    /// disputer accepted, although it approved the oracle for everything.
    function test_RevertWhen_DisputeBondRaisedAboveMax() public {
        _useTokenBond(5 ether);
        bytes32 id = _askAndPropose(0);
        vm.prank(owner);
        oracle.setBond(address(token), 500 ether);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.UnexpectedBond.selector, address(token), 500 ether));
        _disputeToken(id, 5 ether);
        assertEq(token.balanceOf(disputer), 1000 ether);
    }

    function test_RevertWhen_DisputeBondTokenSwitched() public {
        _useTokenBond(5 ether);
        MockERC20 other = new MockERC20("Other", "OTH");
        other.mint(disputer, 1000 ether);
        vm.prank(disputer);
        other.approve(address(oracle), type(uint256).max);
        bytes32 id = _askAndPropose(0);
        vm.prank(owner);
        oracle.setBond(address(other), 5 ether); // same amount, a token worth far more
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.UnexpectedBond.selector, address(other), 5 ether));
        _disputeToken(id, 5 ether);
        assertEq(other.balanceOf(disputer), 1000 ether);
    }

    function test_RevertWhen_DisputeEthBondSwitchedToToken() public {
        bytes32 id = _askAndPropose(0);
        _useTokenBond(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.UnexpectedBond.selector, address(token), 1 ether));
        _disputeEth(id);
        assertEq(token.balanceOf(disputer), 1000 ether);
    }

    function test_RevertWhen_DisputeEthMaxBelowBond() public {
        bytes32 id = _askAndPropose(0);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.UnexpectedBond.selector, address(0), BOND));
        vm.prank(disputer);
        oracle.dispute{value: BOND}(id, address(0), BOND - 1);
    }

    function testFuzz_Dispute_NeverChargesAboveMax(uint96 configured, uint96 maxBond) public {
        configured = uint96(bound(configured, 1, 1000 ether));
        _useTokenBond(configured);
        bytes32 id = _askAndPropose(0);
        if (configured > maxBond) {
            vm.expectRevert(abi.encodeWithSelector(IAgentOracle.UnexpectedBond.selector, address(token), configured));
        }
        _disputeToken(id, maxBond);
        uint256 paid = 1000 ether - token.balanceOf(disputer);
        assertLe(paid, maxBond);
        assertEq(paid, configured > maxBond ? 0 : configured);
    }

    function testFuzz_Dispute_Window(uint32 elapsed) public {
        elapsed = uint32(bound(elapsed, 0, 30 days));
        bytes32 id = _askAndPropose(0);
        vm.warp(T0 + elapsed);
        if (elapsed >= LIVENESS) {
            vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Final));
        }
        _disputeEth(id);
    }

    function test_RevertWhen_DisputeNotProposed() public {
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Requested));
        _disputeEth(id);
    }

    function test_RevertWhen_DisputeAfterWindow() public {
        bytes32 id = _askAndPropose(0);
        vm.warp(T0 + LIVENESS);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Final));
        _disputeEth(id);
    }

    function test_RevertWhen_DisputeTwice() public {
        bytes32 id = _askProposeDispute(0);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Disputed));
        vm.prank(stranger);
        oracle.dispute{value: BOND}(id, address(0), BOND);
    }

    function test_RevertWhen_DisputeWrongEthValue() public {
        bytes32 id = _askAndPropose(0);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.IncorrectBondValue.selector, BOND - 1, BOND));
        vm.prank(disputer);
        oracle.dispute{value: BOND - 1}(id, address(0), BOND);
    }

    function test_RevertWhen_DisputeEthSentWithTokenBond() public {
        _useTokenBond(5 ether);
        bytes32 id = _askAndPropose(0);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.IncorrectBondValue.selector, 1, 0));
        vm.prank(disputer);
        oracle.dispute{value: 1}(id, address(token), 5 ether);
    }

    function test_RevertWhen_DisputeFeeOnTransferToken() public {
        _useTokenBond(10 ether);
        token.setFeeBps(100);
        bytes32 id = _askAndPropose(0);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.BondTransferMismatch.selector, 9.9 ether, 10 ether));
        vm.prank(disputer);
        oracle.dispute(id, address(token), 10 ether);
    }

    function test_RevertWhen_DisputeTokenNotApproved() public {
        _useTokenBond(5 ether);
        vm.prank(disputer);
        token.approve(address(oracle), 0);
        bytes32 id = _askAndPropose(0);
        vm.expectRevert(
            abi.encodeWithSelector(IAgentOracle.TransferFailed.selector, address(token), address(oracle), 5 ether)
        );
        vm.prank(disputer);
        oracle.dispute(id, address(token), 5 ether);
    }

    function test_RevertWhen_DisputeTokenReturnsFalse() public {
        FalseToken f = new FalseToken();
        vm.prank(owner);
        oracle.setBond(address(f), 1);
        bytes32 id = _askAndPropose(0);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TransferFailed.selector, address(f), address(oracle), 1));
        vm.prank(disputer);
        oracle.dispute(id, address(f), 1);
    }

    // ---------------------------------------------------------------------------------------------------------
    // confirm
    // ---------------------------------------------------------------------------------------------------------

    function test_Confirm_FinalNowAndForfeitsBond() public {
        bytes32 id = _askProposeDispute(1);
        vm.warp(T0 + 5 hours);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.BondForfeited(id, treasury, address(0), BOND);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.DisputeResolved(id, arbiter, IAgentOracle.Ruling.Confirmed, 1);
        vm.prank(arbiter);
        oracle.confirm(id);
        (uint16 outcome, bytes20 proofHash, uint32 at) = _final(id);
        assertEq(outcome, 1);
        assertEq(proofHash, PROOF);
        assertEq(at, T0 + 5 hours);
        assertEq(oracle.getQuestion(id).proposer, reporter);
        assertEq(oracle.credits(treasury, address(0)), BOND);
        assertEq(oracle.credits(disputer, address(0)), 0);
        assertEq(oracle.getDispute(id).disputer, address(0));
    }

    function test_RevertWhen_RulingAfterUint32Time() public {
        bytes32 id = _askProposeDispute(1);
        uint256 late = uint256(type(uint32).max) + 1;
        vm.warp(late);
        vm.startPrank(arbiter);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, late));
        oracle.confirm(id);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, late));
        oracle.overturn(id, 0);
        vm.stopPrank();
        assertEq(oracle.getQuestion(id).proofHash, PROOF);
    }

    function test_RevertWhen_ConfirmCallerNotArbiter() public {
        bytes32 id = _askProposeDispute(1);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.MissingRole.selector, owner, IAgentOracle.Role.Arbiter));
        vm.prank(owner);
        oracle.confirm(id);
    }

    function test_RevertWhen_ConfirmNotDisputed() public {
        bytes32 id = _askAndPropose(1);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Proposed));
        vm.prank(arbiter);
        oracle.confirm(id);
    }

    // ---------------------------------------------------------------------------------------------------------
    // overturn
    // ---------------------------------------------------------------------------------------------------------

    function test_Overturn_ReplacesOutcomeAndRefunds() public {
        bytes32 id = _askProposeDispute(1);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.BondRefunded(id, disputer, address(0), BOND);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.DisputeResolved(id, arbiter, IAgentOracle.Ruling.Overturned, INVALID);
        vm.prank(arbiter);
        oracle.overturn(id, INVALID);
        (uint16 outcome, bytes20 proofHash, uint32 at) = _final(id);
        assertEq(outcome, INVALID);
        assertEq(proofHash, bytes20(0));
        assertEq(at, T0);
        assertEq(oracle.getQuestion(id).proposer, address(0));
        assertEq(oracle.credits(disputer, address(0)), BOND);
    }

    function testFuzz_Overturn(uint16 outcomes, uint16 proposed, uint16 ruled) public {
        outcomes = uint16(bound(outcomes, 2, 256));
        proposed = uint16(bound(proposed, 0, outcomes - 1));
        ruled = uint16(bound(ruled, 0, outcomes));
        if (ruled == outcomes) ruled = INVALID;
        vm.assume(ruled != proposed);
        bytes32 id = _askWith(outcomes, 0, LIVENESS, address(0));
        _propose(id, proposed);
        _disputeEth(id);
        vm.prank(arbiter);
        oracle.overturn(id, ruled);
        (uint16 outcome,,) = _final(id);
        assertEq(outcome, ruled);
    }

    function test_RevertWhen_OverturnCallerNotArbiter() public {
        bytes32 id = _askProposeDispute(1);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.MissingRole.selector, reporter, IAgentOracle.Role.Arbiter));
        vm.prank(reporter);
        oracle.overturn(id, 0);
    }

    function test_RevertWhen_OverturnNotDisputed() public {
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Requested));
        vm.prank(arbiter);
        oracle.overturn(id, 0);
    }

    function test_RevertWhen_OverturnInvalidOutcome() public {
        bytes32 id = _askProposeDispute(1);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidOutcome.selector, id, 2));
        vm.prank(arbiter);
        oracle.overturn(id, 2);
    }

    function test_RevertWhen_OverturnSameOutcome() public {
        bytes32 id = _askProposeDispute(1);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.SameOutcome.selector, 1));
        vm.prank(arbiter);
        oracle.overturn(id, 1);
    }

    // ---------------------------------------------------------------------------------------------------------
    // reopen
    // ---------------------------------------------------------------------------------------------------------

    function test_Reopen_NewRoundAndRefund() public {
        bytes32 id = _askProposeDispute(1);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.DisputeResolved(id, arbiter, IAgentOracle.Ruling.Reopened, 1);
        vm.prank(arbiter);
        oracle.reopen(id);
        IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
        assertEq(q.status, IAgentOracle.Status.Requested);
        assertEq(q.round, 1);
        assertEq(q.proposer, address(0));
        assertEq(q.proofHash, bytes20(0));
        assertEq(q.outcomeCount, 2);
        assertEq(q.liveness, LIVENESS);
        assertEq(oracle.credits(disputer, address(0)), BOND);
        // a new proposal in round 1, possibly by another reporter
        vm.warp(T0 + 1 days);
        vm.prank(reporter2);
        oracle.propose(id, 0, bytes20(uint160(7)));
        vm.warp(T0 + 1 days + LIVENESS);
        (uint16 outcome, bytes20 proofHash, uint32 at) = _final(id);
        assertEq(outcome, 0);
        assertEq(proofHash, bytes20(uint160(7)));
        assertEq(at, T0 + 1 days + LIVENESS);
        assertEq(oracle.getQuestion(id).round, 1);
    }

    function test_RevertWhen_ReopenRoundLimitReached() public {
        bytes32 id = _ask();
        for (uint256 i; i < 15; ++i) {
            _propose(id, 0);
            _disputeEth(id);
            vm.prank(arbiter);
            oracle.reopen(id);
        }
        assertEq(oracle.getQuestion(id).round, 15);
        _propose(id, 0);
        _disputeEth(id);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.RoundLimitReached.selector, id));
        vm.prank(arbiter);
        oracle.reopen(id);
        // the arbiter can still rule
        vm.prank(arbiter);
        oracle.overturn(id, 1);
        assertEq(oracle.credits(disputer, address(0)), 16 * uint256(BOND));
    }

    function test_RevertWhen_ReopenCallerNotArbiter() public {
        bytes32 id = _askProposeDispute(1);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.MissingRole.selector, stranger, IAgentOracle.Role.Arbiter));
        vm.prank(stranger);
        oracle.reopen(id);
    }

    function test_RevertWhen_ReopenNotDisputed() public {
        bytes32 id = _askAndPropose(1);
        vm.warp(T0 + LIVENESS);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Final));
        vm.prank(arbiter);
        oracle.reopen(id);
    }
}
