"""What `oracle keys` and `oracle chain` do, behind the click layer (which imports this
module only when such a command runs: web3 is slow to import)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from oracle.chain.contracts import ORACLE, AgentOracle, Deployment, QuestionView, error_decoder
from oracle.chain.deploy import Asked, ask, deploy_contracts
from oracle.chain.errors import DeploymentError
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
    settings: ChainSettings, action: Callable[[RpcPool, TxManager], Awaitable[T]]
) -> T:
    """Run `action` with a started pool and a manager (one-shot: intents kept in memory)."""
    pool = RpcPool.from_settings(settings.rpc)
    await pool.start()
    manager: TxManager | None = None
    try:
        signer = signer_from_settings(settings.signer)
        manager = TxManager(
            pool, signer, InMemoryIntentStore(), settings.tx, decoder=error_decoder()
        )
        return await action(pool, manager)
    finally:
        if manager is not None:
            await manager.close()
        await pool.close()


def deploy(settings: ChainSettings, **options: Any) -> Deployment:
    async def action(pool: RpcPool, manager: TxManager) -> Deployment:
        return await deploy_contracts(manager, **options)

    return asyncio.run(_with_manager(settings, action))


def ask_question(settings: ChainSettings, deployment_file: Path, **options: Any) -> Asked:
    deployment = Deployment.load(deployment_file)

    async def action(pool: RpcPool, manager: TxManager) -> Asked:
        if pool.chain_id != deployment.chain_id:
            raise DeploymentError(
                f"{deployment_file}: deployed on chain {deployment.chain_id}, "
                f"but the RPC serves chain {pool.chain_id}"
            )
        return await ask(manager, deployment.address(ORACLE), **options)

    return asyncio.run(_with_manager(settings, action))


def question_status(settings: ChainSettings, deployment_file: Path, qid: str) -> QuestionView:
    deployment = Deployment.load(deployment_file)

    async def run() -> QuestionView:
        async with RpcPool.from_settings(settings.rpc) as pool:
            return await AgentOracle(pool, deployment.address(ORACLE)).get_question(qid)

    return asyncio.run(run())
