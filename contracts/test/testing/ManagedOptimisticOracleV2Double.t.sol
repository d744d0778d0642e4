// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "forge-std/Test.sol";
import {ManagedOptimisticOracleV2Double, IUmaFinder} from "../../src/testing/ManagedOptimisticOracleV2Double.sol";
import {ManagedProposerWhitelist, IManagedAddressWhitelist} from "../../src/testing/ManagedProposerWhitelist.sol";
import {MockERC20} from "../mocks/MockERC20.sol";

/// @notice UMA's Finder, Store, identifier and collateral whitelists and the vote, in one stand-in.
contract UmaSystemStandIn {
    uint256 public constant FINAL_FEE = 5 ether;
    mapping(bytes32 => bool) public asked;
    mapping(bytes32 => int256) public prices;
    mapping(bytes32 => bool) public priced;

    function getImplementationAddress(bytes32) external view returns (address) {
        return address(this);
    }

    function computeFinalFee(address) external pure returns (uint256) {
        return FINAL_FEE;
    }

    function isIdentifierSupported(bytes32) external pure returns (bool) {
        return true;
    }

    function isOnWhitelist(address) external pure returns (bool) {
        return true;
    }

    function requestPrice(bytes32 identifier, uint256 time, bytes memory data) external {
        asked[keccak256(abi.encode(identifier, time, data))] = true;
    }

    function hasPrice(bytes32 identifier, uint256 time, bytes memory data) external view returns (bool) {
        return priced[keccak256(abi.encode(identifier, time, data))];
    }

    function getPrice(bytes32 identifier, uint256 time, bytes memory data) external view returns (int256) {
        return prices[keccak256(abi.encode(identifier, time, data))];
    }
}

contract ManagedOptimisticOracleV2DoubleTest is Test {
    bytes32 internal constant ID = "YES_OR_NO_QUERY";
    bytes internal constant DATA = "q: title: Did it happen?";
    uint256 internal constant BOND = 100 ether;
    uint256 internal constant LIVENESS = 7200;
    address internal constant LISTED = address(0xA11CE);
    address internal constant STRANGER = address(0xBAD);

    ManagedOptimisticOracleV2Double internal oracle;
    ManagedProposerWhitelist internal proposers;
    MockERC20 internal token;
    uint256 internal timestamp;

    function setUp() public {
        vm.warp(1_000_000);
        UmaSystemStandIn uma = new UmaSystemStandIn();
        proposers = new ManagedProposerWhitelist(true);
        proposers.addToWhitelist(LISTED);
        ManagedProposerWhitelist anyone = new ManagedProposerWhitelist(false);
        oracle = new ManagedOptimisticOracleV2Double(
            LIVENESS,
            IUmaFinder(address(uma)),
            IManagedAddressWhitelist(address(proposers)),
            IManagedAddressWhitelist(address(anyone)),
            300
        );
        token = new MockERC20("Bond", "BOND");
        oracle.setAllowedBondRange(address(token), ManagedOptimisticOracleV2Double.BondRange(1, 1000 ether));
        oracle.addRequestManager(address(this));
        timestamp = block.timestamp;
        oracle.requestPrice(ID, timestamp, DATA, address(token), 0);
        oracle.setBond(ID, timestamp, DATA, BOND);
        for (uint256 i = 0; i < 2; ++i) {
            address who = i == 0 ? LISTED : STRANGER;
            token.mint(who, 10_000 ether);
            vm.prank(who);
            token.approve(address(oracle), type(uint256).max);
        }
    }

    function test_aProposerOffTheWhitelistIsRefusedByItsSelector() public {
        vm.prank(STRANGER);
        vm.expectRevert(bytes4(0x6ffe5a95)); // ProposerNotWhitelisted()
        oracle.proposePrice(address(this), ID, timestamp, DATA, 1e18);
        (address[] memory listed, bool enabled) = oracle.getProposerWhitelistWithEnabledStatus(address(this), ID, DATA);
        assertTrue(enabled);
        assertEq(listed.length, 1);
        assertEq(listed[0], LISTED);
    }

    function test_theRequestManagersBondAndLivenessApplyWhenProposed() public {
        oracle.requestManagerSetBond(address(this), ID, DATA, address(token), 400 ether);
        oracle.requestManagerSetCustomLiveness(address(this), ID, DATA, 900);
        assertEq(oracle.getRequest(address(this), ID, timestamp, DATA).requestSettings.bond, BOND);
        uint256 before = token.balanceOf(LISTED);
        vm.prank(LISTED);
        uint256 total = oracle.proposePrice(address(this), ID, timestamp, DATA, 1e18);
        assertEq(total, 400 ether + 5 ether);
        assertEq(before - token.balanceOf(LISTED), total);
        assertEq(oracle.getRequest(address(this), ID, timestamp, DATA).expirationTime, block.timestamp + 900);
        vm.expectRevert(ManagedOptimisticOracleV2Double.BondExceedsMaximumBond.selector);
        oracle.requestManagerSetBond(address(this), ID, DATA, address(token), 1001 ether);
    }

    function test_aPerRequestWhitelistReplacesTheDefault() public {
        ManagedProposerWhitelist custom = new ManagedProposerWhitelist(true);
        custom.addToWhitelist(STRANGER);
        oracle.requestManagerSetProposerWhitelist(address(this), ID, DATA, address(custom));
        vm.prank(LISTED);
        vm.expectRevert(ManagedOptimisticOracleV2Double.ProposerNotWhitelisted.selector);
        oracle.proposePrice(address(this), ID, timestamp, DATA, 1e18);
        vm.prank(STRANGER);
        oracle.proposePrice(address(this), ID, timestamp, DATA, 1e18);
    }

    function test_onlyTheResolverSettlesAndAnExpiredProposalStaysDisputable() public {
        vm.prank(LISTED);
        oracle.proposePrice(address(this), ID, timestamp, DATA, 1e18);
        vm.warp(block.timestamp + LIVENESS + 1);
        assertEq(uint256(oracle.getState(address(this), ID, timestamp, DATA)), 3); // Expired
        vm.expectRevert(
            abi.encodeWithSelector(
                ManagedOptimisticOracleV2Double.AccessControlUnauthorizedAccount.selector,
                address(this),
                oracle.RESOLVER_ROLE()
            )
        );
        oracle.settle(address(this), ID, timestamp, DATA);
        vm.expectRevert(ManagedOptimisticOracleV2Double.RequestNotSettled.selector);
        oracle.settleAndGetPrice(ID, timestamp, DATA);
        // Past its liveness, not settled: still disputable.
        vm.prank(STRANGER);
        oracle.disputePrice(address(this), ID, timestamp, DATA);
        assertEq(uint256(oracle.getState(address(this), ID, timestamp, DATA)), 4); // Disputed
    }

    function test_theResolverSettlesAnExpiredProposal() public {
        oracle.addResolver(address(this));
        vm.prank(LISTED);
        oracle.proposePrice(address(this), ID, timestamp, DATA, 1e18);
        vm.warp(block.timestamp + LIVENESS + 1);
        uint256 before = token.balanceOf(LISTED);
        oracle.settle(address(this), ID, timestamp, DATA);
        assertEq(token.balanceOf(LISTED) - before, BOND + 5 ether);
        assertEq(oracle.settleAndGetPrice(ID, timestamp, DATA), 1e18);
    }
}
