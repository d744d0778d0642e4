// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IOracleConsumer} from "../../src/interfaces/IOracleConsumer.sol";
import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";

/// @notice A settlement callback target whose behaviour tests choose.
contract MockConsumer is IOracleConsumer {
    enum Mode {
        Succeed,
        Revert,
        BurnGas,
        HugeRevert,
        Reenter, // calls settle again from inside the callback, then succeeds
        ReenterThenRevert // calls settle again from inside the callback, then reverts
    }

    Mode public mode;
    address public oracle;
    uint256 public calls;
    bytes32 public lastQuestionId;
    uint16 public lastOutcome;
    bytes public reentryError; // what the nested settle reverted with

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
        if (mode == Mode.Reenter || mode == Mode.ReenterThenRevert) {
            try IAgentOracle(oracle).settle(questionId) {
                reentryError = "";
            } catch (bytes memory reason) {
                reentryError = reason;
            }
            if (mode == Mode.ReenterThenRevert) revert("after reentry");
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

/// @notice Succeeds only if it is given at least `need` gas, then burns most of it: a settle caller that starved
/// the callback would make it fail.
contract GasHungryConsumer is IOracleConsumer {
    uint256 public immutable need;
    uint256 public calls;

    constructor(uint256 need_) {
        need = need_;
    }

    function onOracleResult(bytes32, uint16) external {
        require(gasleft() >= need, "starved");
        uint256 stop = gasleft() - (need - 30_000);
        while (gasleft() > stop) {}
        calls += 1;
    }
}

/// @notice Counts deliveries per question; fails while `failing` is set. Used by the invariant handler.
contract FlakyConsumer is IOracleConsumer {
    address public immutable oracle;
    bool public failing;
    mapping(bytes32 questionId => uint256) public deliveries;

    constructor(address oracle_) {
        oracle = oracle_;
    }

    function setFailing(bool failing_) external {
        failing = failing_;
    }

    function onOracleResult(bytes32 questionId, uint16) external {
        require(msg.sender == oracle, "not oracle");
        require(!failing, "failing");
        deliveries[questionId] += 1;
    }
}
