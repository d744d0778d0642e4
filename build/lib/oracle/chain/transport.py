"""JSON-RPC over HTTP on one keep-alive aiohttp session: where the chain layer's I/O enters.

web3's own `AsyncHTTPProvider` opens a new TCP connection for every request
(`force_close`) and, before each one, takes a threading lock through a small thread pool
to look its session up in a cache. Under a daemon's load that costs more CPU than the
request itself, and queues every call behind that pool. This provider keeps one session
per event loop with pooled connections, and bounds every request by `timeout` seconds
(connecting included), so a node that stops answering fails the call instead of hanging
it.

Errors are those of aiohttp (`ClientResponseError` for an HTTP error status,
`ClientConnectorError`, `TimeoutError`), as with web3's provider, so
`oracle.chain.rpc.is_node_failure` classifies them the same way. An answer that is not
usable JSON (not JSON, not UTF-8, nested deeper than `oracle.safe_json` accepts) is web3's
`BadResponseFormat`, also a node failure; its message never quotes the answer. So is an
answer larger than `max_response_bytes` (64 MiB), counted after decompression.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import aiohttp
from eth_typing import URI
from web3.exceptions import BadResponseFormat
from web3.providers.async_base import AsyncJSONBaseProvider
from web3.types import RPCEndpoint, RPCResponse

from oracle.errors import JsonError
from oracle.safe_json import loads

_HEADERS = {"Content-Type": "application/json"}
# Far above any answer oracle asks for (a batch of contract reads, a block range of logs);
# a node sending more, or a gzip bomb that inflates to more, is broken or hostile.
MAX_RESPONSE_BYTES = 64 * 2**20


class KeepAliveHTTPProvider(AsyncJSONBaseProvider):
    """An async web3 provider for one HTTP(S) JSON-RPC endpoint."""

    def __init__(
        self,
        endpoint_uri: str,
        *,
        timeout: float,
        max_connections: int = 64,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        super().__init__()
        self.endpoint_uri = URI(endpoint_uri)
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._max_connections = max_connections
        self._max_response_bytes = max_response_bytes
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None

    def __str__(self) -> str:
        return "RPC connection (keep-alive HTTP)"  # never the URL: it may hold a key

    def _current_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._session_loop is not loop:
            # A session belongs to the loop it was made on; a new loop gets its own.
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._max_connections),
                timeout=self._timeout,
                headers=_HEADERS,
                raise_for_status=True,
            )
            self._session_loop = loop
        return self._session

    async def _post(self, body: bytes) -> bytes:
        cap = self._max_response_bytes
        too_large = BadResponseFormat(f"the RPC node's answer is larger than {cap} bytes")
        async with self._current_session().post(self.endpoint_uri, data=body) as response:
            if response.content_length is not None and response.content_length > cap:
                raise too_large
            answer = bytearray()
            async for chunk in response.content.iter_chunked(65536):  # decompressed
                answer += chunk
                if len(answer) > cap:
                    raise too_large
            return bytes(answer)

    @staticmethod
    def decode_rpc_response(raw_response: bytes) -> RPCResponse:
        # web3's decoder is json.loads: a hostile or broken node could crash the process
        # with deep nesting, and its errors quote the whole answer.
        try:
            return cast(RPCResponse, loads(raw_response))
        except JsonError as error:
            raise BadResponseFormat(f"the RPC node's answer is {error}") from None

    async def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        return self.decode_rpc_response(await self._post(self.encode_rpc_request(method, params)))

    async def make_batch_request(
        self, requests: list[tuple[RPCEndpoint, Any]]
    ) -> list[RPCResponse] | RPCResponse:
        response = self.decode_rpc_response(
            await self._post(self.encode_batch_rpc_request(requests))
        )
        if not isinstance(response, list):
            return response  # a node that refuses the batch answers with one error
        answers = cast(list[RPCResponse], response)
        return sorted(answers, key=lambda answer: _id_order(answer.get("id")))

    async def disconnect(self) -> None:
        session, self._session, self._session_loop = self._session, None, None
        if session is not None and not session.closed:
            await session.close()


def _id_order(request_id: Any) -> tuple[int, int]:
    """Answers in request order; answers without a numeric id go last."""
    return (0, request_id) if isinstance(request_id, int) else (1, 0)


__all__ = ["KeepAliveHTTPProvider"]
