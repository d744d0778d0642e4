// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {OracleBase} from "../utils/OracleBase.sol";
import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";
import {IConditionalTokens} from "../../src/interfaces/IConditionalTokens.sol";
import {IConditionalTokensAdapter} from "../../src/interfaces/IConditionalTokensAdapter.sol";
import {ConditionalTokensAdapter} from "../../src/adapters/ConditionalTokensAdapter.sol";
import {MockERC20} from "../mocks/MockERC20.sol";
import {Vm} from "forge-std/Vm.sol";

/// @notice The parts of the real ConditionalTokens the tests use beyond the adapter's interface.
interface IConditionalTokensFull is IConditionalTokens {
    function splitPosition(
        address collateralToken,
        bytes32 parentCollectionId,
        bytes32 conditionId,
        uint256[] calldata partition,
        uint256 amount
    ) external;

    function redeemPositions(
        address collateralToken,
        bytes32 parentCollectionId,
        bytes32 conditionId,
        uint256[] calldata indexSets
    ) external;

    function getCollectionId(bytes32 parentCollectionId, bytes32 conditionId, uint256 indexSet)
        external
        view
        returns (bytes32);

    function getPositionId(address collateralToken, bytes32 collectionId) external pure returns (uint256);

    function balanceOf(address owner, uint256 id) external view returns (uint256);
}

/// @notice The adapter against the real Gnosis ConditionalTokens bytecode (compiled from the npm package
/// gnosis.pm/conditional-tokens-contracts 1.0.3 with solc 0.5.17 by scripts/build-ct.js), not a mock.
contract ConditionalTokensAdapterTest is OracleBase {
    IConditionalTokensFull internal ct;
    ConditionalTokensAdapter internal adapter;
    MockERC20 internal collateral;
    address internal trader = makeAddr("trader");

    function setUp() public override {
        super.setUp();
        string memory json = vm.readFile("test/fixtures/ConditionalTokens.json");
        bytes memory code = vm.parseJsonBytes(json, ".bytecode");
        address deployed;
        assembly {
            deployed := create(0, add(code, 0x20), mload(code))
        }
        require(deployed != address(0) && deployed.code.length > 0, "ConditionalTokens deployment failed");
        ct = IConditionalTokensFull(deployed);
        adapter = new ConditionalTokensAdapter(oracle, ct);
        collateral = new MockERC20("USD", "USD");
        collateral.mint(trader, 1000 ether);
        vm.prank(trader);
        collateral.approve(address(ct), type(uint256).max);
    }

    function _prepare(uint16 n) internal returns (bytes32 id, bytes32 conditionId) {
        vm.prank(requester);
        (id, conditionId) = adapter.prepareQuestion(TEXT, n, 0, LIVENESS, bytes32("salt"));
    }

    /// @dev Splits 100 collateral into every outcome slot for the trader.
    function _splitAll(bytes32 conditionId, uint16 n) internal {
        uint256[] memory partition = new uint256[](n);
        for (uint256 i; i < n; ++i) {
            partition[i] = 1 << i;
        }
        vm.prank(trader);
        ct.splitPosition(address(collateral), bytes32(0), conditionId, partition, 100 ether);
    }

    function _position(bytes32 conditionId, uint256 indexSet) internal view returns (uint256) {
        return ct.getPositionId(address(collateral), ct.getCollectionId(bytes32(0), conditionId, indexSet));
    }

    function _redeemSlot(bytes32 conditionId, uint256 slot) internal returns (uint256 paid) {
        uint256[] memory sets = new uint256[](1);
        sets[0] = 1 << slot;
        uint256 before = collateral.balanceOf(trader);
        vm.prank(trader);
        ct.redeemPositions(address(collateral), bytes32(0), conditionId, sets);
        paid = collateral.balanceOf(trader) - before;
    }

    function _answer(bytes32 id, uint16 outcome) internal {
        _propose(id, outcome);
        vm.warp(block.timestamp + LIVENESS);
    }

    // ---------------------------------------------------------------------------------------------------------
    // prepareQuestion
    // ---------------------------------------------------------------------------------------------------------

    function test_PrepareQuestion_PreparesCondition() public {
        bytes32 expectedId = oracle.questionIdOf(
            address(adapter),
            keccak256(TEXT),
            2,
            0,
            LIVENESS,
            address(adapter),
            keccak256(abi.encode(requester, bytes32("salt")))
        );
        bytes32 expectedCondition = keccak256(abi.encodePacked(address(adapter), expectedId, uint256(2)));
        vm.expectEmit(address(adapter));
        emit IConditionalTokensAdapter.QuestionPrepared(expectedId, expectedCondition, requester, 2);
        (bytes32 id, bytes32 conditionId) = _prepare(2);
        assertEq(id, expectedId);
        assertEq(conditionId, expectedCondition);
        assertEq(ct.getOutcomeSlotCount(conditionId), 2);
        IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
        assertEq(q.status, IAgentOracle.Status.Requested);
        assertEq(q.callback, address(adapter));
    }

    function test_PrepareQuestion_CallersCannotTakeEachOthersIds() public {
        (bytes32 a,) = _prepare(2);
        vm.prank(stranger);
        (bytes32 b,) = adapter.prepareQuestion(TEXT, 2, 0, LIVENESS, bytes32("salt"));
        assertTrue(a != b);
    }

    function test_PrepareQuestion_SurvivesFrontRunPreparation() public {
        bytes32 id = oracle.questionIdOf(
            address(adapter),
            keccak256(TEXT),
            2,
            0,
            LIVENESS,
            address(adapter),
            keccak256(abi.encode(requester, bytes32("salt")))
        );
        vm.prank(stranger);
        ct.prepareCondition(address(adapter), id, 2);
        (bytes32 got,) = _prepare(2);
        assertEq(got, id);
    }

    function test_RevertWhen_PrepareQuestionInvalidOutcomeCount() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidOutcomeCount.selector, 1));
        adapter.prepareQuestion(TEXT, 1, 0, LIVENESS, bytes32(0));
    }

    function test_RevertWhen_PrepareQuestionTwice() public {
        (bytes32 id,) = _prepare(2);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.QuestionExists.selector, id));
        _prepare(2);
    }

    // ---------------------------------------------------------------------------------------------------------
    // onOracleResult via settle: payouts on the real ConditionalTokens
    // ---------------------------------------------------------------------------------------------------------

    function test_Settle_BinaryYesPaysSlot0() public {
        (bytes32 id, bytes32 cond) = _prepare(2);
        _splitAll(cond, 2);
        _answer(id, 0);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Settled(id, address(adapter), 0, true);
        oracle.settle(id);
        assertEq(ct.payoutDenominator(cond), 1);
        assertEq(ct.payoutNumerators(cond, 0), 1);
        assertEq(ct.payoutNumerators(cond, 1), 0);
        assertEq(_redeemSlot(cond, 0), 100 ether);
        assertEq(_redeemSlot(cond, 1), 0);
    }

    function test_Settle_BinaryNoPaysSlot1() public {
        (bytes32 id, bytes32 cond) = _prepare(2);
        _splitAll(cond, 2);
        _answer(id, 1);
        oracle.settle(id);
        assertEq(ct.payoutNumerators(cond, 0), 0);
        assertEq(ct.payoutNumerators(cond, 1), 1);
        assertEq(_redeemSlot(cond, 0), 0);
        assertEq(_redeemSlot(cond, 1), 100 ether);
    }

    function test_Settle_BinaryInvalidPaysHalfEach() public {
        (bytes32 id, bytes32 cond) = _prepare(2);
        _splitAll(cond, 2);
        _answer(id, INVALID);
        oracle.settle(id);
        assertEq(ct.payoutDenominator(cond), 2);
        assertEq(ct.payoutNumerators(cond, 0), 1);
        assertEq(ct.payoutNumerators(cond, 1), 1);
        assertEq(_redeemSlot(cond, 0), 50 ether);
        assertEq(_redeemSlot(cond, 1), 50 ether);
    }

    function testFuzz_Settle_CategoricalOneHot(uint8 n, uint8 winner) public {
        n = uint8(bound(n, 3, 12));
        winner = uint8(bound(winner, 0, n - 1));
        (bytes32 id, bytes32 cond) = _prepare(n);
        _splitAll(cond, n);
        _answer(id, winner);
        oracle.settle(id);
        assertEq(ct.payoutDenominator(cond), 1);
        for (uint256 i; i < n; ++i) {
            assertEq(ct.payoutNumerators(cond, i), i == winner ? 1 : 0);
        }
        assertEq(_redeemSlot(cond, winner), 100 ether);
    }

    function test_Settle_CategoricalInvalid() public {
        (bytes32 id, bytes32 cond) = _prepare(4);
        _splitAll(cond, 4);
        _answer(id, INVALID);
        oracle.settle(id);
        assertEq(ct.payoutDenominator(cond), 4);
        assertEq(_redeemSlot(cond, 3), 25 ether);
    }

    function test_Settle_AfterArbiterOverturn() public {
        (bytes32 id, bytes32 cond) = _prepare(2);
        _propose(id, 0);
        _disputeEth(id);
        vm.prank(arbiter);
        oracle.overturn(id, 1);
        oracle.settle(id);
        assertEq(ct.payoutNumerators(cond, 1), 1);
    }

    function test_RevertWhen_OnOracleResultCallerNotOracle() public {
        (bytes32 id,) = _prepare(2);
        vm.expectRevert(abi.encodeWithSelector(IConditionalTokensAdapter.NotOracle.selector, stranger));
        vm.prank(stranger);
        adapter.onOracleResult(id, 0);
    }

    // ---------------------------------------------------------------------------------------------------------
    // resolve (fallback when the callback did not report)
    // ---------------------------------------------------------------------------------------------------------

    function test_Resolve_AfterFailedCallback() public {
        vm.prank(owner);
        oracle.setCallbackGasLimit(50_000); // too little for reportPayouts
        (bytes32 id, bytes32 cond) = _prepare(2);
        _answer(id, 1);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Settled(id, address(adapter), 1, false);
        oracle.settle(id);
        assertEq(ct.payoutDenominator(cond), 0);
        uint256[] memory expected = new uint256[](2);
        expected[1] = 1;
        vm.expectEmit(address(adapter));
        emit IConditionalTokensAdapter.PayoutsReported(id, cond, 1, expected);
        vm.prank(stranger);
        adapter.resolve(id);
        assertEq(ct.payoutNumerators(cond, 1), 1);
    }

    /// @dev A result pulled with `resolve` counts as delivered: a later `settle` completes instead of failing (and,
    /// now that a failed callback stays open for retries, leaving the question unsettled forever).
    function test_Resolve_ThenSettleCompletes() public {
        (bytes32 id, bytes32 cond) = _prepare(3);
        _answer(id, 2);
        adapter.resolve(id);
        assertEq(ct.payoutNumerators(cond, 2), 1);
        vm.recordLogs();
        oracle.settle(id);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(logs.length, 1, "no second PayoutsReported");
        assertEq(logs[0].topics[0], IAgentOracle.Settled.selector);
        assertEq(logs[0].data, abi.encode(uint16(2), true));
        assertTrue(oracle.getQuestion(id).settled);
        assertEq(ct.payoutNumerators(cond, 2), 1);
    }

    function test_Settle_RetryAfterFailedCallbackReports() public {
        vm.prank(owner);
        oracle.setCallbackGasLimit(50_000); // too little for reportPayouts
        (bytes32 id, bytes32 cond) = _prepare(2);
        _answer(id, 1);
        oracle.settle(id);
        assertEq(ct.payoutDenominator(cond), 0);
        vm.prank(owner);
        oracle.setCallbackGasLimit(500_000);
        vm.expectEmit(address(oracle));
        emit IAgentOracle.Settled(id, address(adapter), 1, true);
        oracle.settle(id);
        assertEq(ct.payoutNumerators(cond, 1), 1);
    }

    function test_RevertWhen_ResolveNotFinal() public {
        (bytes32 id,) = _prepare(2);
        _propose(id, 0);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Proposed));
        adapter.resolve(id);
    }

    function test_RevertWhen_ResolveTwice() public {
        (bytes32 id,) = _prepare(2);
        _answer(id, 0);
        adapter.resolve(id);
        vm.expectRevert(bytes("payout denominator already set"));
        adapter.resolve(id);
    }

    function test_RevertWhen_ResolveConditionNotPrepared() public {
        // a question asked directly on the oracle, never prepared on ConditionalTokens
        bytes32 id = _askAndPropose(0);
        vm.warp(T0 + LIVENESS);
        bytes32 cond = keccak256(abi.encodePacked(address(adapter), id, uint256(2)));
        vm.expectRevert(abi.encodeWithSelector(IConditionalTokensAdapter.ConditionNotPrepared.selector, cond));
        adapter.resolve(id);
    }

    // ---------------------------------------------------------------------------------------------------------
    // payoutsFor
    // ---------------------------------------------------------------------------------------------------------

    function test_PayoutsFor() public view {
        uint256[] memory p = adapter.payoutsFor(2, 0);
        assertEq(p.length, 2);
        assertEq(p[0], 1);
        assertEq(p[1], 0);
        p = adapter.payoutsFor(2, INVALID);
        assertEq(p[0], 1);
        assertEq(p[1], 1);
    }

    function test_RevertWhen_PayoutsForOutcomeOutOfRange() public {
        vm.expectRevert(abi.encodeWithSelector(IConditionalTokensAdapter.OutcomeOutOfRange.selector, 2, 2));
        adapter.payoutsFor(2, 2);
    }

    function test_Immutables() public view {
        assertEq(address(adapter.oracle()), address(oracle));
        assertEq(address(adapter.conditionalTokens()), address(ct));
    }
}
