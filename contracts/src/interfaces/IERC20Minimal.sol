// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title IERC20Minimal
/// @notice The ERC-20 functions the oracle uses for bonds.
interface IERC20Minimal {
    /// @notice Balance of an account.
    /// @param account The account.
    /// @return The balance.
    function balanceOf(address account) external view returns (uint256);

    /// @notice Transfers tokens.
    /// @param to The recipient.
    /// @param amount The amount.
    /// @return True on success (some tokens return nothing).
    function transfer(address to, uint256 amount) external returns (bool);

    /// @notice Transfers tokens on behalf of `from`.
    /// @param from The owner.
    /// @param to The recipient.
    /// @param amount The amount.
    /// @return True on success (some tokens return nothing).
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}
