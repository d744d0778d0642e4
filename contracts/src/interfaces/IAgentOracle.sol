// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title IAgentOracle
/// @notice An optimistic oracle answered by AI-agent reporters. A requester asks a question (its text lives only in
/// calldata and in the `QuestionRequested` event), an authorized reporter proposes an outcome together with a
/// truncated hash of the consensus proof, and the answer becomes final by time when its challenge window (liveness)
/// passes without a dispute. Anyone may dispute during the window by posting a bond; an arbiter then confirms the
/// proposal, overturns it, or reopens the question for a new proposal (a new round).
/// @dev Outcome encoding: an outcome is an index in `[0, outcomeCount)`; for a binary question index 0 is YES and
/// index 1 is NO. `INVALID_OUTCOME` (65535) marks a question that cannot be resolved. The proof hash is the first 20
/// bytes of the SHA-256 digest of the consensus proof: `proofHash = bytes20(sha256(proof))`.
interface IAgentOracle {
    // ------------------------------------------------------------------------------------------------------------
    // Types
    // ------------------------------------------------------------------------------------------------------------

    /// @notice Lifecycle of a question as seen by the views. `Final` covers a proposal whose window passed
    /// without a dispute (no transaction needed) as well as arbiter and manual resolutions.
    enum Status {
        None, // 0: never requested
        Requested, // 1: waiting for a proposal (also after the arbiter reopened it)
        Proposed, // 2: proposal made, challenge window open
        Disputed, // 3: disputed, waiting for the arbiter
        Final, // 4: the answer is final and can never change
        Flagged // 5: frozen by the owner's emergency flag, see `flag`
    }

    /// @notice Roles granted by the owner.
    enum Role {
        Reporter, // 0: may propose answers
        Operator, // 1: signs proposals in multi-operator mode (EIP-712)
        Arbiter, // 2: settles disputes
        Pauser // 3: may pause proposals (requests, disputes, rulings, settlement and withdrawals are never paused)
    }

    /// @notice The arbiter's ruling on a dispute.
    enum Ruling {
        Confirmed, // 0: the proposal stands, the bond goes to the treasury
        Overturned, // 1: the arbiter's outcome replaces the proposal, the bond is refunded
        Reopened // 2: back to `Requested` in the next round, the bond is refunded
    }

    /// @notice One proposal of a batch.
    struct ProposalInput {
        bytes32 questionId;
        uint16 outcome;
        bytes20 proofHash;
    }

    /// @notice Everything known about a question, as returned by `getQuestion`.
    /// @dev Fields by status (a `Flagged` question shows those of the status it was flagged in, its deadline not yet
    /// extended):
    /// - `earliestTime`: set in `Requested` (0 = at once; always 0 after a `reopen`), else 0.
    /// - `deadline`: in `Proposed` and `Disputed`, the proposal's deadline (extended by `unflag`). In `Final`, the
    /// deadline that passed if the answer became final by time (then equal to `finalizedAt`), 0 if it became final
    /// by an arbiter's ruling or a manual resolution. 0 in `Requested`.
    /// - `finalizedAt`: set in `Final` only.
    /// - `outcome`, `proposer`, `proofHash`: zero until a proposal is made, zero again after `reopen`; `proposer` and
    /// `proofHash` are zero after `overturn` and `resolveManually`, kept by `confirm`.
    /// - `settled`: `settle` delivered the result (the callback succeeded, or there is none); false after a failed
    /// callback, which `settle` may retry.
    struct QuestionView {
        Status status;
        uint16 outcomeCount;
        uint8 round;
        bool settled;
        uint16 outcome;
        address proposer;
        bytes20 proofHash;
        uint32 liveness;
        uint32 earliestTime;
        uint32 deadline;
        uint32 finalizedAt;
        address callback;
    }

    /// @notice An open dispute.
    struct DisputeInfo {
        address disputer;
        uint96 amount;
        address token;
    }

    /// @notice An emergency flag.
    struct EmergencyInfo {
        Status previousStatus;
        uint32 flaggedAt;
        uint32 resolvableAt;
    }

    // ------------------------------------------------------------------------------------------------------------
    // Events
    // ------------------------------------------------------------------------------------------------------------

    /// @notice A question was asked. Carries everything a reporter needs to research it.
    /// @param questionId The question id (see `questionIdOf`).
    /// @param requester The account that asked.
    /// @param outcomeCount Number of outcomes, 2 to 256.
    /// @param earliestTime The earliest timestamp at which a proposal is accepted.
    /// @param liveness The requested challenge window in seconds (a proposal uses at least the minimum liveness).
    /// @param text The question text (UTF-8 or UMA-style ancillary data).
    /// @dev The callback is not in the event (to save gas); read it with `getQuestion`.
    event QuestionRequested(
        bytes32 indexed questionId,
        address indexed requester,
        uint16 outcomeCount,
        uint32 earliestTime,
        uint32 liveness,
        bytes text
    );

    /// @notice A reporter proposed an answer.
    /// @param questionId The question id.
    /// @param proposer The reporter that submitted the proposal.
    /// @param outcome The proposed outcome index or `INVALID_OUTCOME`.
    /// @param proofHash `bytes20(sha256(proof))` of the consensus proof.
    /// @param deadline The timestamp at which the answer becomes final if nobody disputes it.
    /// @dev The round is not in the event (to save gas); it is 0 plus the number of `Reopened` rulings before it,
    /// and `getQuestion` returns it.
    event AnswerProposed(
        bytes32 indexed questionId, address indexed proposer, uint16 outcome, bytes20 proofHash, uint32 deadline
    );

    /// @notice A proposal was disputed and now waits for the arbiter.
    event AnswerDisputed(bytes32 indexed questionId, address indexed disputer, address token, uint256 bond);

    /// @notice The arbiter settled a dispute. For `Reopened` the question is `Requested` again in round + 1
    /// and `outcome` is the rejected proposal's outcome.
    event DisputeResolved(bytes32 indexed questionId, address indexed arbiter, Ruling ruling, uint16 outcome);

    /// @notice `settle` ran for a final question: it called the callback, if one is set.
    /// @param callbackSucceeded False when the callback reverted, ran out of its gas allowance or has no code; the
    /// question then stays unsettled and `settle` may be called again. True (always, without a callback) marks the
    /// question settled.
    event Settled(bytes32 indexed questionId, address indexed callback, uint16 outcome, bool callbackSucceeded);

    /// @notice A dispute bond was credited back to the disputer (withdraw with `withdraw`).
    event BondRefunded(bytes32 indexed questionId, address indexed disputer, address token, uint256 amount);

    /// @notice A dispute bond was credited to the treasury.
    event BondForfeited(bytes32 indexed questionId, address indexed treasury, address token, uint256 amount);

    /// @notice A credit was paid out.
    event Withdrawn(address indexed account, address indexed token, address to, uint256 amount);

    /// @notice The owner flagged a question; it is frozen and can be resolved manually from `resolvableAt`.
    event QuestionFlagged(bytes32 indexed questionId, uint32 resolvableAt);

    /// @notice The owner removed a flag; a proposal's deadline is extended by the time spent flagged.
    event QuestionUnflagged(bytes32 indexed questionId, Status status, uint32 deadline);

    /// @notice The owner resolved a flagged question after the safety period.
    event QuestionResolvedManually(bytes32 indexed questionId, uint16 outcome);

    /// @notice Ownership transfer started (two-step).
    event OwnershipTransferStarted(address indexed previousOwner, address indexed newOwner);

    /// @notice Ownership transferred.
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    /// @notice A role was granted. `index` is the reporter id (Reporter), the operator index (Operator), else 0.
    event RoleGranted(address indexed account, Role indexed role, uint8 index);

    /// @notice A role was revoked.
    event RoleRevoked(address indexed account, Role indexed role);

    /// @notice Proposals were paused.
    event Paused(address indexed account);

    /// @notice Proposals were resumed.
    event Unpaused(address indexed account);

    /// @notice The minimum liveness changed.
    event MinLivenessSet(uint32 minLiveness);

    /// @notice The dispute bond changed (token zero means ETH). Open disputes keep their bond.
    event BondSet(address indexed token, uint96 amount);

    /// @notice The treasury changed.
    event TreasurySet(address indexed treasury);

    /// @notice The gas allowance of settlement callbacks changed.
    event CallbackGasLimitSet(uint32 gasLimit);

    /// @notice The multi-operator signature threshold changed (0 = single-reporter mode).
    event ThresholdSet(uint8 threshold);

    /// @notice The emergency safety period changed.
    event SafetyPeriodSet(uint32 safetyPeriod);

    /// @notice The primary reporter changed (zero = none).
    event PrimaryReporterSet(address indexed account);

    // ------------------------------------------------------------------------------------------------------------
    // Errors
    // ------------------------------------------------------------------------------------------------------------

    /// @notice The caller is not the owner.
    error NotOwner(address caller);
    /// @notice The caller is not the pending owner.
    error NotPendingOwner(address caller);
    /// @notice The caller lacks `role`.
    error MissingRole(address caller, Role role);
    /// @notice Proposals are paused.
    error ContractPaused();
    /// @notice `pause` while paused or `unpause` while not paused.
    error PauseUnchanged(bool paused);
    /// @notice A zero address where one is not allowed.
    error ZeroAddress();
    /// @notice The account already has the role.
    error RoleAlreadyGranted(address account, Role role);
    /// @notice The account does not have the role.
    error RoleNotGranted(address account, Role role);
    /// @notice All 255 reporter ids are used.
    error TooManyReporters();
    /// @notice All 31 operator slots are used.
    error TooManyOperators();
    /// @notice The threshold would exceed the number of operators (or 31).
    error ThresholdTooHigh(uint256 threshold, uint256 operators);
    /// @notice A configuration value is out of its allowed range.
    error ValueOutOfRange(uint256 value, uint256 min, uint256 max);
    /// @notice The question text is empty.
    error EmptyText();
    /// @notice The outcome count is not in [2, 256].
    error InvalidOutcomeCount(uint256 outcomeCount);
    /// @notice A requested liveness outside `[LIVENESS_FLOOR, MAX_LIVENESS]`.
    error InvalidLiveness(uint32 liveness, uint32 minLiveness, uint32 maxLiveness);
    /// @notice A question with this id exists already.
    error QuestionExists(bytes32 questionId);
    /// @notice The question is not in a status that allows the call.
    error InvalidStatus(bytes32 questionId, Status status);
    /// @notice A proposal before the question's earliest time.
    error TooEarly(bytes32 questionId, uint32 earliestTime);
    /// @notice The outcome is neither a valid index nor `INVALID_OUTCOME`.
    error InvalidOutcome(bytes32 questionId, uint16 outcome);
    /// @notice An empty batch.
    error EmptyBatch();
    /// @notice Multi-operator mode is on: use `proposeSigned` / `proposeBatchSigned`.
    error SignaturesRequired();
    /// @notice Multi-operator mode is off (threshold 0): use `propose` / `proposeBatch`.
    error MultiOperatorModeOff();
    /// @notice The signatures blob is not a multiple of 65 bytes.
    error InvalidSignatureLength(uint256 length);
    /// @notice A malformed signature (bad v, high s, or unrecoverable).
    error InvalidSignature(uint256 index);
    /// @notice A signature from an account that is not an operator.
    error NotOperator(address signer);
    /// @notice Two signatures from the same operator.
    error DuplicateSigner(address signer);
    /// @notice Fewer valid signatures than the threshold.
    error InsufficientSignatures(uint256 count, uint256 threshold);
    /// @notice The ETH sent with a dispute differs from the required bond.
    error IncorrectBondValue(uint256 sent, uint256 required);
    /// @notice The configured bond (`token`, `amount`) is not in the token the disputer named or exceeds its
    /// `maxBond`.
    error UnexpectedBond(address token, uint96 amount);
    /// @notice The contract received a different amount of bond tokens than required (fee-on-transfer token).
    error BondTransferMismatch(uint256 received, uint256 required);
    /// @notice An overturn with the proposal's own outcome (use `confirm`).
    error SameOutcome(uint16 outcome);
    /// @notice The question has been reopened the maximum number of times (15); confirm or overturn instead.
    error RoundLimitReached(bytes32 questionId);
    /// @notice `settle` already delivered this question's result (or it has no callback and was settled).
    error AlreadySettled(bytes32 questionId);
    /// @notice `settle` was given too little gas to honour the callback's gas allowance.
    error InsufficientGasForCallback(uint256 available, uint256 required);
    /// @notice The account has no credit in that token.
    error NothingToWithdraw(address account, address token);
    /// @notice A time to store (deadline, finalization or flag time) does not fit the packed `uint32` time fields
    /// (from February 2106 on).
    error TimeOverflow(uint256 time);
    /// @notice The oracle itself as treasury: its credits could never be withdrawn.
    error InvalidTreasury(address treasury);
    /// @notice A zero dispute bond: free disputes would freeze any answer until the arbiter acts.
    error ZeroBond();
    /// @notice A bond token without code, or one that does not answer `balanceOf`: every dispute would revert.
    error InvalidBondToken(address token);
    /// @notice An ETH or token transfer failed.
    error TransferFailed(address token, address to, uint256 amount);
    /// @notice `resolveManually` before the safety period has passed.
    error SafetyPeriodNotElapsed(bytes32 questionId, uint32 resolvableAt);

    // ------------------------------------------------------------------------------------------------------------
    // Requests and proposals
    // ------------------------------------------------------------------------------------------------------------

    /// @notice Asks a question. The id is derived from the caller and every parameter, so nobody else can take it.
    /// @dev Works while paused (only proposals are paused). `liveness` must lie in `[LIVENESS_FLOOR, MAX_LIVENESS]`;
    /// a proposal's window is `max(liveness, minLiveness)` with the minimum in force when the proposal is made.
    /// @param text The question text; emitted in `QuestionRequested`, never stored.
    /// @param outcomeCount Number of outcomes, 2 (binary: 0 = YES, 1 = NO) to 256 (categorical).
    /// @param earliestTime Earliest timestamp at which a proposal is accepted (0 = at once).
    /// @param liveness Requested challenge window in seconds (raised to the minimum liveness if below it).
    /// @param callback Contract notified by `settle` via `IOracleConsumer.onOracleResult`, or zero.
    /// @param salt Any value; lets one requester ask the same question twice.
    /// @return questionId `questionIdOf(msg.sender, keccak256(text), outcomeCount, earliestTime, liveness, callback, salt)`.
    function request(
        bytes calldata text,
        uint16 outcomeCount,
        uint32 earliestTime,
        uint32 liveness,
        address callback,
        bytes32 salt
    ) external returns (bytes32 questionId);

    /// @notice Proposes an answer (single-reporter mode, threshold 0). Only reporters; not before the earliest time.
    /// @param questionId The question.
    /// @param outcome Outcome index or `INVALID_OUTCOME`.
    /// @param proofHash `bytes20(sha256(proof))`.
    function propose(bytes32 questionId, uint16 outcome, bytes20 proofHash) external;

    /// @notice Proposes answers to several questions in one transaction (single-reporter mode). All or nothing.
    /// @param proposals The proposals.
    function proposeBatch(ProposalInput[] calldata proposals) external;

    /// @notice Proposes an answer in multi-operator mode. Only reporters; needs EIP-712 `Proposal` signatures
    /// from at least `threshold` distinct operators.
    /// @param questionId The question.
    /// @param outcome Outcome index or `INVALID_OUTCOME`.
    /// @param proofHash `bytes20(sha256(proof))`.
    /// @param signatures Concatenated 65-byte signatures `r ‖ s ‖ v`.
    function proposeSigned(bytes32 questionId, uint16 outcome, bytes20 proofHash, bytes calldata signatures) external;

    /// @notice Proposes a batch in multi-operator mode; the operators sign one EIP-712 `ProposalBatch`.
    /// @param proposals The proposals.
    /// @param signatures Concatenated 65-byte signatures `r ‖ s ‖ v`.
    function proposeBatchSigned(ProposalInput[] calldata proposals, bytes calldata signatures) external;

    // ------------------------------------------------------------------------------------------------------------
    // Disputes, settlement, payments
    // ------------------------------------------------------------------------------------------------------------

    /// @notice Disputes a proposal during its window by posting the bond configured when the transaction executes
    /// (ETH as `msg.value`, or an ERC-20 pulled with `transferFrom` after approval). Works while paused.
    /// @dev `bondToken` and `maxBond` bound what the disputer pays, so a `setBond` mined first can neither switch the
    /// token nor raise the amount above what the disputer accepted (reverts `UnexpectedBond`); a lowered bond is
    /// charged as lowered. With an ETH bond `msg.value` must equal the bond exactly (else `IncorrectBondValue`).
    /// @param questionId The question.
    /// @param bondToken The bond token the disputer expects (zero for ETH).
    /// @param maxBond The most the disputer pays.
    function dispute(bytes32 questionId, address bondToken, uint96 maxBond) external payable;

    /// @notice Arbiter: the disputed proposal stands and is final now; the bond is credited to the treasury.
    /// @param questionId The question.
    function confirm(bytes32 questionId) external;

    /// @notice Arbiter: replaces the disputed proposal with `outcome`, final now; the bond is refunded.
    /// @param questionId The question.
    /// @param outcome The correct outcome (must differ from the proposal's).
    function overturn(bytes32 questionId, uint16 outcome) external;

    /// @notice Arbiter: sends the question back to `Requested` for a new proposal in the next round; the bond is
    /// refunded.
    /// @param questionId The question.
    function reopen(bytes32 questionId) external;

    /// @notice Anyone: pushes a final question's result to its callback with a gas allowance of `callbackGasLimit`
    /// and marks the question settled once the callback succeeded (at once without a callback). A failing callback
    /// never reverts `settle`: `Settled(…, false)` records it and the question stays unsettled, so `settle` can be
    /// retried (e.g. after the consumer is fixed or deployed) until it succeeds once; then it reverts
    /// `AlreadySettled`. The consumer can always pull the result with `finalResult` instead.
    /// @dev Reverts `InsufficientGasForCallback` unless the callback can get its whole allowance, so a caller cannot
    /// make it fail by starving it. The settled bit is set before the call, so a re-entering callback cannot be
    /// delivered twice.
    /// @param questionId The question.
    function settle(bytes32 questionId) external;

    /// @notice Pays out the caller's credit (refunded bonds, or forfeited bonds for the treasury).
    /// @param token The token (zero for ETH).
    /// @param to The recipient.
    function withdraw(address token, address to) external;

    // ------------------------------------------------------------------------------------------------------------
    // Emergency
    // ------------------------------------------------------------------------------------------------------------

    /// @notice Owner: freezes a question that is not final yet; it can be resolved manually after the safety period.
    /// @param questionId The question.
    function flag(bytes32 questionId) external;

    /// @notice Owner: lifts a flag; the question returns to its previous status and a running challenge window is
    /// extended by the time spent flagged.
    /// @param questionId The question.
    function unflag(bytes32 questionId) external;

    /// @notice Owner: resolves a flagged question once the safety period has passed. An open dispute's bond is
    /// always refunded to its disputer, whatever the outcome: the emergency path is no ruling on the dispute, so the
    /// owner can never forfeit a bond through it (to punish a frivolous dispute, `unflag` and let the arbiter rule).
    /// @param questionId The question.
    /// @param outcome Outcome index or `INVALID_OUTCOME`.
    function resolveManually(bytes32 questionId, uint16 outcome) external;

    // ------------------------------------------------------------------------------------------------------------
    // Administration
    // ------------------------------------------------------------------------------------------------------------

    /// @notice Owner: starts a two-step ownership transfer (zero cancels a pending one).
    /// @param newOwner The proposed owner, who must call `acceptOwnership`.
    function transferOwnership(address newOwner) external;

    /// @notice Pending owner: completes the ownership transfer.
    function acceptOwnership() external;

    /// @notice Owner: grants a role.
    /// @param account The account.
    /// @param role The role.
    function grantRole(address account, Role role) external;

    /// @notice Owner: revokes a role. Revoking an operator may not leave fewer operators than the threshold.
    /// @param account The account.
    /// @param role The role.
    function revokeRole(address account, Role role) external;

    /// @notice Pauser or owner: pauses proposals. Requests, disputes, rulings, settlement and withdrawals go on, so
    /// a pause can stop new answers but never traps funds or blocks a challenge.
    function pause() external;

    /// @notice Owner: resumes proposals.
    function unpause() external;

    /// @notice Owner: makes a reporter the primary reporter, whose proposals skip the role lookup (about 2,100 gas
    /// cheaper); zero clears it. Revoking the reporter role clears it too.
    /// @param account A current reporter, or zero.
    function setPrimaryReporter(address account) external;

    /// @notice Owner: sets the minimum liveness applied to new proposals.
    /// @param minLiveness Seconds, from `LIVENESS_FLOOR` to `MAX_LIVENESS`.
    function setMinLiveness(uint32 minLiveness) external;

    /// @notice Owner: sets the bond for new disputes (open disputes keep theirs).
    /// @param token The bond token (zero for ETH); a token must have code and answer `balanceOf`.
    /// @param amount The bond amount, not zero.
    function setBond(address token, uint96 amount) external;

    /// @notice Owner: sets the treasury that receives bonds the arbiter forfeits (`confirm`), from the next ruling on.
    /// @param newTreasury The treasury, neither zero nor the oracle itself.
    function setTreasury(address newTreasury) external;

    /// @notice Owner: sets the gas allowance of settlement callbacks (a callback that failed for lack of gas can be
    /// retried with `settle` after a raise).
    /// @param gasLimit Gas, from 50,000 to 10,000,000.
    function setCallbackGasLimit(uint32 gasLimit) external;

    /// @notice Owner: sets the multi-operator threshold k (0 turns multi-operator mode off).
    /// @param threshold At most the number of operators.
    function setThreshold(uint8 threshold) external;

    /// @notice Owner: sets the emergency safety period applied to new flags (existing flags keep theirs).
    /// @param safetyPeriod Seconds, from 1 hour to 30 days.
    function setSafetyPeriod(uint32 safetyPeriod) external;

    // ------------------------------------------------------------------------------------------------------------
    // Views
    // ------------------------------------------------------------------------------------------------------------

    /// @notice The outcome value meaning "the question cannot be resolved": 65535.
    /// @return The sentinel.
    function INVALID_OUTCOME() external view returns (uint16);

    /// @notice The shortest allowed liveness, requested or minimum: 30 seconds, so that an answer is never final in
    /// the block of its proposal and a dispute can land in a later block.
    /// @return Seconds.
    function LIVENESS_FLOOR() external view returns (uint32);

    /// @notice The longest allowed liveness: 90 days.
    /// @return Seconds.
    function MAX_LIVENESS() external view returns (uint32);

    /// @notice The status of a question at the current block time.
    /// @param questionId The question.
    /// @return The status.
    function status(bytes32 questionId) external view returns (Status);

    /// @notice The final result; reverts with `InvalidStatus` unless the question is final. Cheap enough for
    /// other contracts to call (one storage read).
    /// @param questionId The question.
    /// @return outcome The outcome index or `INVALID_OUTCOME`.
    /// @return proofHash The committed proof hash (zero for arbiter or manual resolutions).
    /// @return finalizedAt When the answer became final.
    function finalResult(bytes32 questionId)
        external
        view
        returns (uint16 outcome, bytes20 proofHash, uint32 finalizedAt);

    /// @notice Everything known about a question (all zero for an unknown id).
    /// @param questionId The question.
    /// @return The question; `QuestionView` says which fields each status sets (e.g. `deadline` is 0 for a question
    /// made final by a ruling or a manual resolution, the passed deadline for one final by time).
    function getQuestion(bytes32 questionId) external view returns (QuestionView memory);

    /// @notice The open dispute of a question (zero when none).
    /// @param questionId The question.
    /// @return The dispute.
    function getDispute(bytes32 questionId) external view returns (DisputeInfo memory);

    /// @notice The emergency flag of a question (zero when none).
    /// @param questionId The question.
    /// @return The flag.
    function getEmergency(bytes32 questionId) external view returns (EmergencyInfo memory);

    /// @notice The question id a request with these parameters gets.
    /// @param requester The caller of `request`.
    /// @param textHash `keccak256(text)`.
    /// @param outcomeCount Number of outcomes.
    /// @param earliestTime Earliest proposal time.
    /// @param liveness Challenge window.
    /// @param callback Callback or zero.
    /// @param salt Salt.
    /// @return `keccak256(abi.encode(requester, textHash, outcomeCount, earliestTime, liveness, callback, salt))`.
    function questionIdOf(
        address requester,
        bytes32 textHash,
        uint16 outcomeCount,
        uint32 earliestTime,
        uint32 liveness,
        address callback,
        bytes32 salt
    ) external pure returns (bytes32);

    /// @notice Withdrawable credit of an account.
    /// @param account The account.
    /// @param token The token (zero for ETH).
    /// @return The amount.
    function credits(address account, address token) external view returns (uint256);

    /// @notice Whether an account holds a role.
    /// @param account The account.
    /// @param role The role.
    /// @return True if granted.
    function hasRole(address account, Role role) external view returns (bool);

    /// @notice The reporter id of an account (kept after revocation; 0 = never a reporter).
    /// @param account The account.
    /// @return The id, 1 to 255.
    function reporterIdOf(address account) external view returns (uint8);

    /// @notice The account behind a reporter id.
    /// @param id The id.
    /// @return The reporter.
    function reporterById(uint8 id) external view returns (address);

    /// @notice The current owner.
    /// @return The owner.
    function owner() external view returns (address);

    /// @notice The primary reporter (zero = none).
    /// @return The primary reporter.
    function primaryReporter() external view returns (address);

    /// @notice The pending owner of a two-step transfer.
    /// @return The pending owner, or zero.
    function pendingOwner() external view returns (address);

    /// @notice The treasury.
    /// @return The treasury.
    function treasury() external view returns (address);

    /// @notice The bond for new disputes.
    /// @return token The token (zero for ETH).
    /// @return amount The amount.
    function bond() external view returns (address token, uint96 amount);

    /// @notice The configuration.
    /// @return paused Whether proposals are paused.
    /// @return threshold Multi-operator threshold k (0 = off).
    /// @return operatorCount Number of operators n.
    /// @return minLiveness Minimum liveness applied to proposals.
    /// @return callbackGasLimit Gas allowance of settlement callbacks.
    /// @return safetyPeriod Emergency safety period.
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
        );

    /// @notice The EIP-712 domain separator (recomputed if the chain id changed, e.g. after a fork).
    /// @return The separator.
    function DOMAIN_SEPARATOR() external view returns (bytes32);

    /// @notice The EIP-712 digest operators sign for one proposal:
    /// `Proposal(bytes32 questionId,uint8 round,uint16 outcome,bytes20 proofHash)`.
    /// @param questionId The question.
    /// @param round The question's current round.
    /// @param outcome The outcome.
    /// @param proofHash The proof hash.
    /// @return The digest.
    function proposalDigest(bytes32 questionId, uint8 round, uint16 outcome, bytes20 proofHash)
        external
        view
        returns (bytes32);

    /// @notice The EIP-712 digest operators sign for a batch: `ProposalBatch(Proposal[] proposals)` with each
    /// proposal's current round.
    /// @param proposals The proposals.
    /// @return The digest.
    function batchDigest(ProposalInput[] calldata proposals) external view returns (bytes32);
}
