// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";

/// @notice A consumer contract that reads a final result and records what the read cost it.
contract GasReader {
    IAgentOracle public immutable oracle;
    uint256 public lastReadGas;
    uint16 public lastOutcome;

    constructor(IAgentOracle oracle_) {
        oracle = oracle_;
    }

    /// @notice A no-op transaction, used to detect whether calls run as isolated transactions.
    function ping() external {}

    /// @notice Reads the final outcome of `questionId`; `lastReadGas` is the gas of the whole external read,
    /// including the cold access to the oracle and the ABI decoding of the result.
    function read(bytes32 questionId) external returns (uint16 outcome) {
        uint256 before = gasleft();
        (outcome,,) = oracle.finalResult(questionId);
        uint256 used = before - gasleft();
        lastReadGas = used;
        lastOutcome = outcome;
    }
}
