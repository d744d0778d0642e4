"""How a `reality` source is made: `RealityWiring` builds the venue's parts on its
chain's context when it starts; `build` is the registry's entry."""

from __future__ import annotations

from oracle.chain.scanner import scan_name
from oracle.core.amounts import Token
from oracle.daemon.chain_context import ChainContext, VenueWiring
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketSource, Resolver
from oracle.errors import SetupError
from oracle.store.checkpoints import DatabaseCheckpointStore
from oracle.venues.reality.arbitration import ARBITRATION_PREFIX, register_arbitration_check
from oracle.venues.reality.binding import QuestionSource, RealityAnswerer, reality_contract
from oracle.venues.reality.reopen import register_reopen_check
from oracle.venues.reality.settings import RealitySourceConfig
from oracle.venues.reality.venue import RealityParts, RealityVenue


class RealityWiring(VenueWiring):
    """How a `reality` venue's objects are made: the chain's pool, signer and manager
    (its context), code at `contract_address` on that chain, the answerer (no single
    bond above the per-question cap) and the question scanner. The contract is probed
    for the configured version and bond token (`RealityETH.deployment_problem`): a
    mismatch is a SetupError naming `market_sources[<name>].contract`."""

    def __init__(self, config: RealitySourceConfig, context: ChainContext) -> None:
        super().__init__(config, context)
        self._config = config
        context.register_check(ARBITRATION_PREFIX, register_arbitration_check)

    async def __call__(self) -> RealityParts:
        settings, config = self._settings, self._config
        pool, manager, signer = await self._open()
        await self._require_code(
            pool, config.contract_address, f"market_sources[{config.name}].contract_address"
        )
        reality = reality_contract(
            pool, config.contract_address, version=config.contract, bond_token=config.bond_token
        )
        problem = await reality.deployment_problem()
        if problem is not None:
            await self._failed()
            raise SetupError(
                f"market_sources[{config.name}].contract",
                f"{reality.address} on chain {pool.chain_id}: {problem}",
            )
        # Reopenings left unfinished by a previous process are checked against the chain
        # before anything is sent again (`manager.resume()`); arbitration requests are by
        # the chain's check (`register_check`).
        register_reopen_check(manager, reality.address)
        checkpoints = DatabaseCheckpointStore(self._store)
        source = QuestionSource(
            pool,
            reality.address,
            checkpoints,
            settings.scanner,
            arbitrators=config.arbitrators,
            templates=config.templates,
            askers=config.askers,
            start_block=config.start_block,
            name=scan_name(config.name, pool.chain_id, reality.address),
        )
        return RealityParts(
            pool=pool,
            manager=manager,
            reality=reality,
            answerer=RealityAnswerer(
                manager,
                reality,
                max_bond=config.bond.max_per_question_wei,
                logs_from_block=config.start_block,
                # Commit-reveal derives each nonce from the signer's own signature.
                signer=signer if config.commit_reveal else None,
            ),
            source=source,
            start_block=config.start_block,
            scanner_settings=settings.scanner,
            checkpoints=checkpoints,
            native_token=Token(settings.native_token.symbol, settings.native_token.decimals),
        )


def build(
    config: RealitySourceConfig, context: ChainContext | None, metrics: DaemonMetrics
) -> tuple[MarketSource, Resolver]:
    """The Reality.eth venue: its own source and resolver."""
    assert context is not None  # a chain kind (`oracle.venues.registry`)
    venue = RealityVenue(config, RealityWiring(config, context), metrics)
    return venue, venue
