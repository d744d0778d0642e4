"""A local development chain: anvil on a free port, for the demo, benchmarks and tests.

anvil comes from the contracts' npm packages (a source checkout) or from PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]  # the source checkout holding contracts/

# anvil's default development accounts (mnemonic "test test ... junk"); public, never real.
DEV_KEYS = (
    "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
    "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
)
DEV_ADDRESSES = (
    "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
    "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
)


def anvil_binary() -> str | None:
    """The native anvil: npm's `.bin/anvil` is a node wrapper that would outlive a kill."""
    modules = REPO / "contracts" / "node_modules"
    for native in sorted(modules.glob("@foundry-rs/anvil-*/bin/anvil")):
        if os.access(native, os.X_OK):
            return str(native)
    wrapper = modules / ".bin" / "anvil"
    if wrapper.exists():
        return str(wrapper)
    return shutil.which("anvil")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Anvil:
    """One anvil process; `rpc()` is a synchronous JSON-RPC call for test control."""

    def __init__(self, binary: str, args: list[str], state: Path | None) -> None:
        self.binary = binary
        self.args = args
        self.state = state
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [self.binary, "--port", str(self.port), "--silent", *self.args]
        if self.state is not None:
            command += ["--state", str(self.state)]
        # A session of its own, so that stop() reaches a wrapper's child process too.
        self.proc = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"anvil exited with {self.proc.returncode}")
            try:
                self.rpc("eth_chainId")
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("anvil did not start within 20 s")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, sig)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def rpc(self, method: str, *params: Any) -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
        request = urllib.request.Request(
            self.url, body.encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.loads(response.read())
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    # Convenience readers for on-chain assertions.
    def block_number(self) -> int:
        return int(self.rpc("eth_blockNumber"), 16)

    def balance(self, address: str) -> int:
        return int(self.rpc("eth_getBalance", address, "latest"), 16)

    def nonce(self, address: str, block: str = "latest") -> int:
        return int(self.rpc("eth_getTransactionCount", address, block), 16)

    def mine(self, blocks: int = 1) -> None:
        self.rpc("anvil_mine", hex(blocks))

    def block(self, number: int | str = "latest", full: bool = False) -> dict[str, Any]:
        tag = number if isinstance(number, str) else hex(number)
        result: dict[str, Any] = self.rpc("eth_getBlockByNumber", tag, full)
        return result

    def receipts_in_chain(self) -> list[dict[str, Any]]:
        """Every receipt of every block of the canonical chain."""
        receipts = []
        for number in range(self.block_number() + 1):
            for tx_hash in self.block(number)["transactions"]:
                receipts.append(self.rpc("eth_getTransactionReceipt", tx_hash))
        return receipts


AnvilFactory = Callable[..., Anvil]
