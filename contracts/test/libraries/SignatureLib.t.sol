// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "forge-std/Test.sol";
import {SignatureLib} from "../../src/libraries/SignatureLib.sol";
import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";

contract SignatureHarness {
    function recover(bytes32 digest, bytes calldata sigs, uint256 i) external pure returns (address) {
        return SignatureLib.recover(digest, sigs, i);
    }
}

contract SignatureLibTest is Test {
    SignatureHarness internal h = new SignatureHarness();
    uint256 internal constant N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141;

    function testFuzz_Recover(uint256 pk, bytes32 digest, uint8 at) public view {
        pk = bound(pk, 1, N - 1);
        at = uint8(bound(at, 0, 3));
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(pk, digest);
        bytes memory blob;
        for (uint256 i; i < 4; ++i) {
            blob = bytes.concat(
                blob, i == at ? abi.encodePacked(r, s, v) : abi.encodePacked(bytes32(i), bytes32(i), uint8(27))
            );
        }
        assertEq(h.recover(digest, blob, at), vm.addr(pk));
    }

    function test_RevertWhen_RecoverHighS() public {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(1, bytes32("d"));
        bytes memory twin = abi.encodePacked(r, bytes32(N - uint256(s)), v == 27 ? uint8(28) : uint8(27));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidSignature.selector, 0));
        h.recover(bytes32("d"), twin, 0);
    }

    function testFuzz_RevertWhen_RecoverBadV(uint8 v) public {
        vm.assume(v != 27 && v != 28);
        (, bytes32 r, bytes32 s) = vm.sign(1, bytes32("d"));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidSignature.selector, 0));
        h.recover(bytes32("d"), abi.encodePacked(r, s, v), 0);
    }

    function test_RevertWhen_RecoverZeroAddress() public {
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidSignature.selector, 0));
        h.recover(bytes32("d"), abi.encodePacked(bytes32(0), bytes32(uint256(1)), uint8(27)), 0);
    }

    function test_Typehashes() public pure {
        assertEq(
            SignatureLib.PROPOSAL_TYPEHASH,
            keccak256("Proposal(bytes32 questionId,uint8 round,uint16 outcome,bytes20 proofHash)")
        );
        assertEq(
            SignatureLib.BATCH_TYPEHASH,
            keccak256(
                "ProposalBatch(Proposal[] proposals)Proposal(bytes32 questionId,uint8 round,uint16 outcome,bytes20 proofHash)"
            )
        );
    }

    function testFuzz_HashBatch_IsKeccakOfConcatenation(bytes32 a, bytes32 b) public pure {
        bytes32[] memory hs = new bytes32[](2);
        (hs[0], hs[1]) = (a, b);
        assertEq(
            SignatureLib.hashBatch(hs),
            keccak256(abi.encode(SignatureLib.BATCH_TYPEHASH, keccak256(abi.encodePacked(a, b))))
        );
    }

    function testFuzz_TypedDataHash(bytes32 sep, bytes32 sh) public pure {
        assertEq(SignatureLib.typedDataHash(sep, sh), keccak256(abi.encodePacked("\x19\x01", sep, sh)));
    }
}
