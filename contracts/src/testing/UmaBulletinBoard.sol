// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title UmaBulletinBoard
/// @notice For tests and local chains only: a bulletin board with the interface of the one Polymarket's UMA CTF
/// adapter carries (`IBulletinBoard`), where a question's creator posts clarifications. Anyone may post for any
/// question id (keccak256 of the request's ancillary data); readers ask for one poster's updates, so only the
/// updates of the poster they trust (the question's initializer) count.
contract UmaBulletinBoard {
    struct AncillaryDataUpdate {
        uint256 timestamp;
        bytes update;
    }

    mapping(bytes32 posterKey => AncillaryDataUpdate[]) private _updates;

    event AncillaryDataUpdated(bytes32 indexed questionID, address indexed owner, bytes update);

    /// @notice Posts `update` for `questionID`, as the caller.
    function postUpdate(bytes32 questionID, bytes calldata update) external {
        _updates[_posterKey(questionID, msg.sender)].push(AncillaryDataUpdate(block.timestamp, update));
        emit AncillaryDataUpdated(questionID, msg.sender, update);
    }

    /// @notice Every update `owner` posted for `questionID`, oldest first.
    function getUpdates(bytes32 questionID, address owner) external view returns (AncillaryDataUpdate[] memory) {
        return _updates[_posterKey(questionID, owner)];
    }

    /// @notice The last update `owner` posted for `questionID` (timestamp 0 and no bytes when none).
    function getLatestUpdate(bytes32 questionID, address owner) external view returns (AncillaryDataUpdate memory) {
        AncillaryDataUpdate[] storage posted = _updates[_posterKey(questionID, owner)];
        if (posted.length == 0) return AncillaryDataUpdate(0, "");
        return posted[posted.length - 1];
    }

    function _posterKey(bytes32 questionID, address owner) private pure returns (bytes32) {
        return keccak256(abi.encode(questionID, owner));
    }
}
