"""How the `uma` and `uma_v3` sources are made: `UmaWiring` (OOv2) and `UmaV3Wiring`
(OOv3, which finds its oracle the same way) build a venue's parts on its chain's context
when it starts; `build_uma` and `build_uma_v3` are the registry's entries."""

from __future__ import annotations

from oracle.chain.connect import check_deployment
from oracle.chain.rpc import RpcPool
from oracle.chain.scanner import scan_name
from oracle.chain.txmanager import TxManager
from oracle.daemon.chain_context import ChainContext, VenueWiring
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketSource, Resolver
from oracle.errors import ChainError, DeploymentError, SetupError
from oracle.store.checkpoints import DatabaseCheckpointStore
from oracle.venues.uma.binding import (
    OPTIMISTIC_ORACLE_V2,
    OPTIMISTIC_ORACLE_V3,
    ManagedOptimisticOracleV2,
    OptimisticOracleV2,
    RequestSource,
    UmaProposer,
    report_whitelist,
    standing_allowance,
)
from oracle.venues.uma.binding_v3 import OptimisticOracleV3, UmaAsserter
from oracle.venues.uma.bulletin import BulletinBoard
from oracle.venues.uma.settings import UmaSourceConfig, UmaV3SourceConfig
from oracle.venues.uma.venue import UmaParts, UmaVenue
from oracle.venues.uma.venue_v3 import UmaV3Parts, UmaV3Venue


class UmaWiring(VenueWiring):
    """How a `uma` venue's objects are made: the chain's pool, signer and manager (its
    context), the oracle (its deployment file's, which must be a deployment on that
    chain, or `oracle_address`, with code there), the proposer and the request scanner.
    `artifact` names the oracle in a deployment file (`UmaV3Wiring` reads OOv3's)."""

    artifact = OPTIMISTIC_ORACLE_V2

    def __init__(self, config: UmaSourceConfig | UmaV3SourceConfig, context: ChainContext) -> None:
        super().__init__(config, context)
        self._config = config
        self._where = f"market_sources[{config.name}]"

    async def _oracle(self) -> tuple[RpcPool, TxManager, str, int]:
        """The chain's pool and manager, the oracle's address and the block to scan from."""
        config = self._config
        pool, manager, _ = await self._open()
        if config.deployment_file is not None:
            key = f"{self._where}.deployment_file"
            try:
                deployment = await check_deployment(pool, config.deployment_file, key)
                address = deployment.address(self.artifact)
            except DeploymentError as error:
                await self._failed()
                raise SetupError(key, f"{config.deployment_file}: {error}") from None
            except BaseException:
                await self._failed()
                raise
            start = config.start_block
            return pool, manager, address, deployment.block_number if start is None else start
        assert config.oracle_address is not None
        address = config.oracle_address
        await self._require_code(pool, address, f"{self._where}.oracle_address")
        return pool, manager, address, config.start_block or 0

    async def __call__(self) -> UmaParts:
        settings, config = self._settings, self._config
        assert isinstance(config, UmaSourceConfig)  # UmaV3Wiring makes its own parts
        pool, manager, address, start = await self._oracle()
        board = await self._board(pool, config)
        oracle = OptimisticOracleV2(pool, address)
        checkpoints = DatabaseCheckpointStore(self._store)
        source = RequestSource(
            pool,
            oracle.address,
            checkpoints,
            settings.scanner,
            requesters=config.requesters,
            identifiers=config.identifiers,
            start_block=start,
            name=scan_name(config.name, pool.chain_id, oracle.address),
        )
        managed = await self._managed(pool, oracle, config)
        if managed is not None:
            await report_whitelist(managed, manager.address)
        return UmaParts(
            pool=pool,
            manager=manager,
            oracle=oracle,
            proposer=UmaProposer(
                manager,
                oracle,
                allow_too_early=config.allow_too_early,
                allowance=standing_allowance(pool, config.risk.bond_allowance),
                managed=managed,
            ),
            source=source,
            start_block=start,
            scanner_settings=settings.scanner,
            board=board,
            checkpoints=checkpoints,
        )

    async def _managed(
        self, pool: RpcPool, oracle: OptimisticOracleV2, config: UmaSourceConfig
    ) -> ManagedOptimisticOracleV2 | None:
        """UMA's managed OOv2 at the oracle's address, or None for a plain one: detected
        (`managed: null`) or checked against the setting (a mismatch is a SetupError)."""
        managed = ManagedOptimisticOracleV2(pool, oracle.address)
        try:
            found = await managed.is_managed()
        except ChainError as error:
            await pool.close()
            raise SetupError(f"{self._where}.managed", f"cannot tell: {error}") from None
        if config.managed is not None and config.managed != found:
            await pool.close()
            what = "a ManagedOptimisticOracleV2" if found else "a plain OptimisticOracleV2"
            raise SetupError(
                f"{self._where}.managed",
                f"is {str(config.managed).lower()}, but {oracle.address} is {what}",
            )
        return managed if found else None

    async def _board(self, pool: RpcPool, config: UmaSourceConfig) -> BulletinBoard | None:
        """The configured bulletin board (clarifications), with code on the oracle's chain."""
        board = config.bulletin_board
        if board is None:
            return None
        await self._require_code(pool, board.address, f"{self._where}.bulletin_board.address")
        return BulletinBoard(pool, board.address, max_response_bytes=board.max_response_bytes)


class UmaV3Wiring(UmaWiring):
    """How a `uma_v3` venue's objects are made: the oracle found as for `uma` (its
    deployment file's uma/OptimisticOracleV3, or `oracle_address`), the asserter (its own
    assertions looked for from the start block) and the checkpoints for the scan of
    others' assertions."""

    artifact = OPTIMISTIC_ORACLE_V3

    async def __call__(self) -> UmaV3Parts:  # type: ignore[override]
        pool, manager, address, start = await self._oracle()
        oracle = OptimisticOracleV3(pool, address)
        return UmaV3Parts(
            pool=pool,
            manager=manager,
            oracle=oracle,
            asserter=UmaAsserter(manager, oracle, from_block=start),
            checkpoints=DatabaseCheckpointStore(self._store),
            start_block=start,
            scanner_settings=self._settings.scanner,
        )


def build_uma(
    config: UmaSourceConfig, context: ChainContext | None, metrics: DaemonMetrics
) -> tuple[MarketSource, Resolver]:
    """The OOv2 venue: its own source and resolver."""
    assert context is not None  # a chain kind (`oracle.venues.registry`)
    venue = UmaVenue(config, UmaWiring(config, context), metrics)
    return venue, venue


def build_uma_v3(
    config: UmaV3SourceConfig, context: ChainContext | None, metrics: DaemonMetrics
) -> tuple[MarketSource, Resolver]:
    """The OOv3 venue: its own source and resolver."""
    assert context is not None  # a chain kind (`oracle.venues.registry`)
    venue = UmaV3Venue(config, UmaV3Wiring(config, context), metrics)
    return venue, venue
