// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test, console} from "forge-std/Test.sol";
import {AgentOracle} from "../../src/AgentOracle.sol";
import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";
import {GasReader} from "./GasReader.sol";
import {ConditionalTokensAdapter} from "../../src/adapters/ConditionalTokensAdapter.sol";
import {IConditionalTokens} from "../../src/interfaces/IConditionalTokens.sol";

/// @notice The gas targets of issue 3, measured per transaction (21,000 intrinsic and calldata included).
/// @dev Meaningful only with `--isolate` (each call its own transaction, cold storage): `scripts/check` runs
/// `forge snapshot --isolate --match-path 'test/gas/*' --check`, which asserts the targets and guards
/// `.gas-snapshot` and `snapshots/gas.json`. Under a plain `forge test` these tests skip themselves.
contract GasTest is Test {
    AgentOracle internal oracle;
    GasReader internal reader;
    address internal owner = makeAddr("owner");
    address internal reporter = makeAddr("reporter");
    address internal reporter2 = makeAddr("reporter2");
    address internal market = makeAddr("market");

    uint256 internal constant TARGET_REQUEST_AND_PROPOSE = 90_000;
    uint256 internal constant TARGET_BATCH_PER_QUESTION = 15_000;
    uint256 internal constant TARGET_READ = 10_000;
    uint32 internal constant LIVENESS = 2 hours;

    bytes internal text;

    function setUp() public {
        vm.warp(1_760_000_000);
        oracle = new AgentOracle(owner, makeAddr("treasury"), address(0), 1 ether, 1 hours);
        reader = new GasReader(oracle);
        vm.startPrank(owner);
        oracle.grantRole(reporter, IAgentOracle.Role.Reporter);
        oracle.grantRole(reporter2, IAgentOracle.Role.Reporter);
        oracle.setPrimaryReporter(reporter);
        vm.stopPrank();
        // 250 bytes of ASCII text, every byte non-zero (the most expensive calldata)
        text = new bytes(250);
        for (uint256 i; i < 250; ++i) {
            text[i] = bytes1(uint8(65 + i % 26));
        }
    }

    bytes20 internal constant PROOF_HASH = bytes20(hex"9f2c1e7a44b0d3c85e61f0a7b2d4c6e8a1b3c5d7");

    /// @dev Skips the test unless every call is its own transaction (`--isolate`): a no-op call then costs at least
    /// the 21,000 intrinsic gas.
    modifier isolated() {
        reader.ping();
        if (vm.lastCallGas().gasTotalUsed < 21_000) vm.skip(true, "gas targets need --isolate (see scripts/check)");
        _;
    }

    /// @dev Gas of the last call as a transaction (intrinsic and calldata included under --isolate).
    function _txGas() internal view returns (uint256) {
        return vm.lastCallGas().gasTotalUsed;
    }

    function _request(bytes32 salt) internal returns (bytes32 id) {
        vm.prank(market);
        id = oracle.request(text, 2, uint32(block.timestamp), LIVENESS, address(0), salt);
    }

    function test_Gas_RequestAndProposeBinary250ByteText() public isolated {
        bytes32 id = _request(0);
        uint256 requestGas = _txGas();
        vm.prank(reporter);
        oracle.propose(id, 0, PROOF_HASH);
        uint256 proposeGas = _txGas();
        uint256 total = requestGas + proposeGas;
        console.log("request", requestGas);
        console.log("propose (primary reporter)", proposeGas);
        console.log("request + propose", total);
        vm.snapshotValue("gas", "request", requestGas);
        vm.snapshotValue("gas", "propose", proposeGas);
        vm.snapshotValue("gas", "requestPlusPropose", total);
        assertLe(total, TARGET_REQUEST_AND_PROPOSE, "request + proposal over target");
        // final by time, with no further transaction
        vm.warp(block.timestamp + LIVENESS);
        assertEq(uint8(oracle.status(id)), uint8(IAgentOracle.Status.Final));
    }

    function test_Gas_ProposeByOtherReporter() public isolated {
        bytes32 id = _request(0);
        _txGas();
        vm.prank(reporter2);
        oracle.propose(id, 1, PROOF_HASH);
        uint256 g = _txGas();
        console.log("propose (other reporter)", g);
        vm.snapshotValue("gas", "proposeOtherReporter", g);
    }

    function test_Gas_BatchOf20Proposals() public isolated {
        IAgentOracle.ProposalInput[] memory ps = new IAgentOracle.ProposalInput[](20);
        for (uint256 i; i < 20; ++i) {
            ps[i] = IAgentOracle.ProposalInput(_request(bytes32(i)), uint16(i % 2), bytes20(keccak256(abi.encode(i))));
        }
        vm.prank(reporter);
        oracle.proposeBatch(ps);
        uint256 g = _txGas();
        console.log("batch of 20", g);
        console.log("per question", g / 20);
        vm.snapshotValue("gas", "proposeBatch20", g);
        vm.snapshotValue("gas", "proposeBatchPerQuestion", g / 20);
        assertLe(g / 20, TARGET_BATCH_PER_QUESTION, "batched proposal over target");
    }

    function test_Gas_ReadFinalResultFromContract() public isolated {
        bytes32 id = _request(0);
        vm.prank(reporter);
        oracle.propose(id, 1, PROOF_HASH);
        vm.warp(block.timestamp + LIVENESS);
        reader.read(id);
        _txGas();
        uint256 g = reader.lastReadGas();
        console.log("read final result from a contract", g);
        vm.snapshotValue("gas", "readFinalResult", g);
        assertEq(reader.lastOutcome(), 1);
        assertLe(g, TARGET_READ, "read over target");
    }

    function test_Gas_ConditionalTokensPath() public isolated {
        bytes memory code = vm.parseJsonBytes(vm.readFile("test/fixtures/ConditionalTokens.json"), ".bytecode");
        address ct;
        assembly {
            ct := create(0, add(code, 0x20), mload(code))
        }
        ConditionalTokensAdapter adapter = new ConditionalTokensAdapter(oracle, IConditionalTokens(ct));
        vm.prank(market);
        (bytes32 id,) = adapter.prepareQuestion(text, 2, uint32(block.timestamp), LIVENESS, bytes32(0));
        uint256 prepare = _txGas();
        vm.prank(reporter);
        oracle.propose(id, 0, PROOF_HASH);
        uint256 propose = _txGas();
        vm.warp(block.timestamp + LIVENESS);
        oracle.settle(id);
        uint256 settle = _txGas();
        assertEq(
            IConditionalTokens(ct).payoutDenominator(IConditionalTokens(ct).getConditionId(address(adapter), id, 2)), 1
        );
        console.log("adapter prepareQuestion (request + prepareCondition)", prepare);
        console.log("propose", propose);
        console.log("settle (reportPayouts via callback)", settle);
        console.log("total", prepare + propose + settle);
        vm.snapshotValue("gas", "adapterPrepare", prepare);
        vm.snapshotValue("gas", "adapterSettle", settle);
        vm.snapshotValue("gas", "adapterTotal", prepare + propose + settle);
    }

    function test_Gas_DisputeAndSettle() public isolated {
        bytes32 id = _request(0);
        vm.prank(reporter);
        oracle.propose(id, 1, PROOF_HASH);
        address disputer = makeAddr("disputer");
        vm.deal(disputer, 10 ether);
        vm.prank(disputer);
        oracle.dispute{value: 1 ether}(id, address(0), 1 ether);
        uint256 d = _txGas();
        vm.prank(owner);
        oracle.grantRole(owner, IAgentOracle.Role.Arbiter);
        vm.prank(owner);
        oracle.confirm(id);
        uint256 c = _txGas();
        oracle.settle(id);
        uint256 s = _txGas();
        console.log("dispute (ETH bond)", d);
        console.log("confirm", c);
        console.log("settle (no callback)", s);
        vm.snapshotValue("gas", "disputeEth", d);
        vm.snapshotValue("gas", "confirm", c);
        vm.snapshotValue("gas", "settleNoCallback", s);
    }
}
