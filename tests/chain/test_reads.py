"""Contract reads (`RpcPool.eth_calls`, `AgentOracle.get_questions`) on anvil, seen on the wire.

A recording node in front of anvil keeps every request body it receives, so the tests see
how many JSON-RPC requests a read took, and it can misbehave on demand: refuse batches,
leave an answer out of a batch, or answer every `eth_call` with a node-side error.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from eth_utils.address import to_checksum_address
from web3 import Web3

from oracle.chain.contracts import ORACLE, AgentOracle, Status, encode_call
from oracle.chain.deploy import ask
from oracle.chain.revert import is_revert, revert_data
from oracle.chain.rpc import RpcPool, is_node_failure
from oracle.chain.settings import SubmitterSettings
from oracle.chain.txmanager import TxRequest
from oracle.venues.own.submitter import ProposalSubmitter
from tests.anvil import Anvil
from tests.chain.helpers import FAST_RPC, answer, deploy_oracle, manager_for, reverter_artifact

GET_QUESTION = encode_call(ORACLE, "getQuestion", bytes(32))[:10]
MISSING = "0x" + "77" * 32


class RecordingNode:
    """Forwards JSON-RPC requests to `upstream`, one call at a time, and records them."""

    def __init__(self, upstream: str, session: aiohttp.ClientSession) -> None:
        self.upstream = upstream
        self.url = ""
        self.bodies: list[Any] = []  # every request body, a list for a batch
        self.batch_trouble: str | None = None  # "refuse" or "drop one"
        self.failing_calls = False  # every eth_call answered "header not found"
        self._session = session
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/", self.handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        """Stop listening: connections are refused from now on."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        if not isinstance(body, list):
            return web.json_response(await self._answer(body))
        if self.batch_trouble == "refuse":
            refusal = {"code": -32600, "message": "batch requests are not supported"}
            return web.json_response({"jsonrpc": "2.0", "id": None, "error": refusal})
        answers = [await self._answer(item) for item in body]
        if self.batch_trouble == "drop one":
            answers.pop()
        return web.json_response(answers)

    async def _answer(self, item: dict[str, Any]) -> Any:
        if self.failing_calls and item["method"] == "eth_call":
            trouble = {"code": -32000, "message": "header not found"}
            return {"jsonrpc": "2.0", "id": item["id"], "error": trouble}
        async with self._session.post(self.upstream, json=item) as response:
            return await response.json()

    def batches(self, selector: str = "0x") -> list[int]:
        """Sizes of the batch requests that carried calls whose data starts with `selector`."""
        return [
            len(body)
            for body in self.bodies
            if isinstance(body, list) and any(_calls(item, selector) for item in body)
        ]

    def single_calls(self, selector: str = "0x") -> int:
        """Plain (not batched) `eth_call` requests whose data starts with `selector`."""
        return sum(1 for body in self.bodies if isinstance(body, dict) and _calls(body, selector))


def _calls(item: Any, selector: str) -> bool:
    return (
        isinstance(item, dict)
        and item.get("method") == "eth_call"
        and str(item["params"][0]["data"]).startswith(selector)
    )


@asynccontextmanager
async def recording_node(upstream: str) -> AsyncIterator[RecordingNode]:
    async with aiohttp.ClientSession() as session:
        node = RecordingNode(upstream, session)
        await node.start()
        try:
            yield node
        finally:
            await node.stop()


async def oracle_with_questions(anvil: Anvil, count: int) -> tuple[str, list[str]]:
    """The oracle's address and `count` questions asked on it, question i with liveness
    600 + i (so a read shows which question it is)."""
    async with manager_for(anvil.url) as manager:
        deployment = await deploy_oracle(manager, deploy_conditional_tokens=False)
        address = deployment.address(ORACLE)
        asked = [
            await ask(manager, address, text=f"q{i}", earliest_time=1, liveness=600 + i)
            for i in range(count)
        ]
    return address, [a.question_id for a in asked]


async def raised(call: Awaitable[Any]) -> BaseException:
    try:
        await call
    except Exception as error:
        return error
    raise AssertionError("the call did not fail")


def test_questions_read_in_order_one_request_per_batch(anvil: Anvil) -> None:
    async def run() -> None:
        address, qids = await oracle_with_questions(anvil, 5)
        wanted = [qids[3], MISSING, qids[0], qids[4], qids[1], qids[2]]
        settings = FAST_RPC.model_copy(update={"max_batch_size": 4})
        async with recording_node(anvil.url) as node, RpcPool([node.url], settings) as pool:
            oracle = AgentOracle(pool, address)
            views = await oracle.get_questions(wanted)
            assert sorted(node.batches(GET_QUESTION)) == [2, 4]  # sent concurrently
            assert node.single_calls() == 0
            assert [v.liveness for v in views] == [603, 0, 600, 604, 601, 602]
            assert not views[1].exists
            assert views[1].status == Status.NONE
            assert all(v.status == Status.REQUESTED for i, v in enumerate(views) if i != 1)
            # The same as reading them one by one, each in a plain request of its own.
            assert views == [await oracle.get_question(q) for q in wanted]
            assert node.single_calls(GET_QUESTION) == len(wanted)
            # Nothing to read, nothing asked.
            requests = len(node.bodies)
            assert await oracle.get_questions([]) == []
            assert len(node.bodies) == requests

    asyncio.run(run())


def test_reverts_raise_what_a_web3_call_raises(anvil: Anvil) -> None:
    artifact = reverter_artifact()
    contract = Web3().eth.contract(abi=artifact["abi"])
    count = contract.encode_abi("count", [])
    failing = {
        "custom error": contract.encode_abi("fail", [42]),
        "panic": contract.encode_abi("divide", [1, 0]),
        "custom error with arrays": contract.encode_abi("exhaust", []),
    }

    async def run() -> None:
        async with manager_for(anvil.url) as manager:
            deployed = await manager.submit(
                TxRequest(key="deploy", to=None, data=artifact["bytecode"])
            )
            assert deployed.inclusion is not None
            assert deployed.inclusion.contract_address is not None
            address = to_checksum_address(deployed.inclusion.contract_address)
            pool = manager.pool
            (fine,) = await pool.eth_calls("Reverter.count", address, [count])
            assert fine == bytes(32)
            for what, data in failing.items():
                expected = await raised(
                    pool.call(
                        what, lambda w3, data=data: w3.eth.call({"to": address, "data": data})
                    )
                )
                assert is_revert(expected), what
                for calldata in ([data], [count, data, count]):
                    error = await raised(pool.eth_calls(what, address, calldata))
                    assert type(error) is type(expected), what
                    assert str(error) == str(expected), what
                    assert revert_data(error) == revert_data(expected), what
                    assert is_revert(error)
                    assert not is_node_failure(error)
            assert all(node.up and node.failures == 0 for node in pool.status())

    asyncio.run(run())


@pytest.mark.parametrize("trouble", ["node error", "node gone"])
def test_a_failing_node_hands_the_read_to_the_next(anvil: Anvil, trouble: str) -> None:
    # Both nodes serve the same anvil; the first stays out of rotation while we look.
    settings = FAST_RPC.model_copy(update={"retry_backoff": 30, "retry_backoff_max": 30})

    async def run() -> None:
        address, qids = await oracle_with_questions(anvil, 3)
        async with (
            recording_node(anvil.url) as first,
            recording_node(anvil.url) as second,
            RpcPool([first.url, second.url], settings) as pool,
        ):
            oracle = AgentOracle(pool, address)
            before = await oracle.get_questions(qids)
            assert first.batches(GET_QUESTION) == [3]
            if trouble == "node error":
                first.failing_calls = True
            else:
                await first.stop()
            views = await oracle.get_questions(qids)
            assert views == before
            assert [v.liveness for v in views] == [600, 601, 602]
            assert second.batches(GET_QUESTION) == [3]
            down = pool.status()[0]
            assert not down.up
            assert down.failures == 1
            expected = "header not found" if trouble == "node error" else "connection failed"
            assert expected in down.last_error

    asyncio.run(run())


@pytest.mark.parametrize("trouble", ["refuse", "drop one"])
def test_a_batch_without_one_answer_per_call_is_read_call_by_call(
    anvil: Anvil, trouble: str
) -> None:
    async def run() -> None:
        address, qids = await oracle_with_questions(anvil, 3)
        async with recording_node(anvil.url) as node, RpcPool([node.url], FAST_RPC) as pool:
            oracle = AgentOracle(pool, address)
            expected = [await oracle.get_question(q) for q in qids]
            node.batch_trouble = trouble
            singles = node.single_calls(GET_QUESTION)
            assert await oracle.get_questions(qids) == expected
            assert node.batches(GET_QUESTION) == [3]  # refused or short ...
            assert node.single_calls(GET_QUESTION) == singles + 3  # ... then one by one
            assert pool.status()[0].failures == 0

    asyncio.run(run())


def test_a_batch_reads_its_questions_once_before_and_once_after(anvil: Anvil) -> None:
    async def run() -> None:
        address, qids = await oracle_with_questions(anvil, 4)
        async with recording_node(anvil.url) as node, manager_for(node.url) as manager:
            oracle = AgentOracle(manager.pool, address)
            settings = SubmitterSettings(batch_max_size=3, batch_max_wait=5)
            submitter = ProposalSubmitter(manager, oracle, settings=settings)
            outcomes = await asyncio.gather(
                *(submitter.enqueue(answer(q, i % 2)) for i, q in enumerate(qids[:3]))
            )
            # One batch before sending (also the pre-send check), one once it is final.
            assert node.batches(GET_QUESTION) == [3, 3]
            assert node.single_calls(GET_QUESTION) == 0
            intent = outcomes[0].carriers[bytes.fromhex(qids[0][2:])]
            assert intent is not None
            assert all(set(o.carriers.values()) == {intent} for o in outcomes)
            for i, q in enumerate(qids[:3]):
                view = outcomes[i].questions[bytes.fromhex(q[2:])]
                assert (view.status, view.outcome) == (Status.PROPOSED, i % 2)
            # A single proposal reads its question once before it is sent.
            await submitter.propose(answer(qids[3]))
            assert node.single_calls(GET_QUESTION) == 1
            assert (await oracle.get_question(qids[3])).status == Status.PROPOSED

    asyncio.run(run())
