// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAgentOracle} from "./interfaces/IAgentOracle.sol";
import {IOracleConsumer} from "./interfaces/IOracleConsumer.sol";
import {QuestionLib} from "./libraries/QuestionLib.sol";
import {SignatureLib} from "./libraries/SignatureLib.sol";
import {TransferLib} from "./libraries/TransferLib.sol";

/// @title AgentOracle
/// @notice Optimistic oracle for prediction markets answered by AI-agent reporters. See `IAgentOracle` and
/// `docs/contracts.md` for the lifecycle, trust model and storage layout.
contract AgentOracle is IAgentOracle {
    using QuestionLib for uint256;

    /// @inheritdoc IAgentOracle
    uint16 public constant INVALID_OUTCOME = QuestionLib.INVALID_OUTCOME;
    /// @inheritdoc IAgentOracle
    uint32 public constant LIVENESS_FLOOR = 30 seconds;
    /// @inheritdoc IAgentOracle
    uint32 public constant MAX_LIVENESS = 90 days;

    /// @dev Below this a settlement callback could do next to nothing (two fresh storage writes are 44,200).
    uint32 internal constant MIN_CALLBACK_GAS = 50_000;
    uint32 internal constant MAX_CALLBACK_GAS = 10_000_000;
    uint32 internal constant MIN_SAFETY_PERIOD = 1 hours;
    uint32 internal constant MAX_SAFETY_PERIOD = 30 days;
    uint256 internal constant MAX_OPERATORS = 31;
    /// @dev Gas kept back in `settle` besides the callback allowance, for the call itself and the event.
    uint256 internal constant CALLBACK_RESERVE = 10_000;

    // Member word: role bits 0..3 (1 << Role), reporter id at bits 8..15, operator index at bits 16..23.
    uint256 internal constant REPORTER_BIT = 1 << uint8(Role.Reporter);
    uint256 internal constant OPERATOR_BIT = 1 << uint8(Role.Operator);
    uint256 internal constant REPORTER_ID_SHIFT = 8;
    uint256 internal constant OPERATOR_INDEX_SHIFT = 16;

    /// @dev The one slot every proposal reads besides the question: pause flag, mode, minimum liveness, and the
    /// primary reporter, whose proposals therefore need no second lookup.
    struct HotConfig {
        bool paused;
        uint8 threshold;
        uint32 minLiveness;
        uint8 primaryReporterId;
        address primaryReporter;
    }

    /// @dev Everything else.
    struct Config {
        uint8 operatorCount;
        uint8 reporterCount;
        uint32 callbackGasLimit;
        uint32 safetyPeriod;
        uint32 operatorSlots; // bit i set = operator index i (1..31) in use
    }

    /// @dev One slot.
    struct BondConfig {
        address token;
        uint96 amount;
    }

    mapping(bytes32 questionId => uint256 packed) internal _questions;
    mapping(bytes32 questionId => address callback) internal _callbacks;
    mapping(bytes32 questionId => DisputeInfo) internal _disputes;
    mapping(bytes32 questionId => EmergencyInfo) internal _emergencies;
    mapping(address account => uint256 member) internal _members;
    /// @inheritdoc IAgentOracle
    mapping(uint8 id => address reporter) public reporterById;
    /// @inheritdoc IAgentOracle
    mapping(address account => mapping(address token => uint256 amount)) public credits;

    HotConfig internal _hot;
    Config internal _config;
    BondConfig internal _bond;
    /// @inheritdoc IAgentOracle
    address public owner;
    /// @inheritdoc IAgentOracle
    address public pendingOwner;
    /// @inheritdoc IAgentOracle
    address public treasury;

    uint256 internal immutable _cachedChainId;
    bytes32 internal immutable _cachedDomainSeparator;

    /// @notice Deploys the oracle. Defaults: callback gas limit 500,000, safety period 2 days, single-reporter mode.
    /// @param initialOwner The owner.
    /// @param initialTreasury Receives forfeited bonds.
    /// @param bondToken The dispute bond token (zero for ETH); see `setBond`.
    /// @param bondAmount The dispute bond, not zero.
    /// @param minLiveness The minimum challenge window, from `LIVENESS_FLOOR` to `MAX_LIVENESS`.
    constructor(
        address initialOwner,
        address initialTreasury,
        address bondToken,
        uint96 bondAmount,
        uint32 minLiveness
    ) {
        if (initialOwner == address(0)) revert ZeroAddress();
        owner = initialOwner;
        _config.callbackGasLimit = 500_000;
        _config.safetyPeriod = 2 days;
        _cachedChainId = block.chainid;
        _cachedDomainSeparator = SignatureLib.domainSeparator(block.chainid, address(this));
        emit OwnershipTransferred(address(0), initialOwner);
        _setTreasury(initialTreasury);
        _setBond(bondToken, bondAmount);
        _setMinLiveness(minLiveness);
        emit CallbackGasLimitSet(500_000);
        emit SafetyPeriodSet(2 days);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Requests and proposals
    // ------------------------------------------------------------------------------------------------------------

    /// @inheritdoc IAgentOracle
    function request(
        bytes calldata text,
        uint16 outcomeCount,
        uint32 earliestTime,
        uint32 liveness,
        address callback,
        bytes32 salt
    ) external returns (bytes32 questionId) {
        if (text.length == 0) revert EmptyText();
        if (outcomeCount < 2 || outcomeCount > 256) revert InvalidOutcomeCount(outcomeCount);
        // One comparison for both bounds: below the floor the subtraction wraps above the range.
        unchecked {
            if (liveness - LIVENESS_FLOOR > MAX_LIVENESS - LIVENESS_FLOOR) {
                revert InvalidLiveness(liveness, LIVENESS_FLOOR, MAX_LIVENESS);
            }
        }
        // Hand-written for gas: the text is copied to memory once, laid out as the event's ABI-encoded data, hashed
        // in place, and logged from there. Equivalent to
        //   questionId = QuestionLib.questionId(msg.sender, keccak256(text), outcomeCount, earliestTime, liveness,
        //                                       callback, salt);
        //   emit QuestionRequested(questionId, msg.sender, outcomeCount, earliestTime, liveness, text);
        // (test/AgentOracle.t.sol checks both against the Solidity versions).
        uint256 data;
        uint256 size;
        assembly ("memory-safe") {
            data := mload(0x40)
            mstore(data, outcomeCount)
            mstore(add(data, 0x20), earliestTime)
            mstore(add(data, 0x40), liveness)
            mstore(add(data, 0x60), 0x80)
            mstore(add(data, 0x80), text.length)
            let t := add(data, 0xa0)
            calldatacopy(t, text.offset, text.length)
            let end := add(t, text.length)
            mstore(end, 0) // zero padding up to the next word
            size := sub(and(add(end, 31), not(31)), data)
            let textHash := keccak256(t, text.length)
            let q := add(data, size)
            mstore(q, caller())
            mstore(add(q, 0x20), textHash)
            mstore(add(q, 0x40), outcomeCount)
            mstore(add(q, 0x60), earliestTime)
            mstore(add(q, 0x80), liveness)
            mstore(add(q, 0xa0), callback)
            mstore(add(q, 0xc0), salt)
            questionId := keccak256(q, 0xe0)
            mstore(0x40, q) // keep the event data allocated
        }
        if (_questions[questionId] != 0) revert QuestionExists(questionId);
        _questions[questionId] = QuestionLib.requested(outcomeCount, liveness, earliestTime);
        if (callback != address(0)) _callbacks[questionId] = callback;
        bytes32 topic0 = QuestionRequested.selector;
        assembly ("memory-safe") {
            log3(data, size, topic0, questionId, caller())
        }
    }

    /// @inheritdoc IAgentOracle
    function propose(bytes32 questionId, uint16 outcome, bytes20 proofHash) external {
        (uint256 reporterId,, uint256 minLiveness) = _proposerGate(false);
        _propose(questionId, outcome, proofHash, reporterId, minLiveness);
    }

    /// @inheritdoc IAgentOracle
    function proposeBatch(ProposalInput[] calldata proposals) external {
        (uint256 reporterId,, uint256 minLiveness) = _proposerGate(false);
        uint256 n = proposals.length;
        if (n == 0) revert EmptyBatch();
        for (uint256 i; i < n; ++i) {
            ProposalInput calldata p = proposals[i];
            _propose(p.questionId, p.outcome, p.proofHash, reporterId, minLiveness);
        }
    }

    /// @inheritdoc IAgentOracle
    function proposeSigned(bytes32 questionId, uint16 outcome, bytes20 proofHash, bytes calldata signatures) external {
        (uint256 reporterId, uint256 threshold, uint256 minLiveness) = _proposerGate(true);
        uint8 round = _propose(questionId, outcome, proofHash, reporterId, minLiveness);
        bytes32 structHash = SignatureLib.hashProposal(questionId, round, outcome, proofHash);
        _verifySignatures(SignatureLib.typedDataHash(DOMAIN_SEPARATOR(), structHash), signatures, threshold);
    }

    /// @inheritdoc IAgentOracle
    function proposeBatchSigned(ProposalInput[] calldata proposals, bytes calldata signatures) external {
        (uint256 reporterId, uint256 threshold, uint256 minLiveness) = _proposerGate(true);
        uint256 n = proposals.length;
        if (n == 0) revert EmptyBatch();
        bytes32[] memory hashes = new bytes32[](n);
        for (uint256 i; i < n; ++i) {
            ProposalInput calldata p = proposals[i];
            uint8 round = _propose(p.questionId, p.outcome, p.proofHash, reporterId, minLiveness);
            hashes[i] = SignatureLib.hashProposal(p.questionId, round, p.outcome, p.proofHash);
        }
        bytes32 digest = SignatureLib.typedDataHash(DOMAIN_SEPARATOR(), SignatureLib.hashBatch(hashes));
        _verifySignatures(digest, signatures, threshold);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Disputes, settlement, payments
    // ------------------------------------------------------------------------------------------------------------

    /// @inheritdoc IAgentOracle
    function dispute(bytes32 questionId, address bondToken, uint96 maxBond) external payable {
        uint256 w = _questions[questionId];
        Status s = w.status(block.timestamp);
        if (s != Status.Proposed) revert InvalidStatus(questionId, s);
        BondConfig memory b = _bond;
        // The bond is read at execution: the disputer's bounds stop a `setBond` mined first from charging more.
        if (b.token != bondToken || b.amount > maxBond) revert UnexpectedBond(b.token, b.amount);
        _questions[questionId] = w.withStatus(QuestionLib.DISPUTED);
        _disputes[questionId] = DisputeInfo(msg.sender, b.amount, b.token);
        emit AnswerDisputed(questionId, msg.sender, b.token, b.amount);
        if (b.token == address(0)) {
            if (msg.value != b.amount) revert IncorrectBondValue(msg.value, b.amount);
        } else {
            if (msg.value != 0) revert IncorrectBondValue(msg.value, 0);
            if (b.amount != 0) {
                uint256 before = TransferLib.balanceOfSelf(b.token);
                TransferLib.transferIn(b.token, msg.sender, b.amount);
                uint256 received = TransferLib.balanceOfSelf(b.token) - before;
                if (received != b.amount) revert BondTransferMismatch(received, b.amount);
            }
        }
    }

    /// @inheritdoc IAgentOracle
    function confirm(bytes32 questionId) external {
        uint256 w = _arbiterGate(questionId);
        _questions[questionId] = w.withStatus(QuestionLib.FINAL).withTime(block.timestamp);
        _releaseBond(questionId, false);
        emit DisputeResolved(questionId, msg.sender, Ruling.Confirmed, w.outcome());
    }

    /// @inheritdoc IAgentOracle
    function overturn(bytes32 questionId, uint16 outcome) external {
        uint256 w = _arbiterGate(questionId);
        if (!w.isValidOutcome(outcome)) revert InvalidOutcome(questionId, outcome);
        if (outcome == w.outcome()) revert SameOutcome(outcome);
        _questions[questionId] = w.resolved(outcome, block.timestamp);
        _releaseBond(questionId, true);
        emit DisputeResolved(questionId, msg.sender, Ruling.Overturned, outcome);
    }

    /// @inheritdoc IAgentOracle
    function reopen(bytes32 questionId) external {
        uint256 w = _arbiterGate(questionId);
        if (w.round() >= QuestionLib.MAX_ROUND) revert RoundLimitReached(questionId);
        _questions[questionId] = w.reopened();
        _releaseBond(questionId, true);
        emit DisputeResolved(questionId, msg.sender, Ruling.Reopened, w.outcome());
    }

    /// @inheritdoc IAgentOracle
    function settle(bytes32 questionId) external {
        uint256 w = _questions[questionId];
        Status s = w.status(block.timestamp);
        if (s != Status.Final) revert InvalidStatus(questionId, s);
        if (w.settled()) revert AlreadySettled(questionId);
        // Set before the callback runs, so that a callback re-entering `settle` is never called twice.
        _questions[questionId] = w | QuestionLib.SETTLED_BIT;
        uint16 outcome = w.outcome();
        address callback = _callbacks[questionId];
        bool ok = true;
        if (callback != address(0)) {
            uint256 gasLimit = _config.callbackGasLimit;
            uint256 required = gasLimit + gasLimit / 63 + CALLBACK_RESERVE;
            // The callback always gets its whole allowance, so a caller cannot make it fail by starving it.
            if (gasleft() < required) revert InsufficientGasForCallback(gasleft(), required);
            bytes memory data = abi.encodeCall(IOracleConsumer.onOracleResult, (questionId, outcome));
            assembly ("memory-safe") {
                // A callback without code (e.g. not deployed yet) would run nothing: not delivered. No return data
                // is copied, so a callback cannot grief settlement with a huge revert reason.
                ok := 0
                if extcodesize(callback) {
                    ok := call(gasLimit, callback, 0, add(data, 0x20), mload(data), 0, 0)
                }
            }
            // Not delivered: the question stays unsettled and anyone may call `settle` again. Final is terminal, so
            // nothing but this function changed the word in between.
            if (!ok) _questions[questionId] = w;
        }
        emit Settled(questionId, callback, outcome, ok);
    }

    /// @inheritdoc IAgentOracle
    function withdraw(address token, address to) external {
        if (to == address(0)) revert ZeroAddress();
        uint256 amount = credits[msg.sender][token];
        if (amount == 0) revert NothingToWithdraw(msg.sender, token);
        credits[msg.sender][token] = 0;
        emit Withdrawn(msg.sender, token, to, amount);
        TransferLib.transferOut(token, to, amount);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Emergency
    // ------------------------------------------------------------------------------------------------------------

    /// @inheritdoc IAgentOracle
    function flag(bytes32 questionId) external {
        _onlyOwner();
        uint256 w = _questions[questionId];
        Status s = w.status(block.timestamp);
        if (s == Status.None || s == Status.Final || s == Status.Flagged) revert InvalidStatus(questionId, s);
        uint256 resolvableAt = block.timestamp + _config.safetyPeriod;
        QuestionLib.checkTime(resolvableAt); // and so the flag time, which is smaller
        _emergencies[questionId] = EmergencyInfo(s, uint32(block.timestamp), uint32(resolvableAt));
        _questions[questionId] = w.withStatus(QuestionLib.FLAGGED);
        emit QuestionFlagged(questionId, uint32(resolvableAt));
    }

    /// @inheritdoc IAgentOracle
    function unflag(bytes32 questionId) external {
        _onlyOwner();
        uint256 w = _flagged(questionId);
        EmergencyInfo memory e = _emergencies[questionId];
        delete _emergencies[questionId];
        w = w.withStatus(uint256(e.previousStatus));
        uint256 deadline;
        if (e.previousStatus == Status.Proposed) {
            // The window does not run while flagged.
            deadline = w.time() + (block.timestamp - e.flaggedAt);
            w = w.withTime(deadline);
        }
        _questions[questionId] = w;
        emit QuestionUnflagged(questionId, e.previousStatus, uint32(deadline));
    }

    /// @inheritdoc IAgentOracle
    function resolveManually(bytes32 questionId, uint16 outcome) external {
        _onlyOwner();
        uint256 w = _flagged(questionId);
        EmergencyInfo memory e = _emergencies[questionId];
        if (block.timestamp < e.resolvableAt) revert SafetyPeriodNotElapsed(questionId, e.resolvableAt);
        if (!w.isValidOutcome(outcome)) revert InvalidOutcome(questionId, outcome);
        delete _emergencies[questionId];
        _questions[questionId] = w.resolved(outcome, block.timestamp);
        // Always a refund: the emergency path is no ruling on the dispute, and the owner, who picks the treasury,
        // must not be able to forfeit a bond to it by flagging.
        if (e.previousStatus == Status.Disputed) _releaseBond(questionId, true);
        emit QuestionResolvedManually(questionId, outcome);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Administration
    // ------------------------------------------------------------------------------------------------------------

    /// @inheritdoc IAgentOracle
    function transferOwnership(address newOwner) external {
        _onlyOwner();
        pendingOwner = newOwner;
        emit OwnershipTransferStarted(owner, newOwner);
    }

    /// @inheritdoc IAgentOracle
    function acceptOwnership() external {
        if (msg.sender != pendingOwner) revert NotPendingOwner(msg.sender);
        emit OwnershipTransferred(owner, msg.sender);
        owner = msg.sender;
        pendingOwner = address(0);
    }

    /// @inheritdoc IAgentOracle
    function grantRole(address account, Role role) external {
        _onlyOwner();
        if (account == address(0)) revert ZeroAddress();
        uint256 m = _members[account];
        uint256 bit = 1 << uint8(role);
        if (m & bit != 0) revert RoleAlreadyGranted(account, role);
        m |= bit;
        uint8 index;
        if (role == Role.Reporter) {
            index = uint8(m >> REPORTER_ID_SHIFT);
            if (index == 0) {
                // First grant: assign a permanent id so `reporterById` keeps resolving old proposals.
                uint8 count = _config.reporterCount;
                if (count == type(uint8).max) revert TooManyReporters();
                index = count + 1;
                _config.reporterCount = index;
                reporterById[index] = account;
                m |= uint256(index) << REPORTER_ID_SHIFT;
            }
        } else if (role == Role.Operator) {
            Config storage c = _config;
            uint32 slots = c.operatorSlots;
            for (uint8 i = 1; i <= MAX_OPERATORS; ++i) {
                if (slots & (uint32(1) << i) == 0) {
                    index = i;
                    break;
                }
            }
            if (index == 0) revert TooManyOperators();
            c.operatorSlots = slots | (uint32(1) << index);
            c.operatorCount += 1;
            m = (m & ~(uint256(0xff) << OPERATOR_INDEX_SHIFT)) | (uint256(index) << OPERATOR_INDEX_SHIFT);
        }
        _members[account] = m;
        emit RoleGranted(account, role, index);
    }

    /// @inheritdoc IAgentOracle
    function revokeRole(address account, Role role) external {
        _onlyOwner();
        uint256 m = _members[account];
        uint256 bit = 1 << uint8(role);
        if (m & bit == 0) revert RoleNotGranted(account, role);
        m &= ~bit;
        if (role == Role.Reporter && _hot.primaryReporter == account) _setPrimaryReporter(address(0), 0);
        if (role == Role.Operator) {
            Config storage c = _config;
            uint8 remaining = c.operatorCount - 1;
            uint8 threshold = _hot.threshold;
            if (remaining < threshold) revert ThresholdTooHigh(threshold, remaining);
            uint8 index = uint8(m >> OPERATOR_INDEX_SHIFT);
            c.operatorSlots &= ~(uint32(1) << index);
            c.operatorCount = remaining;
            m &= ~(uint256(0xff) << OPERATOR_INDEX_SHIFT);
        }
        _members[account] = m;
        emit RoleRevoked(account, role);
    }

    /// @inheritdoc IAgentOracle
    function setPrimaryReporter(address account) external {
        _onlyOwner();
        uint256 m = _members[account];
        if (account != address(0) && m & REPORTER_BIT == 0) revert RoleNotGranted(account, Role.Reporter);
        _setPrimaryReporter(account, uint8(m >> REPORTER_ID_SHIFT));
    }

    /// @inheritdoc IAgentOracle
    function pause() external {
        if (msg.sender != owner && _members[msg.sender] & (1 << uint8(Role.Pauser)) == 0) {
            revert MissingRole(msg.sender, Role.Pauser);
        }
        if (_hot.paused) revert PauseUnchanged(true);
        _hot.paused = true;
        emit Paused(msg.sender);
    }

    /// @inheritdoc IAgentOracle
    function unpause() external {
        _onlyOwner();
        if (!_hot.paused) revert PauseUnchanged(false);
        _hot.paused = false;
        emit Unpaused(msg.sender);
    }

    /// @inheritdoc IAgentOracle
    function setMinLiveness(uint32 minLiveness) external {
        _onlyOwner();
        _setMinLiveness(minLiveness);
    }

    /// @inheritdoc IAgentOracle
    function setBond(address token, uint96 amount) external {
        _onlyOwner();
        _setBond(token, amount);
    }

    /// @inheritdoc IAgentOracle
    function setTreasury(address newTreasury) external {
        _onlyOwner();
        _setTreasury(newTreasury);
    }

    /// @inheritdoc IAgentOracle
    function setCallbackGasLimit(uint32 gasLimit) external {
        _onlyOwner();
        if (gasLimit < MIN_CALLBACK_GAS || gasLimit > MAX_CALLBACK_GAS) {
            revert ValueOutOfRange(gasLimit, MIN_CALLBACK_GAS, MAX_CALLBACK_GAS);
        }
        _config.callbackGasLimit = gasLimit;
        emit CallbackGasLimitSet(gasLimit);
    }

    /// @inheritdoc IAgentOracle
    function setThreshold(uint8 threshold) external {
        _onlyOwner();
        uint8 operators = _config.operatorCount;
        if (threshold > operators) revert ThresholdTooHigh(threshold, operators);
        _hot.threshold = threshold;
        emit ThresholdSet(threshold);
    }

    /// @inheritdoc IAgentOracle
    function setSafetyPeriod(uint32 safetyPeriod) external {
        _onlyOwner();
        if (safetyPeriod < MIN_SAFETY_PERIOD || safetyPeriod > MAX_SAFETY_PERIOD) {
            revert ValueOutOfRange(safetyPeriod, MIN_SAFETY_PERIOD, MAX_SAFETY_PERIOD);
        }
        _config.safetyPeriod = safetyPeriod;
        emit SafetyPeriodSet(safetyPeriod);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Views
    // ------------------------------------------------------------------------------------------------------------

    /// @inheritdoc IAgentOracle
    function status(bytes32 questionId) external view returns (Status) {
        return _questions[questionId].status(block.timestamp);
    }

    /// @inheritdoc IAgentOracle
    function finalResult(bytes32 questionId)
        external
        view
        returns (uint16 outcome, bytes20 proofHash, uint32 finalizedAt)
    {
        uint256 w = _questions[questionId];
        Status s = w.status(block.timestamp);
        if (s != Status.Final) revert InvalidStatus(questionId, s);
        return (w.outcome(), w.proofHash(), w.time());
    }

    /// @inheritdoc IAgentOracle
    function getQuestion(bytes32 questionId) external view returns (QuestionView memory q) {
        uint256 w = _questions[questionId];
        if (w == 0) return q;
        q.status = w.status(block.timestamp);
        q.outcomeCount = w.outcomeCount();
        q.round = w.round();
        q.settled = w.settled();
        q.liveness = w.liveness();
        q.callback = _callbacks[questionId];
        uint256 raw = w.rawStatus();
        if (raw == QuestionLib.FLAGGED) raw = uint256(_emergencies[questionId].previousStatus);
        if (raw != QuestionLib.REQUESTED) {
            q.outcome = w.outcome();
            q.proposer = reporterById[w.proposerId()];
            q.proofHash = w.proofHash();
        }
        if (raw == QuestionLib.REQUESTED) q.earliestTime = w.time();
        else if (raw == QuestionLib.PROPOSED || raw == QuestionLib.DISPUTED) q.deadline = w.time();
        if (q.status == Status.Final) q.finalizedAt = w.time();
    }

    /// @inheritdoc IAgentOracle
    function getDispute(bytes32 questionId) external view returns (DisputeInfo memory) {
        return _disputes[questionId];
    }

    /// @inheritdoc IAgentOracle
    function getEmergency(bytes32 questionId) external view returns (EmergencyInfo memory) {
        return _emergencies[questionId];
    }

    /// @inheritdoc IAgentOracle
    function questionIdOf(
        address requester,
        bytes32 textHash,
        uint16 outcomeCount,
        uint32 earliestTime,
        uint32 liveness,
        address callback,
        bytes32 salt
    ) external pure returns (bytes32) {
        return QuestionLib.questionId(requester, textHash, outcomeCount, earliestTime, liveness, callback, salt);
    }

    /// @inheritdoc IAgentOracle
    function hasRole(address account, Role role) external view returns (bool) {
        return _members[account] & (1 << uint8(role)) != 0;
    }

    /// @inheritdoc IAgentOracle
    function reporterIdOf(address account) external view returns (uint8) {
        return uint8(_members[account] >> REPORTER_ID_SHIFT);
    }

    /// @inheritdoc IAgentOracle
    function bond() external view returns (address token, uint96 amount) {
        return (_bond.token, _bond.amount);
    }

    /// @inheritdoc IAgentOracle
    function config()
        external
        view
        returns (
            bool paused,
            uint8 threshold,
            uint8 operatorCount,
            uint32 minLiveness,
            uint32 callbackGasLimit,
            uint32 safetyPeriod
        )
    {
        HotConfig memory h = _hot;
        Config memory c = _config;
        return (h.paused, h.threshold, c.operatorCount, h.minLiveness, c.callbackGasLimit, c.safetyPeriod);
    }

    /// @inheritdoc IAgentOracle
    function primaryReporter() external view returns (address) {
        return _hot.primaryReporter;
    }

    /// @inheritdoc IAgentOracle
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        if (block.chainid == _cachedChainId) return _cachedDomainSeparator;
        return SignatureLib.domainSeparator(block.chainid, address(this));
    }

    /// @inheritdoc IAgentOracle
    function proposalDigest(bytes32 questionId, uint8 round, uint16 outcome, bytes20 proofHash)
        external
        view
        returns (bytes32)
    {
        return SignatureLib.typedDataHash(
            DOMAIN_SEPARATOR(), SignatureLib.hashProposal(questionId, round, outcome, proofHash)
        );
    }

    /// @inheritdoc IAgentOracle
    function batchDigest(ProposalInput[] calldata proposals) external view returns (bytes32) {
        bytes32[] memory hashes = new bytes32[](proposals.length);
        for (uint256 i; i < proposals.length; ++i) {
            ProposalInput calldata p = proposals[i];
            uint8 round = _questions[p.questionId].round();
            hashes[i] = SignatureLib.hashProposal(p.questionId, round, p.outcome, p.proofHash);
        }
        return SignatureLib.typedDataHash(DOMAIN_SEPARATOR(), SignatureLib.hashBatch(hashes));
    }

    // ------------------------------------------------------------------------------------------------------------
    // Internals
    // ------------------------------------------------------------------------------------------------------------

    function _onlyOwner() internal view {
        if (msg.sender != owner) revert NotOwner(msg.sender);
    }

    /// @dev Checks pause, mode and the reporter role (the primary reporter without a second storage read).
    /// Returns the caller's reporter id, the threshold and the minimum liveness.
    function _proposerGate(bool signed)
        internal
        view
        returns (uint256 reporterId, uint256 threshold, uint256 minLiveness)
    {
        // One SLOAD, decoded by hand (HotConfig packs paused | threshold << 8 | minLiveness << 16 |
        // primaryReporterId << 48 | primaryReporter << 56).
        uint256 h;
        assembly ("memory-safe") {
            h := sload(_hot.slot)
        }
        if (h & 0xff != 0) revert ContractPaused();
        threshold = (h >> 8) & 0xff;
        if (signed) {
            if (threshold == 0) revert MultiOperatorModeOff();
        } else if (threshold != 0) {
            revert SignaturesRequired();
        }
        minLiveness = (h >> 16) & 0xffffffff;
        if (msg.sender == address(uint160(h >> 56))) {
            reporterId = (h >> 48) & 0xff;
        } else {
            uint256 m = _members[msg.sender];
            if (m & REPORTER_BIT == 0) revert MissingRole(msg.sender, Role.Reporter);
            reporterId = uint8(m >> REPORTER_ID_SHIFT);
        }
    }

    /// @dev Records a proposal; returns the round it answers.
    function _propose(bytes32 questionId, uint16 outcome, bytes20 proofHash, uint256 reporterId, uint256 minLiveness)
        internal
        returns (uint8 round)
    {
        uint256 w = _questions[questionId];
        if (w.rawStatus() != QuestionLib.REQUESTED) revert InvalidStatus(questionId, w.status(block.timestamp));
        uint32 earliestTime = w.time();
        if (block.timestamp < earliestTime) revert TooEarly(questionId, earliestTime);
        if (!w.isValidOutcome(outcome)) revert InvalidOutcome(questionId, outcome);
        uint256 liveness = w.liveness();
        // The effective window is never below the current minimum, even if the minimum rose after the request.
        uint256 deadline = block.timestamp + (liveness < minLiveness ? minLiveness : liveness);
        _questions[questionId] = w.proposed(outcome, reporterId, deadline, proofHash); // checks the deadline fits
        round = w.round();
        emit AnswerProposed(questionId, msg.sender, outcome, proofHash, uint32(deadline));
    }

    function _setTreasury(address newTreasury) internal {
        if (newTreasury == address(0)) revert ZeroAddress();
        if (newTreasury == address(this)) revert InvalidTreasury(newTreasury);
        treasury = newTreasury;
        emit TreasurySet(newTreasury);
    }

    function _setMinLiveness(uint32 minLiveness) internal {
        if (minLiveness < LIVENESS_FLOOR || minLiveness > MAX_LIVENESS) {
            revert ValueOutOfRange(minLiveness, LIVENESS_FLOOR, MAX_LIVENESS);
        }
        _hot.minLiveness = minLiveness;
        emit MinLivenessSet(minLiveness);
    }

    /// @dev A bond must cost something and must be payable: zero would make disputes free, a token that is not
    /// one would make every dispute revert.
    function _setBond(address token, uint96 amount) internal {
        if (amount == 0) revert ZeroBond();
        if (token != address(0) && !TransferLib.isToken(token)) revert InvalidBondToken(token);
        _bond = BondConfig(token, amount);
        emit BondSet(token, amount);
    }

    function _setPrimaryReporter(address account, uint8 id) internal {
        _hot.primaryReporter = account;
        _hot.primaryReporterId = id;
        emit PrimaryReporterSet(account);
    }

    /// @dev Requires at least `threshold` valid signatures over `digest`, all from distinct operators.
    function _verifySignatures(bytes32 digest, bytes calldata signatures, uint256 threshold) internal view {
        if (signatures.length % 65 != 0) revert InvalidSignatureLength(signatures.length);
        uint256 count = signatures.length / 65;
        if (count < threshold) revert InsufficientSignatures(count, threshold);
        uint256 seen;
        for (uint256 i; i < count; ++i) {
            address signer = SignatureLib.recover(digest, signatures, i);
            uint256 m = _members[signer];
            if (m & OPERATOR_BIT == 0) revert NotOperator(signer);
            uint256 bit = 1 << uint8(m >> OPERATOR_INDEX_SHIFT);
            if (seen & bit != 0) revert DuplicateSigner(signer);
            seen |= bit;
        }
    }

    /// @dev Requires the arbiter role and a disputed question; returns its word.
    function _arbiterGate(bytes32 questionId) internal view returns (uint256 w) {
        if (_members[msg.sender] & (1 << uint8(Role.Arbiter)) == 0) revert MissingRole(msg.sender, Role.Arbiter);
        w = _questions[questionId];
        if (w.rawStatus() != QuestionLib.DISPUTED) revert InvalidStatus(questionId, w.status(block.timestamp));
    }

    /// @dev Requires a flagged question; returns its word.
    function _flagged(bytes32 questionId) internal view returns (uint256 w) {
        w = _questions[questionId];
        if (w.rawStatus() != QuestionLib.FLAGGED) revert InvalidStatus(questionId, w.status(block.timestamp));
    }

    /// @dev Credits the open bond of a question to the disputer (`refund`) or to the treasury, and closes it.
    function _releaseBond(bytes32 questionId, bool refund) internal {
        DisputeInfo memory d = _disputes[questionId];
        delete _disputes[questionId];
        if (refund) {
            credits[d.disputer][d.token] += d.amount;
            emit BondRefunded(questionId, d.disputer, d.token, d.amount);
        } else {
            address t = treasury;
            credits[t][d.token] += d.amount;
            emit BondForfeited(questionId, t, d.token, d.amount);
        }
    }
}
