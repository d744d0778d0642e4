// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IManagedAddressWhitelist} from "./ManagedProposerWhitelist.sol";

interface IUmaFinder {
    function getImplementationAddress(bytes32 interfaceName) external view returns (address);
}

interface IUmaStore {
    function computeFinalFee(address currency) external view returns (uint256);
}

interface IUmaIdentifierWhitelist {
    function isIdentifierSupported(bytes32 identifier) external view returns (bool);
}

interface IUmaCollateralWhitelist {
    function isOnWhitelist(address element) external view returns (bool);
}

interface IUmaOracleAncillary {
    function requestPrice(bytes32 identifier, uint256 time, bytes memory ancillaryData) external;

    function hasPrice(bytes32 identifier, uint256 time, bytes memory ancillaryData) external view returns (bool);

    function getPrice(bytes32 identifier, uint256 time, bytes memory ancillaryData) external view returns (int256);
}

interface IUmaToken {
    function transfer(address to, uint256 amount) external returns (bool);

    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

interface IUmaOptimisticRequester {
    function priceProposed(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData) external;

    function priceDisputed(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData, uint256 refund) external;

    function priceSettled(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData, int256 price) external;
}

/// @title ManagedOptimisticOracleV2Double
/// @notice For tests and local chains only. A test double of UMA's ManagedOptimisticOracleV2 (UMIP-189), as
/// published in UMAprotocol/managed-oracle at commit 6258c86 (src/optimistic-oracle-v2/implementation/
/// ManagedOptimisticOracleV2.sol on its OptimisticOracleV2.sol), written for this project from the published
/// interface and behaviour: no UMA source is copied. It keeps the real contract's function names and signatures
/// (so selectors), events, custom errors and Request struct layout, so the daemon reads and calls it as it would
/// the real one:
///  * the OptimisticOracleV2 lifecycle (request, propose, dispute to the Finder's Oracle, settle) with the
///    custom errors of the managed oracle's base (`RequestStateNotRequested()`, ...), events identical to
///    UMA core 2.62.2 OptimisticOracleV2 (RequestPrice, ProposePrice, DisputePrice, Settle) and the requester's
///    callbacks;
///  * a requester whitelist (`RequesterNotWhitelisted()`) and a default proposer whitelist, both
///    `IManagedAddressWhitelist`s; `getProposerWhitelistWithEnabledStatus` returns the effective one's list and
///    enabled status (a request's custom whitelist, else the default);
///  * the request manager role's `requestManagerSetBond` (within the currency's allowed bond range:
///    `ZeroBondNotAllowed()`, `BondBelowMinimumBond()`, `BondExceedsMaximumBond()`),
///    `requestManagerSetCustomLiveness` (`LivenessTooLow()` below the minimum dispute window) and
///    `requestManagerSetProposerWhitelist`, keyed by `getManagedRequestId` (requester, identifier, ancillary
///    data: no timestamp, so they may be set before the request exists);
///  * `proposePriceFor` (and so `proposePrice`) applies the custom bond and liveness, then refuses a proposer
///    off the effective whitelist (`ProposerNotWhitelisted()`, 0x6ffe5a95) or a sender off it
///    (`SenderNotWhitelisted()`), before pulling bond + final fee from the sender;
///  * only the resolver role settles (`settle`), so a proposal past its liveness stays disputable until it is
///    settled (`disputePriceFor` accepts Expired as Proposed); `settleAndGetPrice` reverts `RequestNotSettled()`
///    until then.
/// Roles are checked as OpenZeppelin's AccessControl does (`AccessControlUnauthorizedAccount`); the deployer holds
/// the config admin and resolver admin roles. Not modelled: upgradeability, deferred payouts, multicall, the
/// Store's fee payment (the fees stay in the double).
contract ManagedOptimisticOracleV2Double {
    enum State {
        Invalid,
        Requested,
        Proposed,
        Expired,
        Disputed,
        Resolved,
        Settled
    }

    struct RequestSettings {
        bool eventBased;
        bool refundOnDispute;
        bool callbackOnPriceProposed;
        bool callbackOnPriceDisputed;
        bool callbackOnPriceSettled;
        uint256 bond;
        uint256 customLiveness;
    }

    struct Request {
        address proposer;
        address disputer;
        address currency;
        bool settled;
        RequestSettings requestSettings;
        int256 proposedPrice;
        int256 resolvedPrice;
        uint256 expirationTime;
        uint256 reward;
        uint256 finalFee;
    }

    struct BondRange {
        uint128 minimumBond;
        uint128 maximumBond;
    }

    struct CustomBond {
        uint256 amount;
        bool isSet;
    }

    struct CustomLiveness {
        uint256 liveness;
        bool isSet;
    }

    bytes32 public constant DEFAULT_ADMIN_ROLE = 0x00;
    bytes32 public constant CONFIG_ADMIN_ROLE = keccak256("CONFIG_ADMIN_ROLE");
    bytes32 public constant REQUEST_MANAGER_ROLE = keccak256("REQUEST_MANAGER_ROLE");
    bytes32 public constant RESOLVER_ROLE = keccak256("RESOLVER_ROLE");
    bytes32 public constant RESOLVER_ADMIN_ROLE = keccak256("RESOLVER_ADMIN_ROLE");
    uint256 public constant LOWEST_MINIMUM_DISPUTE_WINDOW = 5 minutes;
    uint256 public constant ancillaryBytesLimit = 8192;
    int256 public constant TOO_EARLY_RESPONSE = type(int256).min;
    uint256 private constant OO_ANCILLARY_DATA_LIMIT = 8139;

    IUmaFinder public immutable finder;
    uint256 public defaultLiveness;
    uint256 public minimumDisputeWindow;
    IManagedAddressWhitelist public defaultProposerWhitelist;
    IManagedAddressWhitelist public requesterWhitelist;
    mapping(bytes32 => Request) public requests;
    mapping(bytes32 managedRequestId => mapping(address currency => CustomBond)) public customBonds;
    mapping(bytes32 managedRequestId => CustomLiveness) public customLivenessValues;
    mapping(bytes32 managedRequestId => IManagedAddressWhitelist) public customProposerWhitelists;
    mapping(address currency => BondRange) public allowedBondRanges;
    mapping(bytes32 role => mapping(address account => bool)) private roles;
    mapping(bytes32 role => bytes32 adminRole) private roleAdmins;

    // The base oracle's events (@uma/core OptimisticOracleV2Interface).
    event RequestPrice(
        address indexed requester,
        bytes32 identifier,
        uint256 timestamp,
        bytes ancillaryData,
        address currency,
        uint256 reward,
        uint256 finalFee
    );
    event ProposePrice(
        address indexed requester,
        address indexed proposer,
        bytes32 identifier,
        uint256 timestamp,
        bytes ancillaryData,
        int256 proposedPrice,
        uint256 expirationTimestamp,
        address currency
    );
    event DisputePrice(
        address indexed requester,
        address indexed proposer,
        address indexed disputer,
        bytes32 identifier,
        uint256 timestamp,
        bytes ancillaryData,
        int256 proposedPrice
    );
    event Settle(
        address indexed requester,
        address indexed proposer,
        address indexed disputer,
        bytes32 identifier,
        uint256 timestamp,
        bytes ancillaryData,
        int256 price,
        uint256 payout
    );
    // The managed oracle's events (ManagedOptimisticOracleV2Interface).
    event AllowedBondRangeUpdated(address indexed currency, uint256 newMinimumBond, uint256 newMaximumBond);
    event DefaultLivenessUpdated(uint256 newDefaultLiveness);
    event MinimumDisputeWindowUpdated(uint256 newMinimumDisputeWindow);
    event DefaultProposerWhitelistUpdated(address indexed newWhitelist);
    event RequesterWhitelistUpdated(address indexed newWhitelist);
    event CustomBondSet(
        bytes32 indexed managedRequestId,
        address requester,
        bytes32 indexed identifier,
        bytes ancillaryData,
        address indexed currency,
        uint256 bond
    );
    event CustomLivenessSet(
        bytes32 indexed managedRequestId,
        address indexed requester,
        bytes32 indexed identifier,
        bytes ancillaryData,
        uint256 customLiveness
    );
    event CustomProposerWhitelistSet(
        bytes32 indexed managedRequestId,
        address requester,
        bytes32 indexed identifier,
        bytes ancillaryData,
        address indexed newWhitelist
    );
    event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender);
    event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender);

    // The base oracle's errors.
    error RequestStateNotInvalid();
    error RequestStateNotRequested();
    error RequestStateNotProposed();
    error UnsupportedIdentifier();
    error UnsupportedCurrency();
    error TimestampInFuture();
    error AncillaryDataTooLong();
    error ProposerAddressCannotBeZero();
    error CannotProposeTooEarly();
    error DisputerAddressCannotBeZero();
    error LivenessTooLarge();
    error LivenessCannotBeZero();
    error RequestNotSettleable();
    // The managed oracle's errors.
    error RequesterNotWhitelisted();
    error ZeroBondNotAllowed();
    error BondBelowMinimumBond();
    error BondExceedsMaximumBond();
    error LivenessTooLow();
    error ProposerNotWhitelisted();
    error SenderNotWhitelisted();
    error UnsupportedWhitelistInterface();
    error MinimumBondAboveMaximumBond();
    error MinimumDisputeWindowTooLarge();
    error MinimumDisputeWindowTooSmall();
    error RequestNotSettled();
    // OpenZeppelin AccessControl's.
    error AccessControlUnauthorizedAccount(address account, bytes32 neededRole);

    constructor(
        uint256 liveness,
        IUmaFinder finder_,
        IManagedAddressWhitelist proposerWhitelist,
        IManagedAddressWhitelist requesterWhitelist_,
        uint256 minimumDisputeWindow_
    ) {
        finder = finder_;
        _validateBaseLiveness(liveness);
        defaultLiveness = liveness;
        _grant(DEFAULT_ADMIN_ROLE, msg.sender);
        _grant(CONFIG_ADMIN_ROLE, msg.sender);
        _grant(RESOLVER_ADMIN_ROLE, msg.sender);
        roleAdmins[REQUEST_MANAGER_ROLE] = CONFIG_ADMIN_ROLE;
        roleAdmins[RESOLVER_ROLE] = RESOLVER_ADMIN_ROLE;
        roleAdmins[RESOLVER_ADMIN_ROLE] = RESOLVER_ADMIN_ROLE;
        _setDefaultProposerWhitelist(address(proposerWhitelist));
        _setRequesterWhitelist(address(requesterWhitelist_));
        _setMinimumDisputeWindow(minimumDisputeWindow_);
    }

    // --- roles ---------------------------------------------------------------------------------------------------

    function hasRole(bytes32 role, address account) public view returns (bool) {
        return roles[role][account];
    }

    function getRoleAdmin(bytes32 role) public view returns (bytes32) {
        return roleAdmins[role];
    }

    function grantRole(bytes32 role, address account) public {
        _checkRole(roleAdmins[role]);
        _grant(role, account);
    }

    function revokeRole(bytes32 role, address account) public {
        _checkRole(roleAdmins[role]);
        if (roles[role][account]) {
            roles[role][account] = false;
            emit RoleRevoked(role, account, msg.sender);
        }
    }

    function addRequestManager(address requestManager) external {
        grantRole(REQUEST_MANAGER_ROLE, requestManager);
    }

    function removeRequestManager(address requestManager) external {
        revokeRole(REQUEST_MANAGER_ROLE, requestManager);
    }

    function addResolver(address resolver) external {
        grantRole(RESOLVER_ROLE, resolver);
    }

    function removeResolver(address resolver) external {
        revokeRole(RESOLVER_ROLE, resolver);
    }

    // --- configuration -------------------------------------------------------------------------------------------

    function setAllowedBondRange(address currency, BondRange calldata newRange) external {
        _checkRole(CONFIG_ADMIN_ROLE);
        if (!_collateralWhitelist().isOnWhitelist(currency)) revert UnsupportedCurrency();
        if (newRange.minimumBond > newRange.maximumBond) revert MinimumBondAboveMaximumBond();
        allowedBondRanges[currency] = newRange;
        emit AllowedBondRangeUpdated(currency, newRange.minimumBond, newRange.maximumBond);
    }

    function setDefaultLiveness(uint256 liveness) external {
        _checkRole(CONFIG_ADMIN_ROLE);
        _validateLiveness(liveness);
        defaultLiveness = liveness;
        emit DefaultLivenessUpdated(liveness);
    }

    function setMinimumDisputeWindow(uint256 window) external {
        _checkRole(CONFIG_ADMIN_ROLE);
        _setMinimumDisputeWindow(window);
    }

    function setDefaultProposerWhitelist(address whitelist) external {
        _checkRole(CONFIG_ADMIN_ROLE);
        _setDefaultProposerWhitelist(whitelist);
    }

    function setRequesterWhitelist(address whitelist) external {
        _checkRole(CONFIG_ADMIN_ROLE);
        _setRequesterWhitelist(whitelist);
    }

    // --- the request manager -------------------------------------------------------------------------------------

    function requestManagerSetBond(
        address requester,
        bytes32 identifier,
        bytes memory ancillaryData,
        address currency,
        uint256 bond
    ) external {
        _checkRole(REQUEST_MANAGER_ROLE);
        if (!_collateralWhitelist().isOnWhitelist(currency)) revert UnsupportedCurrency();
        if (bond == 0) revert ZeroBondNotAllowed();
        BondRange memory range = allowedBondRanges[currency];
        if (bond < range.minimumBond) revert BondBelowMinimumBond();
        if (bond > range.maximumBond) revert BondExceedsMaximumBond();
        bytes32 id = getManagedRequestId(requester, identifier, ancillaryData);
        customBonds[id][currency].amount = bond;
        emit CustomBondSet(id, requester, identifier, ancillaryData, currency, bond);
    }

    function requestManagerSetCustomLiveness(
        address requester,
        bytes32 identifier,
        bytes memory ancillaryData,
        uint256 customLiveness
    ) external {
        _checkRole(REQUEST_MANAGER_ROLE);
        _validateLiveness(customLiveness);
        bytes32 id = getManagedRequestId(requester, identifier, ancillaryData);
        customLivenessValues[id].liveness = customLiveness;
        emit CustomLivenessSet(id, requester, identifier, ancillaryData, customLiveness);
    }

    function requestManagerSetProposerWhitelist(
        address requester,
        bytes32 identifier,
        bytes memory ancillaryData,
        address whitelist
    ) external {
        _checkRole(REQUEST_MANAGER_ROLE);
        if (whitelist != address(0)) _validateWhitelistInterface(whitelist);
        bytes32 id = getManagedRequestId(requester, identifier, ancillaryData);
        customProposerWhitelists[id] = IManagedAddressWhitelist(whitelist);
        emit CustomProposerWhitelistSet(id, requester, identifier, ancillaryData, whitelist);
    }

    // --- the requester -------------------------------------------------------------------------------------------

    function requestPrice(
        bytes32 identifier,
        uint256 timestamp,
        bytes memory ancillaryData,
        address currency,
        uint256 reward
    ) external returns (uint256 totalBond) {
        if (!requesterWhitelist.isOnWhitelist(msg.sender)) revert RequesterNotWhitelisted();
        if (_getState(msg.sender, identifier, timestamp, ancillaryData) != State.Invalid) {
            revert RequestStateNotInvalid();
        }
        if (!_identifierWhitelist().isIdentifierSupported(identifier)) revert UnsupportedIdentifier();
        if (!_collateralWhitelist().isOnWhitelist(currency)) revert UnsupportedCurrency();
        if (timestamp > block.timestamp) revert TimestampInFuture();
        if (ancillaryData.length > OO_ANCILLARY_DATA_LIMIT) revert AncillaryDataTooLong();
        uint256 finalFee = IUmaStore(finder.getImplementationAddress("Store")).computeFinalFee(currency);
        Request storage request = requests[_getId(msg.sender, identifier, timestamp, ancillaryData)];
        request.currency = currency;
        request.requestSettings.bond = finalFee;
        request.reward = reward;
        request.finalFee = finalFee;
        if (reward > 0) _pull(currency, msg.sender, reward);
        emit RequestPrice(msg.sender, identifier, timestamp, ancillaryData, currency, reward, finalFee);
        return finalFee * 2;
    }

    function setBond(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData, uint256 bond)
        external
        returns (uint256 totalBond)
    {
        Request storage request = _requested(identifier, timestamp, ancillaryData);
        request.requestSettings.bond = bond;
        return bond + request.finalFee;
    }

    function setRefundOnDispute(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData) external {
        _requested(identifier, timestamp, ancillaryData).requestSettings.refundOnDispute = true;
    }

    function setCustomLiveness(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData, uint256 liveness)
        external
    {
        Request storage request = _requested(identifier, timestamp, ancillaryData);
        _validateLiveness(liveness);
        request.requestSettings.customLiveness = liveness;
    }

    function setEventBased(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData) external {
        Request storage request = _requested(identifier, timestamp, ancillaryData);
        request.requestSettings.eventBased = true;
    }

    function setCallbacks(
        bytes32 identifier,
        uint256 timestamp,
        bytes memory ancillaryData,
        bool callbackOnPriceProposed,
        bool callbackOnPriceDisputed,
        bool callbackOnPriceSettled
    ) external {
        Request storage request = _requested(identifier, timestamp, ancillaryData);
        request.requestSettings.callbackOnPriceProposed = callbackOnPriceProposed;
        request.requestSettings.callbackOnPriceDisputed = callbackOnPriceDisputed;
        request.requestSettings.callbackOnPriceSettled = callbackOnPriceSettled;
    }

    // --- proposers and disputers ---------------------------------------------------------------------------------

    function proposePriceFor(
        address proposer,
        address requester,
        bytes32 identifier,
        uint256 timestamp,
        bytes memory ancillaryData,
        int256 proposedPrice
    ) public returns (uint256 totalBond) {
        Request storage request = _getRequest(requester, identifier, timestamp, ancillaryData);
        bytes32 managedId = getManagedRequestId(requester, identifier, ancillaryData);
        uint256 customBond = customBonds[managedId][request.currency].amount;
        if (customBond != 0) request.requestSettings.bond = customBond;
        uint256 customLiveness = customLivenessValues[managedId].liveness;
        if (customLiveness != 0) request.requestSettings.customLiveness = customLiveness;
        IManagedAddressWhitelist whitelist = _effectiveProposerWhitelist(requester, identifier, ancillaryData);
        if (!whitelist.isOnWhitelist(proposer)) revert ProposerNotWhitelisted();
        if (!whitelist.isOnWhitelist(msg.sender)) revert SenderNotWhitelisted();

        if (proposer == address(0)) revert ProposerAddressCannotBeZero();
        if (_getState(requester, identifier, timestamp, ancillaryData) != State.Requested) {
            revert RequestStateNotRequested();
        }
        if (request.requestSettings.eventBased && proposedPrice == TOO_EARLY_RESPONSE) revert CannotProposeTooEarly();
        request.proposer = proposer;
        request.proposedPrice = proposedPrice;
        request.expirationTime = block.timestamp
            + (request.requestSettings.customLiveness != 0 ? request.requestSettings.customLiveness : defaultLiveness);
        totalBond = request.requestSettings.bond + request.finalFee;
        if (totalBond > 0) _pull(request.currency, msg.sender, totalBond);
        emit ProposePrice(
            requester,
            proposer,
            identifier,
            timestamp,
            ancillaryData,
            proposedPrice,
            request.expirationTime,
            request.currency
        );
        if (requester.code.length > 0 && request.requestSettings.callbackOnPriceProposed) {
            IUmaOptimisticRequester(requester).priceProposed(identifier, timestamp, ancillaryData);
        }
    }

    function proposePrice(
        address requester,
        bytes32 identifier,
        uint256 timestamp,
        bytes memory ancillaryData,
        int256 proposedPrice
    ) external returns (uint256 totalBond) {
        return proposePriceFor(msg.sender, requester, identifier, timestamp, ancillaryData, proposedPrice);
    }

    function disputePriceFor(
        address disputer,
        address requester,
        bytes32 identifier,
        uint256 timestamp,
        bytes memory ancillaryData
    ) public returns (uint256 totalBond) {
        if (disputer == address(0)) revert DisputerAddressCannotBeZero();
        State state = _getState(requester, identifier, timestamp, ancillaryData);
        // Settlement is the resolver's: a proposal past its liveness stays disputable until it is settled.
        if (state != State.Proposed && state != State.Expired) revert RequestStateNotProposed();
        Request storage request = _getRequest(requester, identifier, timestamp, ancillaryData);
        request.disputer = disputer;
        totalBond = request.requestSettings.bond + request.finalFee;
        if (totalBond > 0) _pull(request.currency, msg.sender, totalBond);
        _oracle()
            .requestPrice(identifier, _dvmTimestamp(request, timestamp), stampAncillaryData(ancillaryData, requester));
        uint256 refund = 0;
        if (request.reward > 0 && request.requestSettings.refundOnDispute) {
            refund = request.reward;
            request.reward = 0;
            _send(request.currency, requester, refund);
        }
        emit DisputePrice(
            requester, request.proposer, disputer, identifier, timestamp, ancillaryData, request.proposedPrice
        );
        if (requester.code.length > 0 && request.requestSettings.callbackOnPriceDisputed) {
            IUmaOptimisticRequester(requester).priceDisputed(identifier, timestamp, ancillaryData, refund);
        }
    }

    function disputePrice(address requester, bytes32 identifier, uint256 timestamp, bytes memory ancillaryData)
        external
        returns (uint256 totalBond)
    {
        return disputePriceFor(msg.sender, requester, identifier, timestamp, ancillaryData);
    }

    // --- settlement: the resolver's ------------------------------------------------------------------------------

    function settle(address requester, bytes32 identifier, uint256 timestamp, bytes memory ancillaryData)
        external
        returns (uint256 payout)
    {
        _checkRole(RESOLVER_ROLE);
        State state = _getState(requester, identifier, timestamp, ancillaryData);
        Request storage request = _getRequest(requester, identifier, timestamp, ancillaryData);
        uint256 bond = request.requestSettings.bond;
        address winner;
        if (state == State.Expired) {
            request.resolvedPrice = request.proposedPrice;
            payout = bond + request.finalFee + request.reward;
            winner = request.proposer;
        } else if (state == State.Resolved) {
            request.resolvedPrice = _oracle()
                .getPrice(identifier, _dvmTimestamp(request, timestamp), stampAncillaryData(ancillaryData, requester));
            payout = bond + (bond - bond / 2) + request.finalFee + request.reward;
            winner = request.resolvedPrice != request.proposedPrice ? request.disputer : request.proposer;
        } else {
            revert RequestNotSettleable();
        }
        request.settled = true;
        _send(request.currency, winner, payout);
        emit Settle(
            requester,
            request.proposer,
            request.disputer,
            identifier,
            timestamp,
            ancillaryData,
            request.resolvedPrice,
            payout
        );
        if (requester.code.length > 0 && request.requestSettings.callbackOnPriceSettled) {
            IUmaOptimisticRequester(requester).priceSettled(identifier, timestamp, ancillaryData, request.resolvedPrice);
        }
    }

    function settleAndGetPrice(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData)
        external
        view
        returns (int256)
    {
        if (_getState(msg.sender, identifier, timestamp, ancillaryData) != State.Settled) {
            revert RequestNotSettled();
        }
        return _getRequest(msg.sender, identifier, timestamp, ancillaryData).resolvedPrice;
    }

    // --- reads ---------------------------------------------------------------------------------------------------

    function getRequest(address requester, bytes32 identifier, uint256 timestamp, bytes memory ancillaryData)
        external
        view
        returns (Request memory)
    {
        return _getRequest(requester, identifier, timestamp, ancillaryData);
    }

    function getState(address requester, bytes32 identifier, uint256 timestamp, bytes memory ancillaryData)
        external
        view
        returns (State)
    {
        return _getState(requester, identifier, timestamp, ancillaryData);
    }

    function hasPrice(address requester, bytes32 identifier, uint256 timestamp, bytes memory ancillaryData)
        external
        view
        returns (bool)
    {
        State state = _getState(requester, identifier, timestamp, ancillaryData);
        return state == State.Settled || state == State.Resolved || state == State.Expired;
    }

    function getCurrentTime() external view returns (uint256) {
        return block.timestamp;
    }

    function getCustomProposerWhitelist(address requester, bytes32 identifier, bytes memory ancillaryData)
        external
        view
        returns (IManagedAddressWhitelist)
    {
        return customProposerWhitelists[getManagedRequestId(requester, identifier, ancillaryData)];
    }

    function getProposerWhitelistWithEnabledStatus(address requester, bytes32 identifier, bytes memory ancillaryData)
        external
        view
        returns (address[] memory allowedProposers, bool isEnabled)
    {
        IManagedAddressWhitelist whitelist = _effectiveProposerWhitelist(requester, identifier, ancillaryData);
        return (whitelist.getWhitelist(), whitelist.isWhitelistEnabled());
    }

    function getManagedRequestId(address requester, bytes32 identifier, bytes memory ancillaryData)
        public
        pure
        returns (bytes32)
    {
        return keccak256(abi.encodePacked(requester, identifier, ancillaryData));
    }

    /// @notice The ancillary data the DVM is asked with: `<data>,ooRequester:<requester, 40 lowercase hex digits>`.
    function stampAncillaryData(bytes memory ancillaryData, address requester) public pure returns (bytes memory) {
        bytes16 digits = "0123456789abcdef";
        bytes memory text = new bytes(40);
        uint160 value = uint160(requester);
        for (uint256 i = 40; i > 0; --i) {
            text[i - 1] = digits[value & 0xf];
            value >>= 4;
        }
        return abi.encodePacked(ancillaryData, ",ooRequester:", text);
    }

    // --- internals -----------------------------------------------------------------------------------------------

    function _checkRole(bytes32 role) private view {
        if (!roles[role][msg.sender]) revert AccessControlUnauthorizedAccount(msg.sender, role);
    }

    function _grant(bytes32 role, address account) private {
        if (!roles[role][account]) {
            roles[role][account] = true;
            emit RoleGranted(role, account, msg.sender);
        }
    }

    function _requested(bytes32 identifier, uint256 timestamp, bytes memory ancillaryData)
        private
        view
        returns (Request storage)
    {
        if (_getState(msg.sender, identifier, timestamp, ancillaryData) != State.Requested) {
            revert RequestStateNotRequested();
        }
        return _getRequest(msg.sender, identifier, timestamp, ancillaryData);
    }

    function _effectiveProposerWhitelist(address requester, bytes32 identifier, bytes memory ancillaryData)
        private
        view
        returns (IManagedAddressWhitelist whitelist)
    {
        whitelist = customProposerWhitelists[getManagedRequestId(requester, identifier, ancillaryData)];
        if (address(whitelist) == address(0)) whitelist = defaultProposerWhitelist;
    }

    function _setDefaultProposerWhitelist(address whitelist) private {
        _validateWhitelistInterface(whitelist);
        defaultProposerWhitelist = IManagedAddressWhitelist(whitelist);
        emit DefaultProposerWhitelistUpdated(whitelist);
    }

    function _setRequesterWhitelist(address whitelist) private {
        _validateWhitelistInterface(whitelist);
        requesterWhitelist = IManagedAddressWhitelist(whitelist);
        emit RequesterWhitelistUpdated(whitelist);
    }

    function _setMinimumDisputeWindow(uint256 window) private {
        if (window > defaultLiveness) revert MinimumDisputeWindowTooLarge();
        if (window < LOWEST_MINIMUM_DISPUTE_WINDOW) revert MinimumDisputeWindowTooSmall();
        minimumDisputeWindow = window;
        emit MinimumDisputeWindowUpdated(window);
    }

    function _validateWhitelistInterface(address whitelist) private view {
        bool supported;
        if (whitelist.code.length > 0) {
            (bool ok, bytes memory answer) = whitelist.staticcall(
                abi.encodeWithSignature("supportsInterface(bytes4)", type(IManagedAddressWhitelist).interfaceId)
            );
            supported = ok && answer.length == 32 && abi.decode(answer, (bool));
        }
        if (!supported) revert UnsupportedWhitelistInterface();
    }

    function _validateLiveness(uint256 liveness) private view {
        if (liveness < minimumDisputeWindow) revert LivenessTooLow();
        _validateBaseLiveness(liveness);
    }

    function _validateBaseLiveness(uint256 liveness) private pure {
        if (liveness >= 5200 weeks) revert LivenessTooLarge();
        if (liveness == 0) revert LivenessCannotBeZero();
    }

    function _getId(address requester, bytes32 identifier, uint256 timestamp, bytes memory ancillaryData)
        private
        pure
        returns (bytes32)
    {
        return keccak256(abi.encodePacked(requester, identifier, timestamp, ancillaryData));
    }

    function _getRequest(address requester, bytes32 identifier, uint256 timestamp, bytes memory ancillaryData)
        private
        view
        returns (Request storage)
    {
        return requests[_getId(requester, identifier, timestamp, ancillaryData)];
    }

    function _getState(address requester, bytes32 identifier, uint256 timestamp, bytes memory ancillaryData)
        private
        view
        returns (State)
    {
        Request storage request = _getRequest(requester, identifier, timestamp, ancillaryData);
        if (request.currency == address(0)) return State.Invalid;
        if (request.proposer == address(0)) return State.Requested;
        if (request.settled) return State.Settled;
        if (request.disputer == address(0)) {
            return request.expirationTime <= block.timestamp ? State.Expired : State.Proposed;
        }
        return _oracle()
            .hasPrice(identifier, _dvmTimestamp(request, timestamp), stampAncillaryData(ancillaryData, requester))
            ? State.Resolved
            : State.Disputed;
    }

    function _dvmTimestamp(Request storage request, uint256 timestamp) private view returns (uint256) {
        if (!request.requestSettings.eventBased) return timestamp;
        uint256 liveness =
            request.requestSettings.customLiveness != 0 ? request.requestSettings.customLiveness : defaultLiveness;
        return request.expirationTime - liveness;
    }

    function _oracle() private view returns (IUmaOracleAncillary) {
        return IUmaOracleAncillary(finder.getImplementationAddress("Oracle"));
    }

    function _identifierWhitelist() private view returns (IUmaIdentifierWhitelist) {
        return IUmaIdentifierWhitelist(finder.getImplementationAddress("IdentifierWhitelist"));
    }

    function _collateralWhitelist() private view returns (IUmaCollateralWhitelist) {
        return IUmaCollateralWhitelist(finder.getImplementationAddress("CollateralWhitelist"));
    }

    function _pull(address token, address from, uint256 amount) private {
        (bool ok, bytes memory answer) =
            token.call(abi.encodeCall(IUmaToken.transferFrom, (from, address(this), amount)));
        _checked(ok, answer);
    }

    function _send(address token, address to, uint256 amount) private {
        (bool ok, bytes memory answer) = token.call(abi.encodeCall(IUmaToken.transfer, (to, amount)));
        _checked(ok, answer);
    }

    /// @dev SafeERC20's rule: a failed call's revert is passed on; a call returning false fails too.
    function _checked(bool ok, bytes memory answer) private pure {
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(answer, 32), mload(answer))
            }
        }
        require(answer.length == 0 || abi.decode(answer, (bool)), "SafeERC20: ERC20 operation did not succeed");
    }
}
