// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test, console} from "forge-std/Test.sol";
import {AgentOracle} from "../../src/AgentOracle.sol";
import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";
import {MockERC20} from "../mocks/MockERC20.sol";
import {OracleHandler} from "./OracleHandler.sol";

/// @notice Stateful invariants of AgentOracle under random sequences of actions (see OracleHandler).
contract AgentOracleInvariantTest is Test {
    AgentOracle internal oracle;
    MockERC20 internal token;
    OracleHandler internal handler;
    address internal owner = makeAddr("owner");
    address internal treasury = makeAddr("treasury");

    function setUp() public {
        vm.warp(1_700_000_000);
        oracle = new AgentOracle(owner, treasury, address(0), 1 ether, 1 hours);
        token = new MockERC20("Bond", "BND");
        address[] memory actors = new address[](6);
        for (uint256 i; i < actors.length; ++i) {
            actors[i] = makeAddr(string(abi.encodePacked("actor", vm.toString(i))));
        }
        vm.startPrank(owner);
        oracle.grantRole(actors[0], IAgentOracle.Role.Reporter);
        oracle.grantRole(actors[1], IAgentOracle.Role.Reporter);
        oracle.grantRole(actors[2], IAgentOracle.Role.Arbiter);
        oracle.setPrimaryReporter(actors[0]);
        vm.stopPrank();
        handler = new OracleHandler(oracle, token, owner, treasury, actors);

        bytes4[] memory selectors = new bytes4[](16);
        selectors[0] = OracleHandler.request.selector;
        selectors[1] = OracleHandler.request.selector; // weight requests and proposals up
        selectors[2] = OracleHandler.propose.selector;
        selectors[3] = OracleHandler.propose.selector;
        selectors[4] = OracleHandler.proposeBatch.selector;
        selectors[5] = OracleHandler.dispute.selector;
        selectors[6] = OracleHandler.rule.selector;
        selectors[7] = OracleHandler.settle.selector;
        selectors[8] = OracleHandler.withdraw.selector;
        selectors[9] = OracleHandler.warp.selector;
        selectors[10] = OracleHandler.setBond.selector;
        selectors[11] = OracleHandler.flag.selector;
        selectors[12] = OracleHandler.unflag.selector;
        selectors[13] = OracleHandler.resolveManually.selector;
        selectors[14] = OracleHandler.toggleConsumer.selector;
        selectors[15] = OracleHandler.force.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: selectors}));
        targetContract(address(handler));
    }

    /// @notice A final answer (outcome, proof hash, finalization time) never changes and never stops being final.
    function invariant_FinalAnswerNeverChanges() public {
        handler.observe();
        assertFalse(handler.finalChanged());
    }

    /// @notice A question is answered at most once per round.
    function invariant_AtMostOneProposalPerRound() public view {
        assertLe(handler.maxProposalsInRound(), 1);
    }

    /// @notice Only reporters propose.
    function invariant_OnlyReportersPropose() public view {
        assertFalse(handler.unauthorizedProposal());
    }

    /// @notice Only the arbiter settles a dispute.
    function invariant_OnlyArbiterRules() public view {
        assertFalse(handler.unauthorizedRuling());
    }

    /// @notice A dispute never takes a bond in another token or above the disputer's `maxBond`.
    function invariant_DisputeNeverChargesAboveLimit() public view {
        assertFalse(handler.bondAboveLimit());
    }

    /// @notice A manual resolution refunds an open dispute's bond in full and never credits the treasury.
    function invariant_ManualResolutionAlwaysRefunds() public view {
        assertFalse(handler.manualForfeit());
    }

    /// @notice A callback is delivered at most once, and a question with a callback is settled exactly when its
    /// callback has been delivered (a failed one stays open for a retry).
    function invariant_CallbackDeliveredAtMostOnceAndSettledOnlyWhenDelivered() public view {
        uint256 ids = handler.idCount();
        for (uint256 i; i < ids; ++i) {
            bytes32 id = handler.ids(i);
            IAgentOracle.QuestionView memory q = oracle.getQuestion(id);
            if (q.callback == address(0)) continue;
            uint256 deliveries = handler.consumer().deliveries(id);
            assertLe(deliveries, 1);
            assertEq(q.settled, deliveries == 1);
        }
    }

    /// @notice The contract's ETH and token balances cover the open bonds plus the unclaimed credits. Only "at
    /// least": ETH can be forced in (self-destruct, block rewards) and tokens sent directly, and nobody is credited
    /// for those. The surplus is exactly what the handler forced in, so no bond or credit is ever missing.
    function invariant_BalancesCoverBondsAndCredits() public view {
        uint256 n = handler.bondTokenCount();
        for (uint256 t; t < n; ++t) {
            address tok = handler.bondTokens(t);
            uint256 owed;
            uint256 ids = handler.idCount();
            for (uint256 i; i < ids; ++i) {
                IAgentOracle.DisputeInfo memory d = oracle.getDispute(handler.ids(i));
                if (d.disputer != address(0) && d.token == tok) owed += d.amount;
            }
            uint256 actors = handler.actorCount();
            for (uint256 i; i < actors; ++i) {
                owed += oracle.credits(handler.actors(i), tok);
            }
            owed += oracle.credits(treasury, tok);
            uint256 balance = tok == address(0) ? address(oracle).balance : token.balanceOf(address(oracle));
            assertGe(balance, owed);
            assertEq(balance - owed, handler.forced(tok), "surplus = what was sent outside dispute");
        }
    }

    /// @notice A stored question always has a sane outcome count and round.
    function invariant_QuestionsWellFormed() public view {
        uint256 ids = handler.idCount();
        for (uint256 i; i < ids; ++i) {
            IAgentOracle.QuestionView memory q = oracle.getQuestion(handler.ids(i));
            assertGe(q.outcomeCount, 2);
            assertLe(q.outcomeCount, 256);
            assertLe(q.round, 15);
            assertTrue(q.status != IAgentOracle.Status.None);
        }
    }

    /// @notice Logs how often each action succeeded (run with -vv), to check the handler reaches deep states.
    function afterInvariant() external view {
        console.log("requests", handler.successes(OracleHandler.request.selector));
        console.log("proposals", handler.successes(OracleHandler.propose.selector));
        console.log("batches", handler.successes(OracleHandler.proposeBatch.selector));
        console.log("disputes", handler.successes(OracleHandler.dispute.selector));
        console.log("rulings", handler.successes(OracleHandler.rule.selector));
        console.log("settlements", handler.successes(OracleHandler.settle.selector));
        console.log("failed callbacks", handler.failedCallbacks());
        console.log("withdrawals", handler.successes(OracleHandler.withdraw.selector));
        console.log("flags", handler.successes(OracleHandler.flag.selector));
        console.log("manual", handler.successes(OracleHandler.resolveManually.selector));
    }
}
