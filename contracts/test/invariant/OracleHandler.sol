// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "forge-std/Test.sol";
import {AgentOracle} from "../../src/AgentOracle.sol";
import {IAgentOracle} from "../../src/interfaces/IAgentOracle.sol";
import {MockERC20} from "../mocks/MockERC20.sol";
import {FlakyConsumer} from "../mocks/MockConsumer.sol";

/// @notice Sends its ETH to `to` by self-destructing in its constructor: ETH no contract can refuse.
contract ForceSend {
    constructor(address payable to) payable {
        selfdestruct(to);
    }
}

/// @notice Drives the oracle through random sequences of every user and admin action, from authorized and
/// unauthorized callers alike, and keeps ghost records the invariants compare against.
contract OracleHandler is Test {
    AgentOracle public oracle;
    MockERC20 public token;
    FlakyConsumer public consumer; // the callback of about half the questions
    address public owner;
    address public treasury;
    address public arbiter;

    address[] public actors; // actors[0..1] are reporters, actors[2] is the arbiter, the rest hold no role
    bytes32[] public ids;
    address[] public bondTokens; // tokens ever used for bonds (address(0) = ETH)

    // ghosts
    mapping(bytes32 => bool) public finalSeen;
    mapping(bytes32 => bytes32) public finalRecord; // keccak(outcome, proofHash, finalizedAt)
    mapping(bytes32 => mapping(uint8 => uint256)) public proposalsInRound;
    uint256 public maxProposalsInRound;
    bool public finalChanged;
    bool public unauthorizedProposal;
    bool public unauthorizedRuling;
    bool public bondAboveLimit;
    bool public manualForfeit;
    uint256 public failedCallbacks;
    mapping(address token => uint256) public forced; // sent to the oracle outside `dispute`
    mapping(bytes4 => uint256) public calls;
    mapping(bytes4 => uint256) public successes;

    uint16 internal constant INVALID = 65535;

    constructor(AgentOracle oracle_, MockERC20 token_, address owner_, address treasury_, address[] memory actors_) {
        oracle = oracle_;
        token = token_;
        owner = owner_;
        treasury = treasury_;
        actors = actors_;
        arbiter = actors_[2];
        consumer = new FlakyConsumer(address(oracle_));
        vm.deal(address(this), 1_000_000 ether); // a pranked call's value comes from the calling contract
        bondTokens.push(address(0));
        bondTokens.push(address(token_));
        for (uint256 i; i < actors_.length; ++i) {
            vm.deal(actors_[i], 1_000_000 ether);
            token_.mint(actors_[i], 1_000_000 ether);
            vm.prank(actors_[i]);
            token_.approve(address(oracle_), type(uint256).max);
        }
    }

    function idCount() external view returns (uint256) {
        return ids.length;
    }

    function actorCount() external view returns (uint256) {
        return actors.length;
    }

    function bondTokenCount() external view returns (uint256) {
        return bondTokens.length;
    }

    // -------------------------------------------------------------------------------------------------------------
    // actions
    // -------------------------------------------------------------------------------------------------------------

    function request(uint256 actorSeed, uint256 outcomesSeed, uint256 earliestSeed, uint256 livenessSeed, bytes32 salt)
        external
    {
        if (ids.length >= 40) return;
        address a = _actor(actorSeed);
        uint16 outcomes = uint16(bound(outcomesSeed, 2, 5));
        uint32 earliest = earliestSeed % 2 == 0 ? 0 : uint32(block.timestamp + bound(earliestSeed, 0, 1 hours));
        uint32 liveness = uint32(bound(livenessSeed, 30, 4 hours));
        address callback = uint256(salt) % 2 == 0 ? address(consumer) : address(0);
        vm.prank(a);
        try oracle.request(abi.encodePacked("q", salt), outcomes, earliest, liveness, callback, salt) returns (
            bytes32 id
        ) {
            ids.push(id);
            successes[this.request.selector]++;
        } catch {}
        _after(this.request.selector);
    }

    function propose(uint256 actorSeed, uint256 idSeed, uint256 outcomeSeed, bytes20 proofHash) external {
        if (ids.length == 0) return;
        address a = _actorWith(actorSeed, 2);
        bytes32 id = _pick(idSeed, IAgentOracle.Status.Requested);
        uint16 outcome = _outcome(id, outcomeSeed);
        uint8 round = oracle.getQuestion(id).round;
        bool isReporter = oracle.hasRole(a, IAgentOracle.Role.Reporter);
        vm.prank(a);
        try oracle.propose(id, outcome, proofHash) {
            _recordProposal(id, round, isReporter);
            successes[this.propose.selector]++;
        } catch {}
        _after(this.propose.selector);
    }

    function proposeBatch(uint256 actorSeed, uint256 idSeed, uint256 n, uint256 outcomeSeed) external {
        if (ids.length == 0) return;
        address a = _actorWith(actorSeed, 2);
        n = bound(n, 1, 3);
        IAgentOracle.ProposalInput[] memory ps = new IAgentOracle.ProposalInput[](n);
        uint8[] memory rounds = new uint8[](n);
        for (uint256 i; i < n; ++i) {
            bytes32 id = _pick(idSeed + i, IAgentOracle.Status.Requested);
            ps[i] = IAgentOracle.ProposalInput(id, _outcome(id, outcomeSeed >> (8 * i)), bytes20(uint160(i + 1)));
            rounds[i] = oracle.getQuestion(id).round;
        }
        bool isReporter = oracle.hasRole(a, IAgentOracle.Role.Reporter);
        vm.prank(a);
        try oracle.proposeBatch(ps) {
            for (uint256 i; i < n; ++i) {
                _recordProposal(ps[i].questionId, rounds[i], isReporter);
            }
            successes[this.proposeBatch.selector]++;
        } catch {}
        _after(this.proposeBatch.selector);
    }

    /// @dev Usually expects the configured bond; sometimes a stale token or a random limit, as after a `setBond`
    /// the disputer did not see.
    function dispute(uint256 actorSeed, uint256 idSeed, uint256 expectSeed) external {
        if (ids.length == 0) return;
        address a = _actor(actorSeed);
        (address t, uint96 amount) = oracle.bond();
        bytes32 id = _pick(idSeed, IAgentOracle.Status.Proposed);
        address expectedToken = expectSeed % 5 == 0 ? bondTokens[(expectSeed >> 3) % bondTokens.length] : t;
        uint96 maxBond = expectSeed % 3 == 0 ? uint96(bound(expectSeed >> 8, 0, 10 ether)) : amount;
        uint256 before = a.balance + token.balanceOf(a);
        vm.prank(a);
        try oracle.dispute{value: t == address(0) ? amount : 0}(id, expectedToken, maxBond) {
            successes[this.dispute.selector]++;
            IAgentOracle.DisputeInfo memory d = oracle.getDispute(id);
            uint256 paid = before - (a.balance + token.balanceOf(a));
            if (d.token != expectedToken || d.amount > maxBond || paid > maxBond) bondAboveLimit = true;
        } catch {}
        _after(this.dispute.selector);
    }

    function rule(uint256 actorSeed, uint256 idSeed, uint256 kind, uint256 outcomeSeed) external {
        if (ids.length == 0) return;
        // mostly the arbiter, sometimes anybody
        address a = actorSeed % 3 == 0 ? _actor(actorSeed / 3) : arbiter;
        bytes32 id = _pick(idSeed, IAgentOracle.Status.Disputed);
        bool isArbiter = oracle.hasRole(a, IAgentOracle.Role.Arbiter);
        uint16 outcome = _outcome(id, outcomeSeed);
        bool ok;
        vm.startPrank(a);
        kind = kind % 3;
        if (kind == 0) {
            try oracle.confirm(id) {
                ok = true;
            } catch {}
        } else if (kind == 1) {
            try oracle.overturn(id, outcome) {
                ok = true;
            } catch {}
        } else {
            try oracle.reopen(id) {
                ok = true;
            } catch {}
        }
        vm.stopPrank();
        if (ok && !isArbiter) unauthorizedRuling = true;
        if (ok) successes[this.rule.selector]++;
        _after(this.rule.selector);
    }

    function settle(uint256 idSeed) external {
        if (ids.length == 0) return;
        bytes32 id = _pick(idSeed, IAgentOracle.Status.Final);
        try oracle.settle(id) {
            successes[this.settle.selector]++;
            if (!oracle.getQuestion(id).settled) failedCallbacks++;
        } catch {}
        _after(this.settle.selector);
    }

    /// @notice Makes the consumer's callbacks fail or succeed, so that settlements fail and get retried.
    function toggleConsumer(bool failing) external {
        consumer.setFailing(failing);
        _after(this.toggleConsumer.selector);
    }

    function withdraw(uint256 actorSeed, bool useToken, bool asTreasury) external {
        address a = asTreasury ? treasury : _actor(actorSeed);
        address t = useToken ? address(token) : address(0);
        vm.prank(a);
        try oracle.withdraw(t, a) {
            successes[this.withdraw.selector]++;
        } catch {}
        _after(this.withdraw.selector);
    }

    /// @notice Funds the oracle outside `dispute`: ETH forced in by a self-destruct, tokens by a plain transfer.
    function force(bool useToken, uint96 amount) external {
        amount = uint96(bound(amount, 1, 10 ether));
        if (useToken) {
            token.mint(address(this), amount);
            token.transfer(address(oracle), amount);
            forced[address(token)] += amount;
        } else {
            new ForceSend{value: amount}(payable(address(oracle)));
            forced[address(0)] += amount;
        }
        _after(this.force.selector);
    }

    function warp(uint256 seconds_) external {
        vm.warp(block.timestamp + bound(seconds_, 1, 3 hours));
        _after(this.warp.selector);
    }

    function setBond(bool useToken, uint96 amount) external {
        amount = uint96(bound(amount, 1, 10 ether));
        vm.prank(owner);
        oracle.setBond(useToken ? address(token) : address(0), amount);
        _after(this.setBond.selector);
    }

    function flag(uint256 idSeed) external {
        if (ids.length == 0) return;
        bytes32 id = _id(idSeed);
        vm.prank(owner);
        try oracle.flag(id) {
            successes[this.flag.selector]++;
        } catch {}
        _after(this.flag.selector);
    }

    function unflag(uint256 idSeed) external {
        if (ids.length == 0) return;
        bytes32 id = _pick(idSeed, IAgentOracle.Status.Flagged);
        vm.prank(owner);
        try oracle.unflag(id) {
            successes[this.unflag.selector]++;
        } catch {}
        _after(this.unflag.selector);
    }

    function resolveManually(uint256 idSeed, uint256 outcomeSeed) external {
        if (ids.length == 0) return;
        bytes32 id = _pick(idSeed, IAgentOracle.Status.Flagged);
        IAgentOracle.EmergencyInfo memory e = oracle.getEmergency(id);
        if (e.resolvableAt > block.timestamp) vm.warp(e.resolvableAt);
        uint16 outcome = _outcome(id, outcomeSeed);
        IAgentOracle.DisputeInfo memory d = oracle.getDispute(id);
        uint256 treasuryBefore = oracle.credits(treasury, d.token);
        uint256 disputerBefore = oracle.credits(d.disputer, d.token);
        vm.prank(owner);
        try oracle.resolveManually(id, outcome) {
            successes[this.resolveManually.selector]++;
            if (oracle.credits(treasury, d.token) != treasuryBefore) manualForfeit = true;
            if (oracle.credits(d.disputer, d.token) != disputerBefore + d.amount) manualForfeit = true;
        } catch {}
        _after(this.resolveManually.selector);
    }

    function togglePause(bool on) external {
        vm.prank(owner);
        if (on) {
            try oracle.pause() {} catch {}
        } else {
            try oracle.unpause() {} catch {}
        }
        _after(this.togglePause.selector);
    }

    // -------------------------------------------------------------------------------------------------------------
    // ghosts
    // -------------------------------------------------------------------------------------------------------------

    /// @notice Records every final answer the first time it is seen and flags any later change.
    function observe() public {
        for (uint256 i; i < ids.length; ++i) {
            bytes32 id = ids[i];
            if (oracle.status(id) != IAgentOracle.Status.Final) {
                if (finalSeen[id]) finalChanged = true; // a final answer stopped being final
                continue;
            }
            (uint16 outcome, bytes20 h, uint32 at) = oracle.finalResult(id);
            bytes32 rec = keccak256(abi.encode(outcome, h, at));
            if (!finalSeen[id]) {
                finalSeen[id] = true;
                finalRecord[id] = rec;
            } else if (finalRecord[id] != rec) {
                finalChanged = true;
            }
        }
    }

    function _after(bytes4 sel) internal {
        calls[sel]++;
        observe();
    }

    function _recordProposal(bytes32 id, uint8 round, bool isReporter) internal {
        if (!isReporter) unauthorizedProposal = true;
        uint256 c = ++proposalsInRound[id][round];
        if (c > maxProposalsInRound) maxProposalsInRound = c;
    }

    function _actor(uint256 seed) internal view returns (address) {
        return actors[seed % actors.length];
    }

    function _id(uint256 seed) internal view returns (bytes32) {
        return ids[seed % ids.length];
    }

    /// @dev Usually the first question at or after `seed` in status `s` (to reach deep states); sometimes any.
    function _pick(uint256 seed, IAgentOracle.Status s) internal view returns (bytes32) {
        if (seed % 8 == 0) return _id(seed >> 3);
        uint256 n = ids.length;
        for (uint256 i; i < n; ++i) {
            bytes32 id = ids[(seed + i) % n];
            if (oracle.status(id) == s) return id;
        }
        return _id(seed);
    }

    /// @dev Usually a holder of `role`, sometimes anybody.
    function _actorWith(uint256 seed, uint256 holders) internal view returns (address) {
        return seed % 4 == 0 ? _actor(seed >> 2) : actors[(seed >> 2) % holders];
    }

    /// @dev Mostly valid outcomes for the question, sometimes INVALID, sometimes out of range.
    function _outcome(bytes32 id, uint256 seed) internal view returns (uint16) {
        uint256 n = oracle.getQuestion(id).outcomeCount;
        uint256 r = seed % 10;
        if (r == 0) return INVALID;
        if (r == 1) return uint16(n);
        return uint16((seed >> 8) % (n == 0 ? 2 : n));
    }
}
