// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "forge-std/Test.sol";
import {AgentOracle} from "../../src/AgentOracle.sol";
import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";
import {MockERC20} from "../mocks/MockERC20.sol";

/// @notice Shared fixture: an oracle with an owner, treasury, reporter (primary), arbiter, pauser and helpers.
abstract contract OracleBase is Test {
    AgentOracle internal oracle;
    MockERC20 internal token;

    address internal owner = makeAddr("owner");
    address internal treasury = makeAddr("treasury");
    address internal reporter = makeAddr("reporter");
    address internal reporter2 = makeAddr("reporter2");
    address internal arbiter = makeAddr("arbiter");
    address internal pauser = makeAddr("pauser");
    address internal requester = makeAddr("requester");
    address internal disputer = makeAddr("disputer");
    address internal stranger = makeAddr("stranger");

    uint96 internal constant BOND = 1 ether;
    uint32 internal constant MIN_LIVENESS = 1 hours;
    uint32 internal constant LIVENESS = 2 hours;
    uint32 internal constant T0 = 1_700_000_000;
    uint16 internal constant INVALID = 65535;
    bytes20 internal constant PROOF = bytes20(keccak256("proof"));

    bytes internal constant TEXT = "Will it rain in Paris on 2030-01-01? Resolves YES if Meteo-France reports rain.";

    function setUp() public virtual {
        vm.warp(T0);
        oracle = new AgentOracle(owner, treasury, address(0), BOND, MIN_LIVENESS);
        token = new MockERC20("Bond", "BND");
        vm.startPrank(owner);
        oracle.grantRole(reporter, IAgentOracle.Role.Reporter);
        oracle.grantRole(reporter2, IAgentOracle.Role.Reporter);
        oracle.grantRole(arbiter, IAgentOracle.Role.Arbiter);
        oracle.grantRole(pauser, IAgentOracle.Role.Pauser);
        oracle.setPrimaryReporter(reporter);
        vm.stopPrank();
        vm.deal(disputer, 100 ether);
        vm.deal(stranger, 100 ether);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Helpers
    // ---------------------------------------------------------------------------------------------------------

    function _text(uint256 n) internal pure returns (bytes memory t) {
        t = new bytes(n);
        for (uint256 i; i < n; ++i) {
            t[i] = bytes1(uint8(65 + i % 26));
        }
    }

    function _ask(bytes32 salt) internal returns (bytes32 id) {
        vm.prank(requester);
        id = oracle.request(TEXT, 2, 0, LIVENESS, address(0), salt);
    }

    function _ask() internal returns (bytes32) {
        return _ask(bytes32(0));
    }

    function _askWith(uint16 outcomes, uint32 earliest, uint32 liveness, address callback)
        internal
        returns (bytes32 id)
    {
        vm.prank(requester);
        id = oracle.request(TEXT, outcomes, earliest, liveness, callback, bytes32(0));
    }

    function _propose(bytes32 id, uint16 outcome) internal {
        vm.prank(reporter);
        oracle.propose(id, outcome, PROOF);
    }

    function _askAndPropose(uint16 outcome) internal returns (bytes32 id) {
        id = _ask();
        _propose(id, outcome);
    }

    function _disputeEth(bytes32 id) internal {
        vm.prank(disputer);
        oracle.dispute{value: BOND}(id, address(0), BOND);
    }

    function _disputeToken(bytes32 id, uint96 maxBond) internal {
        vm.prank(disputer);
        oracle.dispute(id, address(token), maxBond);
    }

    function _askProposeDispute(uint16 outcome) internal returns (bytes32 id) {
        id = _askAndPropose(outcome);
        _disputeEth(id);
    }

    function _final(bytes32 id) internal view returns (uint16 outcome, bytes20 proofHash, uint32 finalizedAt) {
        return oracle.finalResult(id);
    }

    function _status(bytes32 id) internal view returns (IAgentOracle.Status) {
        return oracle.status(id);
    }

    function _useTokenBond(uint96 amount) internal {
        vm.prank(owner);
        oracle.setBond(address(token), amount);
        token.mint(disputer, 1000 ether);
        vm.prank(disputer);
        token.approve(address(oracle), type(uint256).max);
    }

    function _sign(uint256 pk, bytes32 digest) internal pure returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(pk, digest);
        return abi.encodePacked(r, s, v);
    }

    function assertEq(IAgentOracle.Status a, IAgentOracle.Status b) internal pure {
        assertEq(uint8(a), uint8(b), "status");
    }
}
