"""What `oracle keys` and `oracle chain` do, behind the click layer (which imports this
module only when such a command runs: web3 is slow to import)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from oracle.chain.connect import connect
from oracle.chain.contracts import ORACLE, AgentOracle, Deployment, QuestionView, error_decoder
from oracle.chain.deploy import Asked, ask, deploy_contracts
from oracle.chain.intents import InMemoryIntentStore
from oracle.chain.keys import (
    create_keystore,
    import_keystore,
    keystore_address,
    signer_from_settings,
)
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import ChainSettings
from oracle.chain.txmanager import TxManager

__all__ = [
    "ask_question",
    "create_keystore",
    "deploy",
    "import_keystore",
    "keystore_address",
    "question_status",
]

T = TypeVar("T")


async def _with_manager(
    settings: ChainSettings,
    action: Callable[[RpcPool, TxManager], Awaitable[T]],
    pool: RpcPool | None = None,
) -> T:
    """Run `action` with a started pool (the given one, or one on `chain.rpc`) and a
    manager (one-shot: intents kept in memory); the pool is closed afterwards."""
    manager: TxManager | None = None
    try:
        if pool is None:
            pool = RpcPool.from_settings(settings.rpc)
            await pool.start()
        signer = signer_from_settings(settings.signer)
        manager = TxManager(
            pool, signer, InMemoryIntentStore(), settings.tx, decoder=error_decoder()
        )
        return await action(pool, manager)
    finally:
        if manager is not None:
            await manager.close()
        if pool is not None:
            await pool.close()


def deploy(settings: ChainSettings, **options: Any) -> Deployment:
    async def action(pool: RpcPool, manager: TxManager) -> Deployment:
        return await deploy_contracts(manager, **options)

    return asyncio.run(_with_manager(settings, action))


def ask_question(
    settings: ChainSettings, deployment_file: Path, deployment_key: str, **options: Any
) -> Asked:
    """Ask on the deployment in `deployment_file` (named by `deployment_key` in errors)."""

    async def run() -> Asked:
        pool, deployment = await connect(settings, deployment_file, deployment_key=deployment_key)

        async def action(pool: RpcPool, manager: TxManager) -> Asked:
            return await ask(manager, deployment.address(ORACLE), **options)

        return await _with_manager(settings, action, pool)

    return asyncio.run(run())


def question_status(
    settings: ChainSettings, deployment_file: Path, deployment_key: str, qid: str
) -> QuestionView:
    async def run() -> QuestionView:
        pool, deployment = await connect(settings, deployment_file, deployment_key=deployment_key)
        try:
            return await AgentOracle(pool, deployment.address(ORACLE)).get_question(qid)
        finally:
            await pool.close()

    return asyncio.run(run())
