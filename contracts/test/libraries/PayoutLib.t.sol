// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "forge-std/Test.sol";
import {PayoutLib} from "../../src/libraries/PayoutLib.sol";
import {IConditionalTokensAdapter} from "../../src/interfaces/IConditionalTokensAdapter.sol";

contract PayoutHarness {
    function payouts(uint16 n, uint16 o) external pure returns (uint256[] memory) {
        return PayoutLib.payouts(n, o);
    }
}

contract PayoutLibTest is Test {
    PayoutHarness internal h = new PayoutHarness();

    function test_Binary() public view {
        uint256[] memory yes = h.payouts(2, 0);
        uint256[] memory no = h.payouts(2, 1);
        uint256[] memory inv = h.payouts(2, 65535);
        assertEq(abi.encode(yes), abi.encode(_two(1, 0)));
        assertEq(abi.encode(no), abi.encode(_two(0, 1)));
        assertEq(abi.encode(inv), abi.encode(_two(1, 1)));
    }

    function testFuzz_OneHot(uint16 n, uint16 o) public view {
        n = uint16(bound(n, 2, 256));
        o = uint16(bound(o, 0, n - 1));
        uint256[] memory p = h.payouts(n, o);
        assertEq(p.length, n);
        uint256 sum;
        for (uint256 i; i < n; ++i) {
            assertEq(p[i], i == o ? 1 : 0);
            sum += p[i];
        }
        assertEq(sum, 1);
    }

    function testFuzz_Invalid(uint16 n) public view {
        n = uint16(bound(n, 2, 256));
        uint256[] memory p = h.payouts(n, 65535);
        for (uint256 i; i < n; ++i) {
            assertEq(p[i], 1);
        }
    }

    function testFuzz_RevertWhen_OutcomeOutOfRange(uint16 n, uint16 o) public {
        n = uint16(bound(n, 2, 256));
        vm.assume(o >= n && o != 65535);
        vm.expectRevert(abi.encodeWithSelector(IConditionalTokensAdapter.OutcomeOutOfRange.selector, n, o));
        h.payouts(n, o);
    }

    function _two(uint256 a, uint256 b) internal pure returns (uint256[] memory r) {
        r = new uint256[](2);
        (r[0], r[1]) = (a, b);
    }
}
