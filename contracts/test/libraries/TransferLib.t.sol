// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "forge-std/Test.sol";
import {TransferLib} from "../../src/libraries/TransferLib.sol";
import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";
import {MockERC20, FalseToken} from "../mocks/MockERC20.sol";
import {EthRejecter} from "../mocks/MockConsumer.sol";

contract TransferHarness {
    receive() external payable {}

    function transferOut(address token, address to, uint256 amount) external {
        TransferLib.transferOut(token, to, amount);
    }

    function transferIn(address token, address from, uint256 amount) external {
        TransferLib.transferIn(token, from, amount);
    }

    function balanceOfSelf(address token) external view returns (uint256) {
        return TransferLib.balanceOfSelf(token);
    }

    function isToken(address token) external view returns (bool) {
        return TransferLib.isToken(token);
    }
}

contract TransferLibTest is Test {
    TransferHarness internal h = new TransferHarness();
    MockERC20 internal token = new MockERC20("T", "T");
    address internal alice = makeAddr("alice");

    function testFuzz_TransferOutEth(uint96 amount) public {
        vm.deal(address(h), amount);
        h.transferOut(address(0), alice, amount);
        assertEq(alice.balance, amount);
    }

    function testFuzz_TransferOutToken(uint96 amount, bool returnNothing) public {
        token.setReturnNothing(returnNothing);
        token.mint(address(h), amount);
        h.transferOut(address(token), alice, amount);
        assertEq(token.balanceOf(alice), amount);
        assertEq(h.balanceOfSelf(address(token)), 0);
    }

    function testFuzz_TransferIn(uint96 amount) public {
        token.mint(alice, amount);
        vm.prank(alice);
        token.approve(address(h), amount);
        h.transferIn(address(token), alice, amount);
        assertEq(h.balanceOfSelf(address(token)), amount);
    }

    function test_BalanceOfSelf_NoCodeIsZero() public {
        assertEq(h.balanceOfSelf(makeAddr("empty")), 0);
    }

    function test_RevertWhen_TransferOutEthRejected() public {
        vm.deal(address(h), 1);
        address r = address(new EthRejecter());
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TransferFailed.selector, address(0), r, 1));
        h.transferOut(address(0), r, 1);
    }

    function test_RevertWhen_TransferOutTokenReturnsFalse() public {
        FalseToken f = new FalseToken();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TransferFailed.selector, address(f), alice, 1));
        h.transferOut(address(f), alice, 1);
    }

    function test_RevertWhen_TransferOutTokenHasNoCode() public {
        address empty = makeAddr("empty");
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TransferFailed.selector, empty, alice, 1));
        h.transferOut(empty, alice, 1);
    }

    function test_RevertWhen_TransferInTokenReverts() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.TransferFailed.selector, address(token), address(h), 1));
        h.transferIn(address(token), alice, 1);
    }

    function test_IsToken() public {
        assertTrue(h.isToken(address(token)));
        assertTrue(h.isToken(address(new FalseToken()))); // answers balanceOf; its transfers fail at dispute time
        assertFalse(h.isToken(makeAddr("eoa")));
        assertFalse(h.isToken(address(new EthRejecter()))); // code without balanceOf
        assertFalse(h.isToken(address(0)));
    }
}
