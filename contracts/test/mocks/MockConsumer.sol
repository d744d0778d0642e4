// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IOracleConsumer} from "../../src/interfaces/IOracleConsumer.sol";

/// @notice A settlement callback target whose behaviour tests choose.
contract MockConsumer is IOracleConsumer {
    enum Mode {
        Succeed,
        Revert,
        BurnGas,
        HugeRevert
    }

    Mode public mode;
    address public oracle;
    uint256 public calls;
    bytes32 public lastQuestionId;
    uint16 public lastOutcome;

    constructor(address oracle_) {
        oracle = oracle_;
    }

    function setMode(Mode m) external {
        mode = m;
    }

    function onOracleResult(bytes32 questionId, uint16 outcome) external {
        require(msg.sender == oracle, "not oracle");
        if (mode == Mode.Revert) revert("nope");
        if (mode == Mode.BurnGas) {
            while (true) {
                calls += 1;
            }
        }
        if (mode == Mode.HugeRevert) {
            assembly {
                revert(0, 1000000)
            }
        }
        calls += 1;
        lastQuestionId = questionId;
        lastOutcome = outcome;
    }
}

/// @notice Rejects ETH.
contract EthRejecter {
    receive() external payable {
        revert("no eth");
    }
}
