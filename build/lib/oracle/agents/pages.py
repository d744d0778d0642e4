"""Reading web pages for agents: bounded in size and time, and never inside the network.

Every URL is read as a browser reads it (the WHATWG URL standard: see oracle.core.urls)
and fetched exactly as read, so the host that is checked, fetched and classified is one.
Every hop of a fetch is checked before a connection is made: the scheme must be http(s),
and the host is resolved and **every** address it resolves to must be public. Private,
loopback, link-local, shared, multicast and reserved addresses are refused unless
`allow_private_addresses` is set or the address is in `allowed_networks`; both exist for
tests and must stay off in production. An IPv6 address that carries an IPv4 address
(IPv4-mapped, SIIT, NAT64 64:ff9b::/96, 6to4) is judged by that address; the rest of
::/8, Teredo and local-use NAT64 are refused. The connector
resolves through the same check, so a name that changes its answer between the check and
the connection (DNS rebinding) is refused too. Redirects are followed by hand, at most
`max_redirects`, each target checked again. Pages must declare an allowed content type,
may be at most `max_bytes` long, and the whole fetch must finish within `timeout_seconds`
(a server that trickles bytes is cut off). Text is decoded by the declared charset, else
the page's `<meta charset>`, else detected, and extracted with trafilatura.
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
import re
import socket
from dataclasses import dataclass

import aiohttp
import yarl
from aiohttp.abc import AbstractResolver, ResolveResult

from oracle.agents.http import read_capped
from oracle.agents.settings import PageSettings
from oracle.core.urls import WebUrl, parse_web_url
from oracle.errors import BlockedAddress, ToolError

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
REDIRECTS = frozenset({301, 302, 303, 307, 308})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


# IPv6 prefixes whose addresses carry an IPv4 address in their last 32 bits and lead to
# it: NAT64's well-known prefix (RFC 6052) and SIIT's IPv4-translated form (RFC 2765).
# IPv4-mapped (::ffff:0:0/96) and 6to4 (2002::/16, bits 16-47) have ipaddress properties.
_CARRY_LAST_32_BITS = (
    ipaddress.IPv6Network("64:ff9b::/96"),
    ipaddress.IPv6Network("::ffff:0:0:0/96"),
)
# Refused whatever they carry: ::/8 is reserved (IPv4-compatible ::/96 is deprecated and
# leads nowhere public; mapped and SIIT addresses are judged above), Teredo reaches its
# host through a relay, and a local-use NAT64 prefix (RFC 8215) is some site's own
# translator, with its IPv4 address wherever that site put it.
_REFUSED_V6 = (
    ipaddress.IPv6Network("::/8"),
    ipaddress.IPv6Network("2001::/32"),
    ipaddress.IPv6Network("64:ff9b:1::/48"),
)


def carried_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries and leads to (IPv4-mapped, SIIT, NAT64
    well-known prefix, 6to4), or None."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in prefix for prefix in _CARRY_LAST_32_BITS):
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return None


def address_allowed(address: IpAddress, settings: PageSettings) -> bool:
    """True for a public unicast address, or one the settings explicitly exempt. An IPv6
    address that carries an IPv4 address is judged by that address."""
    if settings.allow_private_addresses:
        return True
    if isinstance(address, ipaddress.IPv6Address):
        address = carried_ipv4(address) or address
    if any(address in network for network in settings.allowed_networks):
        return True
    if isinstance(address, ipaddress.IPv6Address) and any(
        address in prefix for prefix in _REFUSED_V6
    ):
        return False
    return address.is_global and not address.is_multicast


class GuardedResolver(AbstractResolver):
    """Resolves through `inner` and refuses a name if any of its addresses is not allowed."""

    def __init__(self, settings: PageSettings, inner: AbstractResolver | None = None) -> None:
        self._settings = settings
        self._inner = inner  # the system resolver is made on first use, inside the loop

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            literal: IpAddress | None = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            literal = None
        if literal is not None:
            self._check(host, [literal])
            return [
                ResolveResult(
                    hostname=host,
                    host=str(literal),
                    port=port,
                    family=socket.AF_INET6 if literal.version == 6 else socket.AF_INET,
                    proto=0,
                    flags=socket.AI_NUMERICHOST,
                )
            ]
        if self._inner is None:
            self._inner = aiohttp.ThreadedResolver()
        try:
            results = await self._inner.resolve(host, port, family)
        except (OSError, UnicodeError):  # UnicodeError: a label empty or over 63 characters
            raise ToolError(f"cannot resolve host {host}") from None
        self._check(host, [ipaddress.ip_address(r["host"]) for r in results])
        return results

    def _check(self, host: str, addresses: list[IpAddress]) -> None:
        if not addresses:
            raise ToolError(f"cannot resolve host {host}")
        for address in addresses:
            if not address_allowed(address, self._settings):
                raise BlockedAddress(
                    f"refused: {host} resolves to {address}, not a public address (private, "
                    "loopback, link-local, reserved, or an IPv6 form of such an IPv4 address)"
                )

    async def close(self) -> None:
        if self._inner is not None:
            await self._inner.close()


class _ConnectorResolver(GuardedResolver):
    """The connector's copy: raises OSError, which aiohttp reports as a connection error."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            return await super().resolve(host, port, family)
        except ToolError as error:
            raise OSError(str(error)) from None


@dataclass(frozen=True)
class Page:
    url: str
    requested_url: str
    title: str
    published: str | None
    text: str
    content_type: str
    size_bytes: int


class PageReader:
    """Fetches and extracts pages for one agent, on a session of its own."""

    def __init__(self, settings: PageSettings, resolver: AbstractResolver | None = None) -> None:
        self.settings = settings
        self._guard = GuardedResolver(settings, resolver)
        self._connector_resolver = _ConnectorResolver(settings, resolver)
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    limit=4, resolver=self._connector_resolver, use_dns_cache=False
                ),
                cookie_jar=aiohttp.DummyCookieJar(),
                headers={"User-Agent": self.settings.user_agent},
                timeout=aiohttp.ClientTimeout(
                    total=None,
                    sock_connect=self.settings.connect_timeout_seconds,
                    sock_read=self.settings.timeout_seconds,
                ),
            )
        return self._session

    async def fetch(self, url: str) -> Page:
        """The page at `url` after redirects; ToolError (BlockedAddress) says what went wrong."""
        try:
            async with asyncio.timeout(self.settings.timeout_seconds):
                return await self._fetch(url)
        except TimeoutError:
            raise ToolError(f"{url}: timed out after {self.settings.timeout_seconds:g} s") from None

    async def _fetch(self, url: str) -> Page:
        target = self._target(url)
        for _hop in range(self.settings.max_redirects + 1):
            current = target.href
            await self._guard.resolve(
                target.hostname, target.port or (443 if target.scheme == "https" else 80)
            )
            try:
                # encoded=True: aiohttp requests exactly the URL just checked and classified,
                # with no second parser's reading of it.
                request_url = yarl.URL(current, encoded=True)
                async with self.session.get(request_url, allow_redirects=False) as response:
                    if response.status in REDIRECTS:
                        location = response.headers.get("Location")
                        if not location:
                            raise ToolError(f"{current}: redirect without a Location")
                        target = self._target(location, base=current)
                        continue
                    if response.status != 200:
                        raise ToolError(f"{current}: HTTP {response.status}")
                    content_type = response.content_type.lower()
                    if content_type not in self.settings.content_types:
                        raise ToolError(
                            f"{current}: content type {content_type or '(none)'} is not "
                            f"readable (allowed: {', '.join(self.settings.content_types)})"
                        )
                    body = await read_capped(
                        response, self.settings.max_bytes, f"{current}: the page"
                    )
                    charset = response.charset
            except aiohttp.ClientConnectorError as error:
                if "refused:" in str(error):  # the connector's guard (rebinding)
                    raise BlockedAddress(f"{current}: refused: private address") from None
                raise ToolError(f"{current}: cannot connect") from None
            except aiohttp.ClientError as error:
                raise ToolError(f"{current}: {type(error).__name__}") from None
            return await asyncio.to_thread(self._extract, url, current, body, charset, content_type)
        raise ToolError(f"{url}: more than {self.settings.max_redirects} redirects")

    @staticmethod
    def _target(url: str, base: str | None = None) -> WebUrl:
        """`url` as a browser reads it (relative to `base`: a redirect's Location)."""
        try:
            return parse_web_url(url, base)
        except ValueError as error:
            if base is not None:
                raise ToolError(
                    f"{base}: the redirect's Location {url[:200]!r} is {error}"
                ) from None
            raise ToolError(f"{url[:2000]!r} is {error}") from None

    def _extract(
        self, requested: str, url: str, body: bytes, charset: str | None, content_type: str
    ) -> Page:
        import trafilatura  # noqa: PLC0415 (slow to import; only agents that read pages need it)

        text = decode(body, charset)
        title, published = "", None
        if content_type == "text/plain":
            extracted = text
        else:
            # deduplicate=False: trafilatura's de-duplication cache is process-wide, so a
            # page read twice (by two runs or two agents) would come back empty.
            extracted = trafilatura.extract(
                text, url=url, include_comments=False, include_tables=True, deduplicate=False
            ) or trafilatura.html2txt(text)
            metadata = trafilatura.extract_metadata(text, default_url=url)
            if metadata is not None:
                title = metadata.title or ""
                published = metadata.date or None
        return Page(
            url=url,
            requested_url=requested,
            title=" ".join(title.split()),
            published=published,
            text=extracted[: self.settings.max_text_chars],
            content_type=content_type,
            size_bytes=len(body),
        )

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


# The encodings a browser decodes (the WHATWG Encoding Standard), by Python's name for the
# label, with the codec a browser uses for it (latin-1 and ASCII labels mean windows-1252).
# Any other label is ignored, as a browser ignores it: Python also has codecs that are no
# text encoding a page can declare (idna, punycode, undefined, utf-7, rot13, base64, ...),
# some of which raise on any input.
_BROWSER_CODECS: dict[str, str] = {
    **{name: name for name in ("utf-8", "utf-16", "utf-16-le", "utf-16-be", "cp866")},
    **{name: name for name in ("koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "cp874")},
    **{f"iso8859-{n}": f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)},
    **{f"cp125{n}": f"cp125{n}" for n in range(9)},
    **{name: name for name in ("gbk", "gb18030", "big5", "big5hkscs", "euc_jp", "euc_kr")},
    **{name: name for name in ("iso2022_jp", "shift_jis", "cp932")},
    "ascii": "cp1252",
    "iso8859-1": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "gb2312": "gbk",
}
# WHATWG labels Python does not know by these names.
_LABEL_ALIASES = {
    "windows-874": "cp874",
    "x-mac-cyrillic": "mac-cyrillic",
    "iso-8859-8-i": "iso8859-8",
    "windows-31j": "cp932",
    "x-sjis": "shift_jis",
}


def browser_codec(label: str) -> str | None:
    """The Python codec a browser would decode a page labelled `label` with; None for a
    label no browser knows."""
    name = label.strip().lower()
    name = _LABEL_ALIASES.get(name, name)
    try:
        return _BROWSER_CODECS.get(codecs.lookup(name).name)
    except (LookupError, ValueError):  # ValueError: a label with a NUL in it
        return None


def decode(body: bytes, charset: str | None) -> str:
    """Bytes to text: declared charset, else <meta charset>, else UTF-8, else detected.
    Labels no browser knows are ignored."""
    candidates = [charset] if charset else []
    meta = _META_CHARSET.search(body[:4096])
    if meta is not None:
        candidates.append(meta.group(1).decode("ascii", "ignore"))
    for label in candidates:
        codec = browser_codec(label)
        if codec is not None:
            return body.decode(codec, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        import charset_normalizer  # noqa: PLC0415

        best = charset_normalizer.from_bytes(body[:200_000]).best()
        if best is not None and best.encoding:
            try:
                return body.decode(best.encoding, errors="replace")
            except (LookupError, UnicodeError):  # a codec with no "replace" (none so far)
                pass
        return body.decode("cp1252", errors="replace")
