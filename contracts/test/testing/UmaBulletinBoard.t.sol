// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "forge-std/Test.sol";
import {UmaBulletinBoard} from "../../src/testing/UmaBulletinBoard.sol";

contract UmaBulletinBoardTest is Test {
    event AncillaryDataUpdated(bytes32 indexed questionID, address indexed owner, bytes update);

    UmaBulletinBoard internal board;
    bytes32 internal constant QUESTION = keccak256("q: title: Did it happen?,initializer:00");
    address internal constant CREATOR = address(0xC0FFEE);
    address internal constant STRANGER = address(0xBAD);

    function setUp() public {
        board = new UmaBulletinBoard();
    }

    function test_updatesAreKeptPerPosterOldestFirst() public {
        vm.warp(1000);
        vm.expectEmit(true, true, false, true);
        emit AncillaryDataUpdated(QUESTION, CREATOR, "first");
        vm.prank(CREATOR);
        board.postUpdate(QUESTION, "first");
        vm.warp(2000);
        vm.prank(STRANGER);
        board.postUpdate(QUESTION, "not the creator");
        vm.prank(CREATOR);
        board.postUpdate(QUESTION, "second");

        UmaBulletinBoard.AncillaryDataUpdate[] memory mine = board.getUpdates(QUESTION, CREATOR);
        assertEq(mine.length, 2);
        assertEq(mine[0].timestamp, 1000);
        assertEq(mine[0].update, "first");
        assertEq(mine[1].timestamp, 2000);
        assertEq(mine[1].update, "second");
        assertEq(board.getUpdates(QUESTION, STRANGER).length, 1);
        assertEq(board.getUpdates(keccak256("another question"), CREATOR).length, 0);

        UmaBulletinBoard.AncillaryDataUpdate memory latest = board.getLatestUpdate(QUESTION, CREATOR);
        assertEq(latest.update, "second");
        UmaBulletinBoard.AncillaryDataUpdate memory none = board.getLatestUpdate(QUESTION, address(1));
        assertEq(none.timestamp, 0);
        assertEq(none.update.length, 0);
    }
}
