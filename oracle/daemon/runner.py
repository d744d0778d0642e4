"""Running the daemon: the scheduler, the metrics and health endpoints, and signals.

Job settings, chosen deliberately:

- `max_instances=1`: a job never overlaps itself (a slow poll must not pile up).
- `coalesce=True`: runs missed while the loop was busy collapse into one.
- `misfire_grace_time` = the job's interval: a run more than one interval late is
  skipped, since the next one is due anyway.

SIGTERM or SIGINT drains: the scheduler stops starting jobs, no new market is leased,
markets in flight get `daemon.drain_timeout` seconds to finish (one still researching is
interrupted and its lease released, so a restart resumes it), then the process exits 0.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial

from aiohttp import web
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text

from oracle.agents.metrics import AGENT_METRICS
from oracle.daemon.service import Daemon
from oracle.daemon.settings import MetricsSettings
from oracle.entry import STOP_REQUESTED
from oracle.log import emit

logger = logging.getLogger("oracle.daemon")


def build_web_app(daemon: Daemon, scheduler: AsyncIOScheduler | None) -> web.Application:
    """`/metrics` (Prometheus), `/healthz` (the process runs), `/readyz` (it can work)."""

    async def metrics(_: web.Request) -> web.Response:
        # The daemon's metrics and the research agents' (tokens, cost, tool calls).
        registries = (daemon.metrics.registry, AGENT_METRICS.registry)
        parts = [await asyncio.to_thread(generate_latest, r) for r in registries]
        return web.Response(body=b"".join(parts), headers={"Content-Type": CONTENT_TYPE_LATEST})

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


async def start_web(
    daemon: Daemon, scheduler: AsyncIOScheduler | None, settings: MetricsSettings
) -> web.AppRunner | None:
    if not settings.enabled:
        return None
    runner = web.AppRunner(build_web_app(daemon, scheduler), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, settings.port)
    await site.start()
    emit(logger, logging.INFO, "daemon.http_listening", host=settings.host, port=settings.port)
    return runner


def _guarded(
    name: str, job: Callable[[], Awaitable[object]], daemon: Daemon
) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        try:
            await job()
        except Exception as error:  # a failing job is reported and retried next interval
            daemon.metrics.errors.labels(name).inc()
            emit(
                logger,
                logging.ERROR,
                "job.failed",
                job=name,
                error=f"{type(error).__name__}: {error}",
            )

    return run


def build_scheduler(daemon: Daemon) -> AsyncIOScheduler:
    settings = daemon.settings
    scheduler = AsyncIOScheduler(timezone="UTC")
    jobs: list[tuple[str, Callable[[], Awaitable[object]], float]] = [
        ("poll", partial(daemon.poll, start_due=True), settings.poll_interval),
        ("promote", daemon.promote_then_start, settings.dispatch_interval),
        ("dispatch", daemon.dispatch, settings.dispatch_interval),
        ("watch", daemon.watch, settings.watch_interval),
        ("housekeep", daemon.housekeep, settings.housekeeping_interval),
    ]
    for name, job, interval in jobs:
        scheduler.add_job(
            _guarded(name, job, daemon),
            "interval",
            seconds=interval,
            id=name,
            name=name,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=max(int(interval), 1),
            next_run_time=datetime.now(UTC),  # first run at once, then every interval
        )
    return scheduler


async def run_forever(daemon: Daemon, metrics_settings: MetricsSettings) -> None:
    """Run until SIGTERM or SIGINT, then drain and return."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    if STOP_REQUESTED.is_set():  # asked to stop while starting up
        stop.set()
    scheduler = build_scheduler(daemon)
    web_runner = await start_web(daemon, scheduler, metrics_settings)
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
