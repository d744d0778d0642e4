"""Running the daemon: the scheduler, the metrics and health endpoints, and signals.

Job settings, chosen deliberately:

- `max_instances=1`: a job never overlaps itself (a slow poll must not pile up).
- `coalesce=True`: runs missed while the loop was busy collapse into one.
- `misfire_grace_time` = the job's interval: a run more than one interval late is
  skipped, since the next one is due anyway.

A job that fails (the database is down, say) is counted, flagged and logged
(`GuardedJob`), then skips its runs for a back-off that doubles with each consecutive
failure, so a fault is neither hammered nor hidden; `/readyz` names the fault itself
(the database, a market source) for as long as it lasts.

The metrics server's sockets are bound before anything is scheduled (`listen`), so a
busy port stops the start with one line naming `metrics.port`.

SIGTERM or SIGINT drains: the scheduler stops starting jobs, no new market is leased,
markets in flight get `daemon.drain_timeout` seconds to finish (one still researching is
interrupted and its lease released, so a restart resumes it), then the process exits 0.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from functools import partial

from aiohttp import web
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text

from oracle.daemon.ports import Monitored
from oracle.daemon.service import Daemon
from oracle.daemon.settings import MetricsSettings
from oracle.errors import SetupError
from oracle.log import emit
from oracle.scrub import SCRUBBER, scrub
from oracle.shutdown import STOP_REQUESTED

logger = logging.getLogger("oracle.daemon")
# A job failing for long is still tried at least this often (seconds).
JOB_BACKOFF_MAX = 60.0


class GuardedJob:
    """A scheduled job whose failure never stops the scheduler.

    A failure is counted (`oracle_errors_total{stage}`), flagged (`oracle_job_failing`)
    and logged (`job.failed`); the job's runs are then skipped for twice its
    interval, doubling with each consecutive failure up to `JOB_BACKOFF_MAX`. The first run
    that succeeds again clears the flag (`job.recovered`). A run interrupted by the
    shutdown ends quietly (`job.interrupted`): its work is resumable.
    """

    def __init__(
        self,
        name: str,
        job: Callable[[], Awaitable[object]],
        daemon: Daemon,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.interval = interval
        self.failures = 0
        self._job = job
        self._daemon = daemon
        self._clock = clock
        self._retry_at = 0.0

    async def run(self) -> None:
        if self._clock() < self._retry_at:
            return
        metrics = self._daemon.metrics
        try:
            await self._job()
        except asyncio.CancelledError:
            # Only the scheduler's shutdown cancels a job.
            emit(logger, logging.INFO, "job.interrupted", job=self.name)
            return
        except Exception as error:  # reported, then retried after the back-off
            self.failures += 1
            delay = min(self.interval * 2**self.failures, max(JOB_BACKOFF_MAX, self.interval))
            self._retry_at = self._clock() + delay
            metrics.errors.labels(self.name).inc()
            metrics.job_failing.labels(self.name).set(1)
            emit(
                logger,
                logging.ERROR,
                "job.failed",
                job=self.name,
                error=f"{type(error).__name__}: {error}",
                failures=self.failures,
                retry_in_seconds=round(delay, 2),
            )
            return
        if self.failures:
            emit(logger, logging.INFO, "job.recovered", job=self.name, failures=self.failures)
            self.failures = 0
            metrics.job_failing.labels(self.name).set(0)


def build_web_app(daemon: Daemon, scheduler: AsyncIOScheduler | None) -> web.Application:
    """`/metrics` (Prometheus), `/healthz` (the process runs), `/readyz` (it can work now:
    the database answers, every market source that can tell reaches its venue, the
    scheduler runs, no drain)."""

    async def metrics(_: web.Request) -> web.Response:
        # One registry: the daemon's, which the research agents' metrics (tokens, cost,
        # tool calls) are on too (oracle.app.assemble).
        body = await asyncio.to_thread(generate_latest, daemon.metrics.registry)
        if SCRUBBER.active:  # a label never carries a configured secret (oracle.scrub)
            body = scrub(body.decode("utf-8", "replace")).encode()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "replica": daemon.replica})

    async def readyz(_: web.Request) -> web.Response:
        problems = []
        try:
            await asyncio.to_thread(_ping_database, daemon)
        except Exception as error:  # report, do not crash the probe
            problems.append(f"database: {type(error).__name__}")
        if scheduler is not None and not scheduler.running:
            problems.append("scheduler: not running")
        for source in daemon.sources:
            problem = source.health() if isinstance(source, Monitored) else None
            if problem:
                problems.append(f"source {source.name}: {problem}")
        if daemon.draining:
            problems.append("draining")
        status = 503 if problems else 200
        return web.json_response({"ready": not problems, "problems": problems}, status=status)

    app = web.Application(client_max_size=1024)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    return app


def _ping_database(daemon: Daemon) -> None:
    with daemon.store.engine.connect() as connection:
        connection.execute(text("SELECT 1"))


def listen(settings: MetricsSettings) -> list[socket.socket]:
    """The metrics server's listening sockets (one per address of `metrics.host`), bound
    now: a port in use is a SetupError before anything starts, not a crash after."""
    if not settings.enabled:
        return []
    where = f"{settings.host}:{settings.port}"
    try:
        addresses = socket.getaddrinfo(
            settings.host or None, settings.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as error:
        raise SetupError("metrics.host", f"{settings.host}: {error.strerror}") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(addresses):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # so IPv4 and IPv6 may both be bound, as asyncio does
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(128)
            sock.setblocking(False)
    except OSError as error:
        for sock in sockets:
            sock.close()
        if error.errno == errno.EADDRINUSE:
            raise SetupError("metrics.port", f"{where} is already in use") from None
        if error.errno == errno.EADDRNOTAVAIL:
            problem = f"{settings.host} is no address of this host"
            raise SetupError("metrics.host", problem) from None
        raise SetupError("metrics.port", f"cannot listen on {where} ({error.strerror})") from None
    return sockets


async def start_web(
    daemon: Daemon, scheduler: AsyncIOScheduler | None, listeners: Sequence[socket.socket]
) -> web.AppRunner | None:
    """Serve the endpoints on the sockets `listen` bound (none: metrics are disabled)."""
    if not listeners:
        return None
    runner = web.AppRunner(build_web_app(daemon, scheduler), access_log=None)
    await runner.setup()
    for sock in listeners:
        await web.SockSite(runner, sock).start()
        host, port = sock.getsockname()[:2]
        emit(logger, logging.INFO, "daemon.http_listening", host=host, port=port)
    return runner


def build_scheduler(daemon: Daemon) -> AsyncIOScheduler:
    settings = daemon.settings
    scheduler = AsyncIOScheduler(timezone="UTC")
    jobs = [
        GuardedJob("poll", partial(daemon.poll, start_due=True), daemon, settings.poll_interval),
        GuardedJob("promote", daemon.promote_then_start, daemon, settings.dispatch_interval),
        GuardedJob("dispatch", daemon.dispatch, daemon, settings.dispatch_interval),
        GuardedJob("watch", daemon.watch, daemon, settings.watch_interval),
        GuardedJob("housekeep", daemon.housekeep, daemon, settings.housekeeping_interval),
    ]
    for job in jobs:
        scheduler.add_job(
            job.run,  # a coroutine function: APScheduler awaits it on the loop
            "interval",
            seconds=job.interval,
            id=job.name,
            name=job.name,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=max(int(job.interval), 1),
            next_run_time=datetime.now(UTC),  # first run at once, then every interval
        )
    return scheduler


# Allocations (less deallocations) between two collections of the youngest objects:
# Python's 700 makes one every few statements of a busy daemon, and one in every 100 a
# full collection of whatever markets are in flight.
YOUNG_OBJECTS_PER_COLLECTION = 10_000


def _keep_start_up_from_collector() -> None:
    """What start-up built (modules, settings, the agents and their recordings, the
    venues) lives as long as the process: its garbage collected, the rest is moved out of
    the cyclic collector's sight (`gc.freeze`), so each full collection walks only what
    the work made since. It walked some 300,000 start-up objects each time: about a
    second of CPU over bench/pipeline.py's 1,000 markets. What is freed by its reference
    count is freed as before."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS_PER_COLLECTION, *gc.get_threshold()[1:])


async def run_forever(daemon: Daemon, listeners: Sequence[socket.socket]) -> None:
    """Run until SIGTERM or SIGINT, then drain and return. `listeners`: see `listen`."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    if STOP_REQUESTED.is_set():  # asked to stop while starting up
        stop.set()
    scheduler = build_scheduler(daemon)
    web_runner = await start_web(daemon, scheduler, listeners)
    _keep_start_up_from_collector()
    scheduler.start()
    emit(logger, logging.INFO, "daemon.started", replica=daemon.replica)
    try:
        await stop.wait()
    finally:
        emit(logger, logging.INFO, "daemon.stopping", replica=daemon.replica)
        scheduler.shutdown(wait=False)
        await daemon.drain()
        if web_runner is not None:
            await web_runner.cleanup()
        emit(logger, logging.INFO, "daemon.stopped", replica=daemon.replica)
