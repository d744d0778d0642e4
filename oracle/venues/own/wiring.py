"""How a `chain` source is made: `ChainWiring` builds the venue's parts on its chain's
context when it starts; `build` is the registry's entry (`oracle.venues.registry`)."""

from __future__ import annotations

from pathlib import Path

from oracle.chain.connect import check_deployment
from oracle.chain.contracts import ADAPTER, ORACLE, AgentOracle
from oracle.chain.scanner import scan_name
from oracle.daemon.chain_context import ChainContext, VenueWiring
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketSource, Resolver
from oracle.store.checkpoints import DatabaseCheckpointStore
from oracle.venues.own.scanner import MarketSource as QuestionScanner
from oracle.venues.own.settings import ChainSourceConfig
from oracle.venues.own.submitter import ProposalSubmitter
from oracle.venues.own.venue import ChainParts, ChainVenue


class ChainWiring(VenueWiring):
    """How a chain venue's objects are made on its chain's context, called by the venue
    when it starts: the chain's pool, signer and transaction manager (`ChainContext`),
    the deployment (`deployment_file` of the chain) on that chain with code at its
    addresses (`oracle.chain.connect`), the contract, the submitter and the scanner (its
    checkpoints are the source's and contract's own)."""

    async def __call__(self) -> ChainParts:
        pool, manager, _ = await self._open()
        settings = self._settings
        try:
            deployment = await check_deployment(
                pool, Path(settings.deployment_file), f"{self._context.key}.deployment_file"
            )
        except BaseException:
            await self._failed()
            raise
        oracle = AgentOracle(pool, deployment.address(ORACLE))
        scanner = QuestionScanner(
            pool,
            oracle.address,
            DatabaseCheckpointStore(self._store),
            settings.scanner,
            start_block=settings.scanner.start_block or deployment.block_number,
            name=scan_name(self._name, deployment.chain_id, oracle.address),
        )
        return ChainParts(
            pool=pool,
            manager=manager,
            oracle=oracle,
            submitter=ProposalSubmitter(manager, oracle, settings=settings.submitter),
            scanner=scanner,
            adapter_address=deployment.contracts.get(ADAPTER),
        )


def build(
    config: ChainSourceConfig, context: ChainContext | None, metrics: DaemonMetrics
) -> tuple[MarketSource, Resolver]:
    """The venue on our own contract: its own source and resolver."""
    assert context is not None  # a chain kind (`oracle.venues.registry`)
    venue = ChainVenue(config, ChainWiring(config, context))
    return venue, venue
