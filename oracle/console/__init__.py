"""The review console: a web app (aiohttp, server-rendered Jinja2 pages) where a team
reviews the markets the daemon escalated, over the daemon's database. Its own process
(`oracle console serve`), safe to run as several replicas: sessions, sign-in throttling
and the audit chain live in the database."""
