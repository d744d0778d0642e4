// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "forge-std/Test.sol";
import {Deploy} from "../../script/Deploy.s.sol";
import {AgentOracle} from "../../src/AgentOracle.sol";
import {ConditionalTokensAdapter} from "../../src/adapters/ConditionalTokensAdapter.sol";
import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";

contract DeployTest is Test {
    Deploy internal script;

    function setUp() public {
        script = new Deploy();
    }

    /// @dev One test, so that no other test of this contract runs in parallel while the environment changes.
    function test_Run_DefaultsThenEnvironment() public {
        _defaults();
        _fromEnvironment();
        _rejectsValuesThatDoNotFit();
    }

    function _defaults() internal {
        (AgentOracle oracle, ConditionalTokensAdapter adapter) = script.run();
        assertEq(address(adapter), address(0));
        assertEq(oracle.owner(), address(this));
        assertEq(oracle.treasury(), address(this));
        (address t, uint96 a) = oracle.bond();
        assertEq(t, address(0));
        assertEq(a, 0.1 ether);
        (,,, uint32 minLiveness,,) = oracle.config();
        assertEq(minLiveness, 1 hours);
    }

    function _fromEnvironment() internal {
        address owner = makeAddr("owner");
        address reporter = makeAddr("reporter");
        address arbiter = makeAddr("arbiter");
        address pauser = makeAddr("pauser");
        address ct = makeAddr("ct");
        vm.setEnv("OWNER", vm.toString(owner));
        vm.setEnv("TREASURY", vm.toString(makeAddr("treasury")));
        vm.setEnv("BOND_AMOUNT", "5");
        vm.setEnv("MIN_LIVENESS", "600");
        vm.setEnv("REPORTER", vm.toString(reporter));
        vm.setEnv("ARBITER", vm.toString(arbiter));
        vm.setEnv("PAUSER", vm.toString(pauser));
        vm.setEnv("CONDITIONAL_TOKENS", vm.toString(ct));
        (AgentOracle oracle, ConditionalTokensAdapter adapter) = script.run();
        assertEq(oracle.pendingOwner(), owner);
        assertEq(oracle.treasury(), makeAddr("treasury"));
        assertTrue(oracle.hasRole(reporter, IAgentOracle.Role.Reporter));
        assertEq(oracle.primaryReporter(), reporter);
        assertTrue(oracle.hasRole(arbiter, IAgentOracle.Role.Arbiter));
        assertTrue(oracle.hasRole(pauser, IAgentOracle.Role.Pauser));
        assertEq(address(adapter.oracle()), address(oracle));
        assertEq(address(adapter.conditionalTokens()), ct);
        (, uint96 a) = oracle.bond();
        assertEq(a, 5);
        vm.prank(owner);
        oracle.acceptOwnership();
        assertEq(oracle.owner(), owner);
    }

    /// @dev The script used to cast with `uint96(...)` / `uint32(...)`: 2^96 + 5 deployed a bond of 5.
    function _rejectsValuesThatDoNotFit() internal {
        vm.setEnv("BOND_AMOUNT", vm.toString(uint256(type(uint96).max) + 6));
        vm.expectRevert(bytes("BOND_AMOUNT does not fit uint96"));
        script.run();
        vm.setEnv("BOND_AMOUNT", "5");
        vm.setEnv("MIN_LIVENESS", vm.toString(uint256(type(uint32).max) + 601));
        vm.expectRevert(bytes("MIN_LIVENESS does not fit uint32"));
        script.run();
        vm.setEnv("MIN_LIVENESS", "600");
    }
}
