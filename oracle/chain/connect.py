"""Reaching the oracle's deployment: the checks made before the contracts are used, by
`oracle run` at start and by `oracle chain ask|status`.

`connect` reads the deployment file, starts an `RpcPool` that accepts only nodes on the
expected chain (`chain.rpc.chain_id` when set, else the deployment's), and checks there
is contract code at every address of the deployment. A problem is a `SetupError` naming
the setting to fix, and nothing is left open.
"""

from __future__ import annotations

from pathlib import Path

from eth_utils.address import to_checksum_address

from oracle.chain.contracts import ORACLE, Deployment
from oracle.chain.observer import SILENT, ChainObserver
from oracle.chain.rpc import RpcPool, Web3
from oracle.chain.settings import ChainSettings
from oracle.errors import ChainIdMismatch, DeploymentError, RpcUnavailable, SetupError

DEPLOYMENT_FILE = "chain.deployment_file"


async def connect(
    settings: ChainSettings,
    deployment_file: Path,
    *,
    deployment_key: str = DEPLOYMENT_FILE,
    observer: ChainObserver = SILENT,
    chain_key: str = "chain",
) -> tuple[RpcPool, Deployment]:
    """A started pool on the deployment's chain, and the deployment.

    SetupError names `deployment_key` (the setting or option that named the file) when
    the file is missing or malformed, is for another chain than the nodes serve, or has
    no contract code at one of its addresses on that chain; `chain.rpc.chain_id` when it
    is set and a node serves another chain; `chain.rpc.urls` when no node answers
    (`chain_key` names the chain's section: `chains[NAME]` for an entry of `chains`).
    """
    try:
        deployment = Deployment.load(deployment_file)
    except DeploymentError as error:
        raise SetupError(deployment_key, str(error)) from None
    configured = settings.rpc.chain_id
    expected = configured if configured is not None else deployment.chain_id
    pool = RpcPool(settings.rpc.urls, settings.rpc, chain_id=expected, observer=observer)
    on_another_chain = f"{deployment_file} is a deployment on chain {deployment.chain_id}, but"
    try:
        await pool.start()
        await check_deployment(pool, deployment_file, deployment_key)
    except ChainIdMismatch as error:
        await pool.close()
        node = f"the RPC node {error.url} serves chain id {error.actual}"
        if configured is not None:
            raise SetupError(f"{chain_key}.rpc.chain_id", f"is {configured}, but {node}") from None
        raise SetupError(deployment_key, f"{on_another_chain} {node}") from None
    except RpcUnavailable as error:
        await pool.close()
        raise SetupError(f"{chain_key}.rpc.urls", str(error)) from None
    except BaseException:
        await pool.close()
        raise
    return pool, deployment


async def check_deployment(
    pool: RpcPool, deployment_file: Path, deployment_key: str = DEPLOYMENT_FILE
) -> Deployment:
    """The deployment `deployment_file` describes, checked on the started `pool`: for
    the chain the pool serves, with code at every address; SetupError naming
    `deployment_key` otherwise (the pool is left open: its owner closes it)."""
    try:
        deployment = Deployment.load(deployment_file)
    except DeploymentError as error:
        raise SetupError(deployment_key, str(error)) from None
    if pool.chain_id != deployment.chain_id:
        raise SetupError(
            deployment_key,
            f"{deployment_file} is a deployment on chain {deployment.chain_id}, but the RPC "
            f"nodes serve chain id {pool.chain_id}",
        )
    await _require_code(pool, deployment, deployment_file, deployment_key)
    return deployment


async def _require_code(
    pool: RpcPool, deployment: Deployment, deployment_file: Path, deployment_key: str
) -> None:
    # The oracle first: it is the contract every command and the daemon use.
    for name, address in sorted(deployment.contracts.items(), key=lambda item: item[0] != ORACLE):
        checksummed = to_checksum_address(address)

        async def code(w3: Web3, account: str = checksummed) -> bytes:
            return bytes(await w3.eth.get_code(to_checksum_address(account)))

        if not await pool.call("eth_getCode", code):
            raise SetupError(
                deployment_key,
                f"{deployment_file}: no contract at the {name} address {address} on chain "
                f"{deployment.chain_id} (deployed on another node, or the chain was reset)",
            )
