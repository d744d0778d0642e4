// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {OracleBase} from "./utils/OracleBase.sol";
import {IAgentOracle} from "../src/interfaces/IAgentOracle.sol";
import {EthRejecter} from "./mocks/MockConsumer.sol";

/// @notice Ownership, roles, pause, configuration and the emergency path.
contract AgentOracleAdminTest is OracleBase {
    // ---------------------------------------------------------------------------------------------------------
    // ownership
    // ---------------------------------------------------------------------------------------------------------

    function test_Ownership_TwoStep() public {
        address next = makeAddr("next");
        vm.expectEmit(address(oracle));
        emit IAgentOracle.OwnershipTransferStarted(owner, next);
        vm.prank(owner);
        oracle.transferOwnership(next);
        assertEq(oracle.owner(), owner);
        assertEq(oracle.pendingOwner(), next);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.OwnershipTransferred(owner, next);
        vm.prank(next);
        oracle.acceptOwnership();
        assertEq(oracle.owner(), next);
        assertEq(oracle.pendingOwner(), address(0));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, owner));
        vm.prank(owner);
        oracle.setTreasury(owner);
    }

    function test_Ownership_CancelWithZero() public {
        vm.startPrank(owner);
        oracle.transferOwnership(makeAddr("next"));
        oracle.transferOwnership(address(0));
        vm.stopPrank();
        assertEq(oracle.pendingOwner(), address(0));
    }

    function test_RevertWhen_TransferOwnershipCallerNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, stranger));
        vm.prank(stranger);
        oracle.transferOwnership(stranger);
    }

    function test_RevertWhen_AcceptOwnershipCallerNotPending() public {
        vm.prank(owner);
        oracle.transferOwnership(makeAddr("next"));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotPendingOwner.selector, stranger));
        vm.prank(stranger);
        oracle.acceptOwnership();
    }

    // ---------------------------------------------------------------------------------------------------------
    // roles
    // ---------------------------------------------------------------------------------------------------------

    function test_GrantRole_ReporterIdsArePermanent() public {
        address r = makeAddr("r3");
        vm.expectEmit(address(oracle));
        emit IAgentOracle.RoleGranted(r, IAgentOracle.Role.Reporter, 3);
        vm.prank(owner);
        oracle.grantRole(r, IAgentOracle.Role.Reporter);
        assertEq(oracle.reporterIdOf(r), 3);
        vm.prank(owner);
        oracle.revokeRole(r, IAgentOracle.Role.Reporter);
        assertFalse(oracle.hasRole(r, IAgentOracle.Role.Reporter));
        assertEq(oracle.reporterIdOf(r), 3);
        assertEq(oracle.reporterById(3), r);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.RoleGranted(r, IAgentOracle.Role.Reporter, 3);
        vm.prank(owner);
        oracle.grantRole(r, IAgentOracle.Role.Reporter);
    }

    function test_GrantRole_OperatorIndexReused() public {
        address a = makeAddr("a");
        address b = makeAddr("b");
        vm.startPrank(owner);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.RoleGranted(a, IAgentOracle.Role.Operator, 1);
        oracle.grantRole(a, IAgentOracle.Role.Operator);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.RoleGranted(b, IAgentOracle.Role.Operator, 2);
        oracle.grantRole(b, IAgentOracle.Role.Operator);
        oracle.revokeRole(a, IAgentOracle.Role.Operator);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.RoleGranted(stranger, IAgentOracle.Role.Operator, 1);
        oracle.grantRole(stranger, IAgentOracle.Role.Operator);
        vm.stopPrank();
        (,, uint8 n,,,) = oracle.config();
        assertEq(n, 2);
    }

    function test_GrantRole_ArbiterAndPauserHaveNoIndex() public {
        vm.expectEmit(address(oracle));
        emit IAgentOracle.RoleGranted(stranger, IAgentOracle.Role.Arbiter, 0);
        vm.prank(owner);
        oracle.grantRole(stranger, IAgentOracle.Role.Arbiter);
        assertTrue(oracle.hasRole(stranger, IAgentOracle.Role.Arbiter));
    }

    function test_RevertWhen_GrantRoleCallerNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, arbiter));
        vm.prank(arbiter);
        oracle.grantRole(arbiter, IAgentOracle.Role.Reporter);
    }

    function test_RevertWhen_GrantRoleZeroAddress() public {
        vm.expectRevert(IAgentOracle.ZeroAddress.selector);
        vm.prank(owner);
        oracle.grantRole(address(0), IAgentOracle.Role.Reporter);
    }

    function test_RevertWhen_GrantRoleAlreadyGranted() public {
        vm.expectRevert(
            abi.encodeWithSelector(IAgentOracle.RoleAlreadyGranted.selector, reporter, IAgentOracle.Role.Reporter)
        );
        vm.prank(owner);
        oracle.grantRole(reporter, IAgentOracle.Role.Reporter);
    }

    function test_RevertWhen_GrantRoleTooManyReporters() public {
        vm.startPrank(owner);
        for (uint256 i = 3; i <= 255; ++i) {
            oracle.grantRole(address(uint160(0x1000 + i)), IAgentOracle.Role.Reporter);
        }
        assertEq(oracle.reporterIdOf(address(uint160(0x1000 + 255))), 255);
        vm.expectRevert(IAgentOracle.TooManyReporters.selector);
        oracle.grantRole(stranger, IAgentOracle.Role.Reporter);
        vm.stopPrank();
    }

    function test_RevertWhen_GrantRoleTooManyOperators() public {
        vm.startPrank(owner);
        for (uint256 i = 1; i <= 31; ++i) {
            oracle.grantRole(address(uint160(0x1000 + i)), IAgentOracle.Role.Operator);
        }
        (,, uint8 n,,,) = oracle.config();
        assertEq(n, 31);
        vm.expectRevert(IAgentOracle.TooManyOperators.selector);
        oracle.grantRole(stranger, IAgentOracle.Role.Operator);
        vm.stopPrank();
    }

    function test_RevokeRole_PrimaryReporterCleared() public {
        vm.expectEmit(address(oracle));
        emit IAgentOracle.PrimaryReporterSet(address(0));
        vm.expectEmit(address(oracle));
        emit IAgentOracle.RoleRevoked(reporter, IAgentOracle.Role.Reporter);
        vm.prank(owner);
        oracle.revokeRole(reporter, IAgentOracle.Role.Reporter);
        assertEq(oracle.primaryReporter(), address(0));
    }

    function test_RevertWhen_RevokeRoleCallerNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, stranger));
        vm.prank(stranger);
        oracle.revokeRole(reporter, IAgentOracle.Role.Reporter);
    }

    function test_RevertWhen_RevokeRoleNotGranted() public {
        vm.expectRevert(
            abi.encodeWithSelector(IAgentOracle.RoleNotGranted.selector, stranger, IAgentOracle.Role.Arbiter)
        );
        vm.prank(owner);
        oracle.revokeRole(stranger, IAgentOracle.Role.Arbiter);
    }

    function test_RevertWhen_RevokeRoleBelowThreshold() public {
        vm.startPrank(owner);
        oracle.grantRole(stranger, IAgentOracle.Role.Operator);
        oracle.setThreshold(1);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.ThresholdTooHigh.selector, 1, 0));
        oracle.revokeRole(stranger, IAgentOracle.Role.Operator);
        vm.stopPrank();
    }

    function test_SetPrimaryReporter() public {
        vm.expectEmit(address(oracle));
        emit IAgentOracle.PrimaryReporterSet(reporter2);
        vm.prank(owner);
        oracle.setPrimaryReporter(reporter2);
        assertEq(oracle.primaryReporter(), reporter2);
        bytes32 id = _ask();
        vm.prank(reporter2);
        oracle.propose(id, 0, PROOF);
        assertEq(oracle.getQuestion(id).proposer, reporter2);
        vm.prank(owner);
        oracle.setPrimaryReporter(address(0));
        assertEq(oracle.primaryReporter(), address(0));
    }

    function test_RevertWhen_SetPrimaryReporterCallerNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, reporter));
        vm.prank(reporter);
        oracle.setPrimaryReporter(reporter);
    }

    function test_RevertWhen_SetPrimaryReporterNotReporter() public {
        vm.expectRevert(
            abi.encodeWithSelector(IAgentOracle.RoleNotGranted.selector, stranger, IAgentOracle.Role.Reporter)
        );
        vm.prank(owner);
        oracle.setPrimaryReporter(stranger);
    }

    // ---------------------------------------------------------------------------------------------------------
    // pause
    // ---------------------------------------------------------------------------------------------------------

    function test_Pause_ByPauserAndOwner() public {
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Paused(pauser);
        vm.prank(pauser);
        oracle.pause();
        (bool paused,,,,,) = oracle.config();
        assertTrue(paused);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Unpaused(owner);
        vm.prank(owner);
        oracle.unpause();
        vm.prank(owner);
        oracle.pause();
        (paused,,,,,) = oracle.config();
        assertTrue(paused);
    }

    function test_RevertWhen_PauseCallerNotPauser() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.MissingRole.selector, reporter, IAgentOracle.Role.Pauser));
        vm.prank(reporter);
        oracle.pause();
    }

    function test_RevertWhen_PauseAlreadyPaused() public {
        vm.prank(pauser);
        oracle.pause();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.PauseUnchanged.selector, true));
        vm.prank(pauser);
        oracle.pause();
    }

    function test_RevertWhen_UnpauseCallerNotOwner() public {
        vm.prank(pauser);
        oracle.pause();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, pauser));
        vm.prank(pauser);
        oracle.unpause();
    }

    function test_RevertWhen_UnpauseNotPaused() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.PauseUnchanged.selector, false));
        vm.prank(owner);
        oracle.unpause();
    }

    // ---------------------------------------------------------------------------------------------------------
    // configuration
    // ---------------------------------------------------------------------------------------------------------

    function test_SetMinLiveness_AppliesToLaterProposals() public {
        bytes32 id = _ask(); // asks for 2 hours
        vm.expectEmit(address(oracle));
        emit IAgentOracle.MinLivenessSet(3 hours);
        vm.prank(owner);
        oracle.setMinLiveness(3 hours);
        _propose(id, 0);
        assertEq(oracle.getQuestion(id).deadline, T0 + 3 hours);
    }

    function test_RevertWhen_SetMinLivenessCallerNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, stranger));
        vm.prank(stranger);
        oracle.setMinLiveness(1);
    }

    function test_RevertWhen_SetMinLivenessTooLong() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.ValueOutOfRange.selector, 90 days + 1, 30, 90 days));
        vm.prank(owner);
        oracle.setMinLiveness(90 days + 1);
    }

    /// @dev With a zero minimum a zero-liveness request was final in the block of its proposal.
    function testFuzz_RevertWhen_SetMinLivenessBelowFloor(uint32 minLiveness) public {
        minLiveness = uint32(bound(minLiveness, 0, 29));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.ValueOutOfRange.selector, minLiveness, 30, 90 days));
        vm.prank(owner);
        oracle.setMinLiveness(minLiveness);
    }

    function test_SetMinLiveness_AcceptsTheFloor() public {
        assertEq(oracle.LIVENESS_FLOOR(), 30);
        vm.prank(owner);
        oracle.setMinLiveness(30);
        (,,, uint32 minLiveness,,) = oracle.config();
        assertEq(minLiveness, 30);
    }

    function test_SetBond() public {
        vm.expectEmit(address(oracle));
        emit IAgentOracle.BondSet(address(token), 42);
        vm.prank(owner);
        oracle.setBond(address(token), 42);
        (address t, uint96 a) = oracle.bond();
        assertEq(t, address(token));
        assertEq(a, 42);
    }

    function test_RevertWhen_SetBondCallerNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, stranger));
        vm.prank(stranger);
        oracle.setBond(address(0), 1);
    }

    /// @dev A free dispute would freeze any answer until the arbiter acts.
    function test_RevertWhen_SetBondZero() public {
        vm.expectRevert(IAgentOracle.ZeroBond.selector);
        vm.prank(owner);
        oracle.setBond(address(0), 0);
        vm.expectRevert(IAgentOracle.ZeroBond.selector);
        vm.prank(owner);
        oracle.setBond(address(token), 0);
    }

    /// @dev Every dispute would revert: answers could no longer be challenged.
    function test_RevertWhen_SetBondTokenHasNoCode() public {
        address notAToken = makeAddr("notAToken");
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidBondToken.selector, notAToken));
        vm.prank(owner);
        oracle.setBond(notAToken, 1);
    }

    function test_RevertWhen_SetBondTokenIsNotAToken() public {
        address notAToken = address(new EthRejecter()); // code, but no balanceOf
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidBondToken.selector, notAToken));
        vm.prank(owner);
        oracle.setBond(notAToken, 1);
    }

    function test_SetTreasury() public {
        address t = makeAddr("t2");
        vm.expectEmit(address(oracle));
        emit IAgentOracle.TreasurySet(t);
        vm.prank(owner);
        oracle.setTreasury(t);
        assertEq(oracle.treasury(), t);
    }

    function test_RevertWhen_SetTreasuryCallerNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, stranger));
        vm.prank(stranger);
        oracle.setTreasury(stranger);
    }

    /// @dev Credits of the oracle itself could never be withdrawn: forfeited bonds would be lost.
    function test_RevertWhen_SetTreasuryIsOracle() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidTreasury.selector, address(oracle)));
        vm.prank(owner);
        oracle.setTreasury(address(oracle));
    }

    function test_RevertWhen_SetTreasuryZero() public {
        vm.expectRevert(IAgentOracle.ZeroAddress.selector);
        vm.prank(owner);
        oracle.setTreasury(address(0));
    }

    function test_SetCallbackGasLimit() public {
        vm.expectEmit(address(oracle));
        emit IAgentOracle.CallbackGasLimitSet(1_000_000);
        vm.prank(owner);
        oracle.setCallbackGasLimit(1_000_000);
        (,,,, uint32 g,) = oracle.config();
        assertEq(g, 1_000_000);
    }

    function test_RevertWhen_SetCallbackGasLimitCallerNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, stranger));
        vm.prank(stranger);
        oracle.setCallbackGasLimit(1);
    }

    function test_RevertWhen_SetCallbackGasLimitTooHigh() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.ValueOutOfRange.selector, 10_000_001, 50_000, 10_000_000));
        vm.prank(owner);
        oracle.setCallbackGasLimit(10_000_001);
    }

    /// @dev A limit of 0 (or close to it) would make every settlement callback fail.
    function testFuzz_RevertWhen_SetCallbackGasLimitBelowFloor(uint32 gasLimit) public {
        gasLimit = uint32(bound(gasLimit, 0, 49_999));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.ValueOutOfRange.selector, gasLimit, 50_000, 10_000_000));
        vm.prank(owner);
        oracle.setCallbackGasLimit(gasLimit);
    }

    function test_SetThreshold() public {
        vm.startPrank(owner);
        oracle.grantRole(stranger, IAgentOracle.Role.Operator);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.ThresholdSet(1);
        oracle.setThreshold(1);
        vm.stopPrank();
        (, uint8 k,,,,) = oracle.config();
        assertEq(k, 1);
    }

    function test_RevertWhen_SetThresholdCallerNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, stranger));
        vm.prank(stranger);
        oracle.setThreshold(0);
    }

    function test_RevertWhen_SetThresholdAboveOperatorCount() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.ThresholdTooHigh.selector, 1, 0));
        vm.prank(owner);
        oracle.setThreshold(1);
    }

    function test_SetSafetyPeriod() public {
        vm.expectEmit(address(oracle));
        emit IAgentOracle.SafetyPeriodSet(1 hours);
        vm.prank(owner);
        oracle.setSafetyPeriod(1 hours);
        (,,,,, uint32 p) = oracle.config();
        assertEq(p, 1 hours);
    }

    function test_RevertWhen_SetSafetyPeriodCallerNotOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, stranger));
        vm.prank(stranger);
        oracle.setSafetyPeriod(1 hours);
    }

    function test_RevertWhen_SetSafetyPeriodTooShort() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.ValueOutOfRange.selector, 1 hours - 1, 1 hours, 30 days));
        vm.prank(owner);
        oracle.setSafetyPeriod(1 hours - 1);
    }

    function test_RevertWhen_SetSafetyPeriodTooLong() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.ValueOutOfRange.selector, 30 days + 1, 1 hours, 30 days));
        vm.prank(owner);
        oracle.setSafetyPeriod(30 days + 1);
    }

    // ---------------------------------------------------------------------------------------------------------
    // emergency: flag, unflag, resolveManually
    // ---------------------------------------------------------------------------------------------------------

    function test_Flag_FreezesProposal() public {
        bytes32 id = _askAndPropose(0);
        vm.warp(T0 + 1 hours);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.QuestionFlagged(id, T0 + 1 hours + 2 days);
        vm.prank(owner);
        oracle.flag(id);
        assertEq(_status(id), IAgentOracle.Status.Flagged);
        IAgentOracle.EmergencyInfo memory e = oracle.getEmergency(id);
        assertEq(uint8(e.previousStatus), uint8(IAgentOracle.Status.Proposed));
        assertEq(e.flaggedAt, T0 + 1 hours);
        assertEq(e.resolvableAt, T0 + 1 hours + 2 days);
        // frozen: no finality by time, no dispute, no settlement
        vm.warp(T0 + 10 days);
        assertEq(_status(id), IAgentOracle.Status.Flagged);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Flagged));
        _disputeEth(id);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Flagged));
        oracle.settle(id);
    }

    function test_Flag_KeepsItsSafetyPeriodWhenThePeriodChanges() public {
        bytes32 id = _ask();
        vm.prank(owner);
        oracle.flag(id);
        vm.prank(owner);
        oracle.setSafetyPeriod(1 hours);
        vm.warp(T0 + 1 hours);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.SafetyPeriodNotElapsed.selector, id, T0 + 2 days));
        vm.prank(owner);
        oracle.resolveManually(id, 0);
    }

    function test_Unflag_ExtendsWindowByFrozenTime() public {
        bytes32 id = _askAndPropose(0);
        vm.warp(T0 + 1 hours);
        vm.prank(owner);
        oracle.flag(id);
        vm.warp(T0 + 1 days);
        uint32 expected = T0 + LIVENESS + (1 days - 1 hours);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.QuestionUnflagged(id, IAgentOracle.Status.Proposed, expected);
        vm.prank(owner);
        oracle.unflag(id);
        assertEq(_status(id), IAgentOracle.Status.Proposed);
        assertEq(oracle.getQuestion(id).deadline, expected);
        assertEq(oracle.getEmergency(id).resolvableAt, 0);
        vm.warp(expected);
        assertEq(_status(id), IAgentOracle.Status.Final);
    }

    function test_Unflag_RestoresRequested() public {
        bytes32 id = _askWith(2, T0 + 5 days, LIVENESS, address(0));
        vm.prank(owner);
        oracle.flag(id);
        vm.prank(owner);
        oracle.unflag(id);
        IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
        assertEq(q.status, IAgentOracle.Status.Requested);
        assertEq(q.earliestTime, T0 + 5 days);
    }

    function test_ResolveManually_AfterSafetyPeriod() public {
        bytes32 id = _ask();
        vm.prank(owner);
        oracle.flag(id);
        vm.warp(T0 + 2 days);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.QuestionResolvedManually(id, 1);
        vm.prank(owner);
        oracle.resolveManually(id, 1);
        (uint16 outcome, bytes20 h, uint32 at) = _final(id);
        assertEq(outcome, 1);
        assertEq(h, bytes20(0));
        assertEq(at, T0 + 2 days);
        assertEq(oracle.getEmergency(id).resolvableAt, 0);
        oracle.settle(id);
    }

    function test_ResolveManually_DisputedRefundsWhenOutcomeDiffers() public {
        bytes32 id = _askProposeDispute(0);
        vm.prank(owner);
        oracle.flag(id);
        vm.warp(T0 + 2 days);
        vm.prank(owner);
        oracle.resolveManually(id, 1);
        assertEq(oracle.credits(disputer, address(0)), BOND);
        assertEq(oracle.credits(treasury, address(0)), 0);
    }

    /// @dev The review's scenario: the owner points the treasury at itself, sets the shortest safety period, flags
    /// an honest dispute, waits and resolves with the proposal's outcome. The bond must still go back to the
    /// disputer: the emergency path is no ruling on the dispute.
    function test_ResolveManually_OwnerCannotTakeTheBond() public {
        bytes32 id = _askProposeDispute(0);
        vm.startPrank(owner);
        oracle.setTreasury(owner);
        oracle.setSafetyPeriod(1 hours);
        oracle.flag(id);
        vm.warp(T0 + 1 hours);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.BondRefunded(id, disputer, address(0), BOND);
        oracle.resolveManually(id, 0);
        vm.stopPrank();
        assertEq(oracle.credits(owner, address(0)), 0);
        assertEq(oracle.credits(disputer, address(0)), BOND);
    }

    function testFuzz_ResolveManually_DisputedAlwaysRefunds(uint16 outcome) public {
        outcome = outcome % 2 == 0 ? outcome % 4 / 2 : INVALID; // 0, 1 or INVALID
        bytes32 id = _askProposeDispute(0);
        vm.prank(owner);
        oracle.flag(id);
        vm.warp(T0 + 2 days);
        vm.prank(owner);
        oracle.resolveManually(id, outcome);
        assertEq(oracle.credits(disputer, address(0)), BOND);
        assertEq(oracle.credits(treasury, address(0)), 0);
    }

    /// @dev `uint32(block.timestamp)` used to truncate the flag time silently.
    function test_RevertWhen_FlagAfterUint32Time() public {
        bytes32 id = _ask();
        uint256 late = uint256(type(uint32).max) + 1;
        vm.warp(late);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, late + 2 days));
        vm.prank(owner);
        oracle.flag(id);
    }

    function test_RevertWhen_FlagResolvableAtBeyondUint32() public {
        bytes32 id = _ask();
        uint256 at = uint256(type(uint32).max) - 1 days;
        vm.warp(at);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, at + 2 days));
        vm.prank(owner);
        oracle.flag(id);
    }

    /// @dev Extending the window by the time flagged used to overflow with a panic.
    function test_RevertWhen_UnflagDeadlineBeyondUint32() public {
        uint256 max = type(uint32).max;
        uint256 start = max - 10 days;
        vm.warp(start);
        bytes32 id = _askAndPropose(0); // deadline start + 2 hours
        vm.warp(start + 1 hours);
        vm.prank(owner);
        oracle.flag(id);
        vm.warp(max - 30 minutes); // frozen for (max - 30 minutes) - (start + 1 hours)
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, max + 30 minutes));
        vm.prank(owner);
        oracle.unflag(id);
    }

    function test_RevertWhen_ResolveManuallyAfterUint32Time() public {
        bytes32 id = _ask();
        vm.prank(owner);
        oracle.flag(id);
        uint256 late = uint256(type(uint32).max) + 1;
        vm.warp(late);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TimeOverflow.selector, late));
        vm.prank(owner);
        oracle.resolveManually(id, 0);
    }

    function test_RevertWhen_FlagCallerNotOwner() public {
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, arbiter));
        vm.prank(arbiter);
        oracle.flag(id);
    }

    function test_RevertWhen_FlagUnknown() public {
        vm.expectRevert(
            abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, bytes32(0), IAgentOracle.Status.None)
        );
        vm.prank(owner);
        oracle.flag(bytes32(0));
    }

    function test_RevertWhen_FlagFinal() public {
        bytes32 id = _askAndPropose(0);
        vm.warp(T0 + LIVENESS);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Final));
        vm.prank(owner);
        oracle.flag(id);
    }

    function test_RevertWhen_FlagTwice() public {
        bytes32 id = _ask();
        vm.prank(owner);
        oracle.flag(id);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Flagged));
        vm.prank(owner);
        oracle.flag(id);
    }

    function test_RevertWhen_UnflagCallerNotOwner() public {
        bytes32 id = _ask();
        vm.prank(owner);
        oracle.flag(id);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, stranger));
        vm.prank(stranger);
        oracle.unflag(id);
    }

    function test_RevertWhen_UnflagNotFlagged() public {
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Requested));
        vm.prank(owner);
        oracle.unflag(id);
    }

    function test_RevertWhen_ResolveManuallyCallerNotOwner() public {
        bytes32 id = _ask();
        vm.prank(owner);
        oracle.flag(id);
        vm.warp(T0 + 2 days);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOwner.selector, arbiter));
        vm.prank(arbiter);
        oracle.resolveManually(id, 0);
    }

    function test_RevertWhen_ResolveManuallyNotFlagged() public {
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Requested));
        vm.prank(owner);
        oracle.resolveManually(id, 0);
    }

    function testFuzz_RevertWhen_ResolveManuallyBeforeSafetyPeriod(uint32 wait) public {
        wait = uint32(bound(wait, 0, 2 days - 1));
        bytes32 id = _ask();
        vm.prank(owner);
        oracle.flag(id);
        vm.warp(T0 + wait);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.SafetyPeriodNotElapsed.selector, id, T0 + 2 days));
        vm.prank(owner);
        oracle.resolveManually(id, 0);
    }

    function test_RevertWhen_ResolveManuallyInvalidOutcome() public {
        bytes32 id = _ask();
        vm.prank(owner);
        oracle.flag(id);
        vm.warp(T0 + 2 days);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidOutcome.selector, id, 7));
        vm.prank(owner);
        oracle.resolveManually(id, 7);
    }
}
