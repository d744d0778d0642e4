// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Script, console} from "forge-std/Script.sol";
import {AgentOracle} from "../src/AgentOracle.sol";
import {ConditionalTokensAdapter} from "../src/adapters/ConditionalTokensAdapter.sol";
import {IAgentOracle} from "../src/interfaces/IAgentOracle.sol";
import {IConditionalTokens} from "../src/interfaces/IConditionalTokens.sol";

/// @title Deploy
/// @notice Deploys AgentOracle (and, if CONDITIONAL_TOKENS is set, the Conditional Tokens adapter), grants the
/// configured roles, and hands ownership to OWNER (two-step: OWNER must call `acceptOwnership`).
/// @dev Usage:
///   forge script script/Deploy.s.sol --rpc-url $RPC --broadcast --private-key $KEY
/// Environment (all optional):
///   OWNER               final owner (default: the deployer, no transfer)
///   TREASURY            receives forfeited bonds (default: OWNER)
///   BOND_TOKEN          dispute bond token, 0x0 for ETH (default: ETH)
///   BOND_AMOUNT         dispute bond in wei / token units, not zero (default: 0.1 ether)
///   MIN_LIVENESS        minimum challenge window in seconds, 30 to 7776000 (default: 3600)
///   REPORTER            reporter address, also made the primary reporter
///   ARBITER             arbiter address
///   PAUSER              pauser address
///   CONDITIONAL_TOKENS  ConditionalTokens address; deploys the adapter when set
contract Deploy is Script {
    struct Config {
        address owner;
        address treasury;
        address bondToken;
        uint96 bondAmount;
        uint32 minLiveness;
        address reporter;
        address arbiter;
        address pauser;
        address conditionalTokens;
    }

    /// @notice Reads the configuration from the environment and deploys.
    function run() external returns (AgentOracle oracle, ConditionalTokensAdapter adapter) {
        address deployer = msg.sender;
        address owner = vm.envOr("OWNER", deployer);
        Config memory c = Config({
            owner: owner,
            treasury: vm.envOr("TREASURY", owner),
            bondToken: vm.envOr("BOND_TOKEN", address(0)),
            bondAmount: uint96(
                _fits(vm.envOr("BOND_AMOUNT", uint256(0.1 ether)), type(uint96).max, "BOND_AMOUNT", "uint96")
            ),
            minLiveness: uint32(
                _fits(vm.envOr("MIN_LIVENESS", uint256(1 hours)), type(uint32).max, "MIN_LIVENESS", "uint32")
            ),
            reporter: vm.envOr("REPORTER", address(0)),
            arbiter: vm.envOr("ARBITER", address(0)),
            pauser: vm.envOr("PAUSER", address(0)),
            conditionalTokens: vm.envOr("CONDITIONAL_TOKENS", address(0))
        });
        vm.startBroadcast(deployer);
        (oracle, adapter) = deploy(deployer, c);
        vm.stopBroadcast();
        console.log("AgentOracle", address(oracle));
        if (address(adapter) != address(0)) console.log("ConditionalTokensAdapter", address(adapter));
    }

    /// @dev A value cast without this check would silently drop its high bits.
    function _fits(uint256 value, uint256 max, string memory name, string memory type_)
        internal
        pure
        returns (uint256)
    {
        require(value <= max, string.concat(name, " does not fit ", type_));
        return value;
    }

    /// @notice Deploys and configures; `deployer` must be the account sending the transactions.
    function deploy(address deployer, Config memory c)
        public
        returns (AgentOracle oracle, ConditionalTokensAdapter adapter)
    {
        oracle = new AgentOracle(deployer, c.treasury, c.bondToken, c.bondAmount, c.minLiveness);
        if (c.reporter != address(0)) {
            oracle.grantRole(c.reporter, IAgentOracle.Role.Reporter);
            oracle.setPrimaryReporter(c.reporter);
        }
        if (c.arbiter != address(0)) oracle.grantRole(c.arbiter, IAgentOracle.Role.Arbiter);
        if (c.pauser != address(0)) oracle.grantRole(c.pauser, IAgentOracle.Role.Pauser);
        if (c.conditionalTokens != address(0)) {
            adapter = new ConditionalTokensAdapter(oracle, IConditionalTokens(c.conditionalTokens));
        }
        if (c.owner != deployer) oracle.transferOwnership(c.owner);
    }
}
