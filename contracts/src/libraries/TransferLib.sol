// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IAgentOracle} from "../interfaces/IAgentOracle.sol";
import {IERC20Minimal} from "../interfaces/IERC20Minimal.sol";

/// @title TransferLib
/// @notice ETH and ERC-20 transfers that accept tokens returning nothing and revert on failure.
library TransferLib {
    /// @notice Sends `amount` of `token` (zero address = ETH) to `to`.
    function transferOut(address token, address to, uint256 amount) internal {
        bool ok;
        if (token == address(0)) {
            assembly ("memory-safe") {
                ok := call(gas(), to, amount, 0, 0, 0, 0)
            }
        } else {
            ok = _callToken(token, abi.encodeCall(IERC20Minimal.transfer, (to, amount)));
        }
        if (!ok) revert IAgentOracle.TransferFailed(token, to, amount);
    }

    /// @notice Pulls `amount` of `token` from `from` into this contract.
    function transferIn(address token, address from, uint256 amount) internal {
        if (!_callToken(token, abi.encodeCall(IERC20Minimal.transferFrom, (from, address(this), amount)))) {
            revert IAgentOracle.TransferFailed(token, address(this), amount);
        }
    }

    /// @notice This contract's balance of `token`; 0 when the token has no code or does not answer.
    function balanceOfSelf(address token) internal view returns (uint256 amount) {
        bytes memory data = abi.encodeCall(IERC20Minimal.balanceOf, (address(this)));
        assembly ("memory-safe") {
            mstore(0, 0)
            let ok := staticcall(gas(), token, add(data, 0x20), mload(data), 0, 0x20)
            amount := mul(mload(0), and(ok, gt(returndatasize(), 0x1f)))
        }
    }

    /// @notice Whether `token` has code and answers `balanceOf` with a word, i.e. can plausibly hold bonds.
    function isToken(address token) internal view returns (bool ok) {
        bytes memory data = abi.encodeCall(IERC20Minimal.balanceOf, (address(this)));
        assembly ("memory-safe") {
            ok := staticcall(gas(), token, add(data, 0x20), mload(data), 0, 0x20)
            ok := and(and(ok, gt(returndatasize(), 0x1f)), gt(extcodesize(token), 0))
        }
    }

    /// @dev Calls a token; succeeds when the call succeeds and returns true or nothing (from a contract).
    function _callToken(address token, bytes memory data) private returns (bool ok) {
        assembly ("memory-safe") {
            ok := call(gas(), token, 0, add(data, 0x20), mload(data), 0, 0x20)
            // ok if: call succeeded and (returned 32 bytes equal to 1, or returned nothing from a contract)
            ok := and(
                ok,
                or(
                    and(eq(returndatasize(), 0x20), eq(mload(0), 1)),
                    and(iszero(returndatasize()), gt(extcodesize(token), 0))
                )
            )
        }
    }
}
