// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IConditionalTokensAdapter} from "../interfaces/IConditionalTokensAdapter.sol";

/// @title PayoutLib
/// @notice Conditional Tokens payout vectors for oracle outcomes.
library PayoutLib {
    /// @notice The INVALID outcome sentinel (65535).
    uint16 internal constant INVALID_OUTCOME = type(uint16).max;

    /// @notice One-hot vector with a 1 at `outcome` (binary: YES = 0 -> [1,0], NO = 1 -> [0,1]); all ones for
    /// INVALID ([1,1] for binary).
    function payouts(uint16 outcomeCount, uint16 outcome) internal pure returns (uint256[] memory p) {
        p = new uint256[](outcomeCount);
        if (outcome == INVALID_OUTCOME) {
            for (uint256 i; i < outcomeCount; ++i) {
                p[i] = 1;
            }
        } else {
            if (outcome >= outcomeCount) revert IConditionalTokensAdapter.OutcomeOutOfRange(outcomeCount, outcome);
            p[outcome] = 1;
        }
    }
}
