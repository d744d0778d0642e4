// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {OracleBase} from "./utils/OracleBase.sol";
import {AgentOracle} from "../src/AgentOracle.sol";
import {IAgentOracle} from "../src/interfaces/IAgentOracle.sol";

/// @notice Multi-operator mode: EIP-712 signatures from k of n operators.
contract AgentOracleSignaturesTest is OracleBase {
    uint256[] internal keys;
    address[] internal ops;

    bytes32 internal constant PROPOSAL_TYPEHASH =
        keccak256("Proposal(bytes32 questionId,uint8 round,uint16 outcome,bytes20 proofHash)");
    bytes32 internal constant BATCH_TYPEHASH = keccak256(
        "ProposalBatch(Proposal[] proposals)Proposal(bytes32 questionId,uint8 round,uint16 outcome,bytes20 proofHash)"
    );

    function setUp() public override {
        super.setUp();
        vm.startPrank(owner);
        for (uint256 i; i < 5; ++i) {
            (address a, uint256 k) = makeAddrAndKey(string(abi.encodePacked("operator", vm.toString(i))));
            keys.push(k);
            ops.push(a);
            oracle.grantRole(a, IAgentOracle.Role.Operator);
        }
        oracle.setThreshold(3);
        vm.stopPrank();
    }

    /// @dev The digest computed independently of the contract, as an off-chain signer (eth_signTypedData) would.
    function _digest(address verifying, uint256 chainId, bytes32 id, uint8 round, uint16 outcome, bytes20 h)
        internal
        pure
        returns (bytes32)
    {
        bytes32 domain = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("AgentOracle"),
                keccak256("1"),
                chainId,
                verifying
            )
        );
        bytes32 structHash = keccak256(abi.encode(PROPOSAL_TYPEHASH, id, round, outcome, h));
        return keccak256(abi.encodePacked("\x19\x01", domain, structHash));
    }

    function _sigs(bytes32 digest, uint256[] memory which) internal view returns (bytes memory s) {
        for (uint256 i; i < which.length; ++i) {
            s = bytes.concat(s, _sign(keys[which[i]], digest));
        }
    }

    function _idx(uint256 a, uint256 b, uint256 c) internal pure returns (uint256[] memory w) {
        w = new uint256[](3);
        (w[0], w[1], w[2]) = (a, b, c);
    }

    // ---------------------------------------------------------------------------------------------------------
    // proposeSigned
    // ---------------------------------------------------------------------------------------------------------

    function test_ProposeSigned_AcceptsKofN() public {
        bytes32 id = _ask();
        bytes32 digest = _digest(address(oracle), block.chainid, id, 0, 1, PROOF);
        assertEq(digest, oracle.proposalDigest(id, 0, 1, PROOF));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, _sigs(digest, _idx(4, 0, 2)));
        assertEq(oracle.getQuestion(id).outcome, 1);
    }

    function test_ProposeSigned_AcceptsMoreThanK() public {
        bytes32 id = _ask();
        bytes32 digest = oracle.proposalDigest(id, 0, 1, PROOF);
        uint256[] memory all = new uint256[](5);
        for (uint256 i; i < 5; ++i) {
            all[i] = i;
        }
        vm.prank(reporter2);
        oracle.proposeSigned(id, 1, PROOF, _sigs(digest, all));
        assertEq(oracle.getQuestion(id).proposer, reporter2);
    }

    function testFuzz_ProposeSigned_ThresholdBoundary(uint8 k, uint8 given) public {
        k = uint8(bound(k, 1, 5));
        given = uint8(bound(given, 0, 5));
        vm.prank(owner);
        oracle.setThreshold(k);
        bytes32 id = _ask();
        bytes32 digest = oracle.proposalDigest(id, 0, 0, PROOF);
        uint256[] memory w = new uint256[](given);
        for (uint256 i; i < given; ++i) {
            w[i] = i;
        }
        if (given < k) vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InsufficientSignatures.selector, given, k));
        vm.prank(reporter);
        oracle.proposeSigned(id, 0, PROOF, _sigs(digest, w));
    }

    function test_ProposeSigned_NewRoundNeedsNewSignatures() public {
        bytes32 id = _ask();
        bytes memory round0 = _sigs(oracle.proposalDigest(id, 0, 1, PROOF), _idx(0, 1, 2));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, round0);
        _disputeEth(id);
        vm.prank(arbiter);
        oracle.reopen(id);
        // replaying round 0's signatures in round 1 fails: the digest includes the round
        vm.expectPartialRevert(IAgentOracle.NotOperator.selector);
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, round0);
        bytes memory round1 = _sigs(oracle.proposalDigest(id, 1, 1, PROOF), _idx(0, 1, 2));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, round1);
        assertEq(oracle.getQuestion(id).round, 1);
    }

    function test_RevertWhen_ProposeSignedReplayedOnAnotherChain() public {
        bytes32 id = _ask();
        bytes memory sigs = _sigs(oracle.proposalDigest(id, 0, 1, PROOF), _idx(0, 1, 2));
        bytes32 before = oracle.DOMAIN_SEPARATOR();
        vm.chainId(block.chainid + 1);
        assertTrue(oracle.DOMAIN_SEPARATOR() != before, "separator follows the chain id");
        assertEq(oracle.proposalDigest(id, 0, 1, PROOF), _digest(address(oracle), block.chainid, id, 0, 1, PROOF));
        vm.expectPartialRevert(IAgentOracle.NotOperator.selector);
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, sigs);
    }

    function test_RevertWhen_ProposeSignedReplayedOnAnotherContract() public {
        AgentOracle other = new AgentOracle(owner, treasury, address(0), BOND, MIN_LIVENESS);
        vm.startPrank(owner);
        other.grantRole(reporter, IAgentOracle.Role.Reporter);
        for (uint256 i; i < 5; ++i) {
            other.grantRole(ops[i], IAgentOracle.Role.Operator);
        }
        other.setThreshold(3);
        vm.stopPrank();
        bytes32 id = _ask();
        vm.prank(requester);
        bytes32 otherId = other.request(TEXT, 2, 0, LIVENESS, address(0), bytes32(0));
        assertEq(id, otherId); // same id on both contracts...
        bytes memory sigs = _sigs(oracle.proposalDigest(id, 0, 1, PROOF), _idx(0, 1, 2));
        vm.expectPartialRevert(IAgentOracle.NotOperator.selector); // ...but the signatures are bound to `oracle`
        vm.prank(reporter);
        other.proposeSigned(id, 1, PROOF, sigs);
    }

    function test_RevertWhen_ProposeSignedDuplicateSigner() public {
        bytes32 id = _ask();
        bytes32 digest = oracle.proposalDigest(id, 0, 1, PROOF);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.DuplicateSigner.selector, ops[1]));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, _sigs(digest, _idx(1, 2, 1)));
    }

    function test_RevertWhen_ProposeSignedNonOperatorSigner() public {
        bytes32 id = _ask();
        bytes32 digest = oracle.proposalDigest(id, 0, 1, PROOF);
        (address eve, uint256 eveKey) = makeAddrAndKey("eve");
        bytes memory sigs = bytes.concat(_sigs(digest, _idx(0, 1, 2)), _sign(eveKey, digest));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOperator.selector, eve));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, sigs);
    }

    function test_RevertWhen_ProposeSignedRevokedOperator() public {
        bytes32 id = _ask();
        vm.prank(owner);
        oracle.revokeRole(ops[2], IAgentOracle.Role.Operator);
        bytes32 digest = oracle.proposalDigest(id, 0, 1, PROOF);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.NotOperator.selector, ops[2]));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, _sigs(digest, _idx(0, 1, 2)));
    }

    function test_RevertWhen_ProposeSignedForDifferentOutcome() public {
        bytes32 id = _ask();
        bytes memory sigs = _sigs(oracle.proposalDigest(id, 0, 0, PROOF), _idx(0, 1, 2));
        vm.expectPartialRevert(IAgentOracle.NotOperator.selector);
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, sigs);
    }

    function test_RevertWhen_ProposeSignedInsufficientSignatures() public {
        bytes32 id = _ask();
        bytes32 digest = oracle.proposalDigest(id, 0, 1, PROOF);
        uint256[] memory two = new uint256[](2);
        two[1] = 1;
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InsufficientSignatures.selector, 2, 3));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, _sigs(digest, two));
    }

    function test_RevertWhen_ProposeSignedBadSignatureLength() public {
        bytes32 id = _ask();
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidSignatureLength.selector, 64));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, new bytes(64));
    }

    function test_RevertWhen_ProposeSignedBadV() public {
        bytes32 id = _ask();
        bytes memory sigs = _sigs(oracle.proposalDigest(id, 0, 1, PROOF), _idx(0, 1, 2));
        sigs[64 + 65] = bytes1(uint8(29));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidSignature.selector, 1));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, sigs);
    }

    function test_RevertWhen_ProposeSignedHighS() public {
        bytes32 id = _ask();
        bytes32 digest = oracle.proposalDigest(id, 0, 1, PROOF);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(keys[0], digest);
        // the malleable twin (r, n - s, v ^ 1) recovers the same signer but is rejected
        uint256 n = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141;
        bytes memory twin = abi.encodePacked(r, bytes32(n - uint256(s)), v == 27 ? uint8(28) : uint8(27));
        bytes memory sigs = bytes.concat(twin, _sigs(digest, _idx(1, 2, 3)));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidSignature.selector, 0));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, sigs);
    }

    function test_RevertWhen_ProposeSignedUnrecoverable() public {
        bytes32 id = _ask();
        bytes memory sigs = bytes.concat(
            abi.encodePacked(bytes32(0), bytes32(uint256(1)), uint8(27)),
            _sigs(oracle.proposalDigest(id, 0, 1, PROOF), _idx(1, 2, 3))
        );
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidSignature.selector, 0));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, sigs);
    }

    function test_RevertWhen_ProposeSignedCallerNotReporter() public {
        bytes32 id = _ask();
        bytes memory sigs = _sigs(oracle.proposalDigest(id, 0, 1, PROOF), _idx(0, 1, 2));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.MissingRole.selector, ops[0], IAgentOracle.Role.Reporter));
        vm.prank(ops[0]);
        oracle.proposeSigned(id, 1, PROOF, sigs);
    }

    function test_RevertWhen_ProposeSignedModeOff() public {
        vm.prank(owner);
        oracle.setThreshold(0);
        bytes32 id = _ask();
        vm.expectRevert(IAgentOracle.MultiOperatorModeOff.selector);
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, "");
    }

    function test_RevertWhen_ProposeSignedPaused() public {
        bytes32 id = _ask();
        vm.prank(pauser);
        oracle.pause();
        vm.expectRevert(IAgentOracle.ContractPaused.selector);
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, "");
    }

    function test_RevertWhen_ProposeSignedTwice() public {
        bytes32 id = _ask();
        bytes memory sigs = _sigs(oracle.proposalDigest(id, 0, 1, PROOF), _idx(0, 1, 2));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, sigs);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, id, IAgentOracle.Status.Proposed));
        vm.prank(reporter);
        oracle.proposeSigned(id, 1, PROOF, sigs);
    }

    // ---------------------------------------------------------------------------------------------------------
    // proposeBatchSigned
    // ---------------------------------------------------------------------------------------------------------

    function _batch(uint256 n) internal returns (IAgentOracle.ProposalInput[] memory ps, bytes32 digest) {
        ps = new IAgentOracle.ProposalInput[](n);
        bytes32[] memory hashes = new bytes32[](n);
        for (uint256 i; i < n; ++i) {
            ps[i] = IAgentOracle.ProposalInput(_ask(bytes32(i)), uint16(i % 2), bytes20(keccak256(abi.encode(i))));
            hashes[i] =
                keccak256(abi.encode(PROPOSAL_TYPEHASH, ps[i].questionId, uint8(0), ps[i].outcome, ps[i].proofHash));
        }
        bytes32 structHash = keccak256(abi.encode(BATCH_TYPEHASH, keccak256(abi.encodePacked(hashes))));
        digest = keccak256(abi.encodePacked("\x19\x01", oracle.DOMAIN_SEPARATOR(), structHash));
    }

    function test_ProposeBatchSigned_ProposesAll() public {
        (IAgentOracle.ProposalInput[] memory ps, bytes32 digest) = _batch(4);
        assertEq(digest, oracle.batchDigest(ps));
        vm.prank(reporter);
        oracle.proposeBatchSigned(ps, _sigs(digest, _idx(0, 3, 4)));
        for (uint256 i; i < 4; ++i) {
            assertEq(_status(ps[i].questionId), IAgentOracle.Status.Proposed);
        }
    }

    function test_RevertWhen_ProposeBatchSignedTampered() public {
        (IAgentOracle.ProposalInput[] memory ps, bytes32 digest) = _batch(4);
        bytes memory sigs = _sigs(digest, _idx(0, 3, 4));
        ps[2].outcome = 1 - ps[2].outcome;
        vm.expectPartialRevert(IAgentOracle.NotOperator.selector);
        vm.prank(reporter);
        oracle.proposeBatchSigned(ps, sigs);
    }

    function test_RevertWhen_ProposeBatchSignedEmpty() public {
        vm.expectRevert(IAgentOracle.EmptyBatch.selector);
        vm.prank(reporter);
        oracle.proposeBatchSigned(new IAgentOracle.ProposalInput[](0), "");
    }

    function test_RevertWhen_ProposeBatchSignedModeOff() public {
        vm.prank(owner);
        oracle.setThreshold(0);
        vm.expectRevert(IAgentOracle.MultiOperatorModeOff.selector);
        vm.prank(reporter);
        oracle.proposeBatchSigned(new IAgentOracle.ProposalInput[](1), "");
    }

    function test_RevertWhen_ProposeBatchSignedDuplicateSigner() public {
        (IAgentOracle.ProposalInput[] memory ps, bytes32 digest) = _batch(2);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.DuplicateSigner.selector, ops[0]));
        vm.prank(reporter);
        oracle.proposeBatchSigned(ps, _sigs(digest, _idx(0, 1, 0)));
    }

    function test_RevertWhen_ProposeBatchSignedCallerNotReporter() public {
        (IAgentOracle.ProposalInput[] memory ps, bytes32 digest) = _batch(2);
        bytes memory sigs = _sigs(digest, _idx(0, 1, 2));
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.MissingRole.selector, stranger, IAgentOracle.Role.Reporter));
        vm.prank(stranger);
        oracle.proposeBatchSigned(ps, sigs);
    }

    function test_RevertWhen_ProposeBatchSignedPaused() public {
        (IAgentOracle.ProposalInput[] memory ps, bytes32 digest) = _batch(2);
        bytes memory sigs = _sigs(digest, _idx(0, 1, 2));
        vm.prank(pauser);
        oracle.pause();
        vm.expectRevert(IAgentOracle.ContractPaused.selector);
        vm.prank(reporter);
        oracle.proposeBatchSigned(ps, sigs);
    }

    function test_RevertWhen_ProposeBatchSignedInsufficientSignatures() public {
        (IAgentOracle.ProposalInput[] memory ps, bytes32 digest) = _batch(2);
        bytes memory one = _sign(keys[0], digest);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InsufficientSignatures.selector, 1, 3));
        vm.prank(reporter);
        oracle.proposeBatchSigned(ps, one);
    }

    function test_RevertWhen_ProposeBatchSignedBadSignatureLength() public {
        (IAgentOracle.ProposalInput[] memory ps,) = _batch(2);
        vm.expectRevert(abi.encodeWithSelector(IAgentOracle.InvalidSignatureLength.selector, 66));
        vm.prank(reporter);
        oracle.proposeBatchSigned(ps, new bytes(66));
    }

    function test_RevertWhen_ProposeBatchSignedAlreadyProposed() public {
        (IAgentOracle.ProposalInput[] memory ps, bytes32 digest) = _batch(2);
        bytes memory sigs = _sigs(digest, _idx(0, 1, 2));
        vm.prank(reporter);
        oracle.proposeBatchSigned(ps, sigs);
        vm.expectRevert(
            abi.encodeWithSelector(IAgentOracle.InvalidStatus.selector, ps[0].questionId, IAgentOracle.Status.Proposed)
        );
        vm.prank(reporter);
        oracle.proposeBatchSigned(ps, sigs);
    }

    // ---------------------------------------------------------------------------------------------------------
    // domain separator
    // ---------------------------------------------------------------------------------------------------------

    function testFuzz_DomainSeparator_TracksChainId(uint64 chainId) public {
        vm.assume(chainId != 0);
        vm.chainId(chainId);
        bytes32 expected = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("AgentOracle"),
                keccak256("1"),
                uint256(chainId),
                address(oracle)
            )
        );
        assertEq(oracle.DOMAIN_SEPARATOR(), expected);
    }
}
