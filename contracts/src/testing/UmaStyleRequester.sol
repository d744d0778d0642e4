// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The functions of UMA's OptimisticOracleV2 a requester calls.
interface IOptimisticOracleV2Requests {
    function requestPrice(
        bytes32 identifier,
        uint256 timestamp,
        bytes memory ancillaryData,
        address currency,
        uint256 reward
    ) external returns (uint256 totalBond);

    function setEventBased(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData) external;

    function setCallbacks(
        bytes32 identifier,
        uint256 timestamp,
        bytes memory ancillaryData,
        bool callbackOnPriceProposed,
        bool callbackOnPriceDisputed,
        bool callbackOnPriceSettled
    ) external;

    function setBond(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData, uint256 bond)
        external
        returns (uint256 totalBond);
}

/// @notice The one ERC-20 function the requester needs.
interface IERC20Approve {
    function approve(address spender, uint256 amount) external returns (bool);
}

/// @title UmaStyleRequester
/// @notice For tests and local chains only: asks YES_OR_NO_QUERY questions on UMA's OptimisticOracleV2 the
/// way Polymarket's UMA CTF adapter does (the asker's text with `,initializer:<address>` appended; an
/// event-based request with a reward and a bond; a callback on dispute only), and asks again, with a new
/// timestamp and the same ancillary data, when a proposal is disputed the first time. A second dispute is
/// left to UMA's vote. It pays rewards from what it holds: fund it with the bond currency first.
contract UmaStyleRequester {
    bytes32 public constant YES_OR_NO_IDENTIFIER = "YES_OR_NO_QUERY";

    struct Question {
        uint256 requestTimestamp; // of the latest request; 0: never asked
        uint256 reward;
        uint256 bond;
        bool reasked;
    }

    IOptimisticOracleV2Requests public immutable oracle;
    address public immutable currency;
    mapping(bytes32 questionId => Question) public questions;

    event QuestionAsked(bytes32 indexed questionId, uint256 requestTimestamp, bytes ancillaryData);
    event QuestionReasked(bytes32 indexed questionId, uint256 requestTimestamp);

    error AlreadyAsked(bytes32 questionId);
    error OnlyOracle();

    constructor(IOptimisticOracleV2Requests oracle_, address currency_) {
        oracle = oracle_;
        currency = currency_;
        // Once, for every reward it will pay (the adapter does the same when its allowance runs low).
        IERC20Approve(currency_).approve(address(oracle_), type(uint256).max);
    }

    /// @notice Asks `question` (`q: title: ..., description: ... res_data: ...`) with a reward and a bond.
    /// @return questionId keccak256 of the ancillary data, as the adapter names questions.
    function ask(bytes calldata question, uint256 reward, uint256 bond) external returns (bytes32 questionId) {
        bytes memory data = abi.encodePacked(question, ",initializer:", _hexAddress(msg.sender));
        questionId = keccak256(data);
        if (questions[questionId].requestTimestamp != 0) revert AlreadyAsked(questionId);
        questions[questionId] = Question(block.timestamp, reward, bond, false);
        _request(block.timestamp, data, reward, bond);
        emit QuestionAsked(questionId, block.timestamp, data);
    }

    /// @notice The oracle's callback on a dispute: the first one asks again, a later one waits for the vote.
    function priceDisputed(bytes32, uint256, bytes memory ancillaryData, uint256) external {
        if (msg.sender != address(oracle)) revert OnlyOracle();
        bytes32 questionId = keccak256(ancillaryData);
        Question storage asked = questions[questionId];
        if (asked.requestTimestamp == 0 || asked.reasked) return;
        asked.reasked = true;
        asked.requestTimestamp = block.timestamp;
        _request(block.timestamp, ancillaryData, asked.reward, asked.bond);
        emit QuestionReasked(questionId, block.timestamp);
    }

    function _request(uint256 timestamp, bytes memory data, uint256 reward, uint256 bond) private {
        oracle.requestPrice(YES_OR_NO_IDENTIFIER, timestamp, data, currency, reward);
        oracle.setEventBased(YES_OR_NO_IDENTIFIER, timestamp, data);
        oracle.setCallbacks(YES_OR_NO_IDENTIFIER, timestamp, data, false, true, false);
        if (bond > 0) oracle.setBond(YES_OR_NO_IDENTIFIER, timestamp, data, bond);
    }

    /// @dev An address as UMA writes it in ancillary data: 40 lowercase hex digits, no 0x.
    function _hexAddress(address account) private pure returns (bytes memory text) {
        bytes16 digits = "0123456789abcdef";
        uint160 value = uint160(account);
        text = new bytes(40);
        for (uint256 i = 40; i > 0; --i) {
            text[i - 1] = digits[value & 0xf];
            value >>= 4;
        }
    }
}
