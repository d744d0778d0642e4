// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The whitelist interface UMA's managed oracle reads (UMAprotocol/managed-oracle,
/// src/common/interfaces/AddressWhitelistInterface.sol at commit 6258c86): UMA's AddressWhitelist functions plus
/// `isWhitelistEnabled`. Its ERC-165 interface id is what the managed oracle checks a whitelist by.
interface IManagedAddressWhitelist {
    function addToWhitelist(address newElement) external;

    function removeFromWhitelist(address newElement) external;

    function isOnWhitelist(address newElement) external view returns (bool);

    function getWhitelist() external view returns (address[] memory);

    function isWhitelistEnabled() external view returns (bool);
}

/// @title ManagedProposerWhitelist
/// @notice For tests and local chains only, written for this project (no UMA source copied): a proposer whitelist
/// with the behaviour of UMA's `AddressWhitelist` (enabled: only listed addresses are on it) and
/// `DisabledAddressWhitelist` (disabled: everyone is on it, the list is empty and cannot change) from
/// UMAprotocol/managed-oracle at commit 6258c86, chosen by `enabled` at deployment. The deployer owns it.
contract ManagedProposerWhitelist is IManagedAddressWhitelist {
    bool public immutable enabled;
    address public immutable owner;
    address[] private members;
    mapping(address member => bool listed) private listed;

    event AddedToWhitelist(address indexed addedAddress);
    event RemovedFromWhitelist(address indexed removedAddress);

    error CannotAddToDisabledAddressWhitelist();
    error CannotRemoveFromDisabledAddressWhitelist();
    error OwnableUnauthorizedAccount(address account);

    constructor(bool enabled_) {
        enabled = enabled_;
        owner = msg.sender;
    }

    function addToWhitelist(address newElement) external {
        if (!enabled) revert CannotAddToDisabledAddressWhitelist();
        if (msg.sender != owner) revert OwnableUnauthorizedAccount(msg.sender);
        if (listed[newElement]) return;
        listed[newElement] = true;
        members.push(newElement);
        emit AddedToWhitelist(newElement);
    }

    function removeFromWhitelist(address element) external {
        if (!enabled) revert CannotRemoveFromDisabledAddressWhitelist();
        if (msg.sender != owner) revert OwnableUnauthorizedAccount(msg.sender);
        if (!listed[element]) return;
        listed[element] = false;
        for (uint256 i = 0; i < members.length; ++i) {
            if (members[i] == element) {
                members[i] = members[members.length - 1];
                members.pop();
                break;
            }
        }
        emit RemovedFromWhitelist(element);
    }

    function isOnWhitelist(address element) external view returns (bool) {
        return !enabled || listed[element];
    }

    function getWhitelist() external view returns (address[] memory) {
        if (!enabled) return new address[](0);
        return members;
    }

    function isWhitelistEnabled() external view returns (bool) {
        return enabled;
    }

    /// @notice ERC-165: this whitelist's interface and ERC-165 itself.
    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == type(IManagedAddressWhitelist).interfaceId || interfaceId == 0x01ffc9a7;
    }
}
