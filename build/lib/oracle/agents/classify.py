"""Source category and credibility, assigned by the oracle from domain rules, never by a model.

A rule names domains and gives every URL on them a category and a credibility. A URL's
host is the one a browser opens (`oracle.core.urls.parse_web_url`). A domain
matches itself and its subdomains (`gov` matches every `.gov` host, `bbc.co.uk` matches
`www.bbc.co.uk`); the longest matching domain wins, so `nasa.gov` can outrank `gov`.
Hosts no rule matches get the default category and credibility. The built-in rules cover
official and government domains, news outlets, academic, data providers, reference works
and social media, in credibility tiers; configured rules are added to them (and win on a
tie) unless `replace_default_rules` is set.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from oracle.agents.settings import ClassificationSettings, DomainRule
from oracle.core.models import ACADEMIC, DATA, NEWS, OFFICIAL, REFERENCE, SOCIAL, WEB
from oracle.core.urls import parse_web_url


def _rule(category: str, credibility: float, *domains: str) -> DomainRule:
    return DomainRule(domains=domains, category=category, credibility=credibility)


DEFAULT_RULES: tuple[DomainRule, ...] = (
    # Official: governments, central banks, international bodies, courts, election bodies.
    _rule(OFFICIAL, 0.95, "gov", "mil", "gov.uk", "gouv.fr", "bund.de", "gc.ca", "canada.ca"),
    _rule(OFFICIAL, 0.95, "gov.au", "govt.nz", "go.jp", "gov.in", "gob.mx", "gov.br"),
    _rule(OFFICIAL, 0.95, "europa.eu", "un.org", "who.int", "imf.org", "worldbank.org"),
    _rule(OFFICIAL, 0.95, "oecd.org", "ecb.europa.eu", "bankofengland.co.uk", "federalreserve.gov"),
    _rule(OFFICIAL, 0.9, "fifa.com", "olympics.com", "uefa.com", "nobelprize.org"),
    # News: wire services and outlets of record first.
    _rule(NEWS, 0.9, "reuters.com", "apnews.com", "afp.com", "bloomberg.com"),
    _rule(NEWS, 0.85, "bbc.co.uk", "bbc.com", "nytimes.com", "wsj.com", "ft.com"),
    _rule(NEWS, 0.85, "washingtonpost.com", "theguardian.com", "economist.com", "npr.org"),
    _rule(NEWS, 0.8, "cnn.com", "cnbc.com", "aljazeera.com", "lemonde.fr", "spiegel.de"),
    _rule(NEWS, 0.8, "politico.com", "axios.com", "nhk.or.jp", "abc.net.au", "cbc.ca"),
    _rule(NEWS, 0.75, "espn.com", "coindesk.com", "theblock.co", "techcrunch.com"),
    _rule(NEWS, 0.75, "theverge.com", "arstechnica.com", "apnews.org", "france24.com"),
    # Academic.
    _rule(ACADEMIC, 0.9, "edu", "ac.uk", "ac.jp", "arxiv.org", "nature.com", "science.org"),
    _rule(
        ACADEMIC, 0.85, "doi.org", "springer.com", "sciencedirect.com", "pubmed.ncbi.nlm.nih.gov"
    ),
    # Data providers.
    _rule(DATA, 0.9, "fred.stlouisfed.org", "data.gov", "census.gov", "bls.gov"),
    _rule(DATA, 0.85, "coingecko.com", "coinmarketcap.com", "tradingeconomics.com"),
    _rule(DATA, 0.85, "statista.com", "ourworldindata.org", "espncricinfo.com"),
    _rule(DATA, 0.8, "finance.yahoo.com", "nasdaq.com", "nyse.com", "binance.com", "kraken.com"),
    # Reference works.
    _rule(REFERENCE, 0.7, "wikipedia.org", "britannica.com", "wikidata.org"),
    # Social media: a claim there is a lead, not evidence.
    _rule(SOCIAL, 0.3, "twitter.com", "x.com", "facebook.com", "instagram.com", "tiktok.com"),
    _rule(SOCIAL, 0.3, "reddit.com", "threads.net", "bsky.app", "t.me", "youtube.com"),
    _rule(SOCIAL, 0.3, "medium.com", "substack.com", "linkedin.com", "truthsocial.com"),
)


class Classification(BaseModel):
    model_config = ConfigDict(frozen=True)

    category: str
    credibility: float


class SourceClassifier:
    """Maps a URL to its category and credibility; pure and deterministic."""

    def __init__(self, settings: ClassificationSettings | None = None) -> None:
        settings = settings or ClassificationSettings()
        rules = (
            settings.rules if settings.replace_default_rules else (*DEFAULT_RULES, *settings.rules)
        )
        self._by_domain: dict[str, DomainRule] = {}
        for rule in rules:  # later rules (the configured ones) win on the same domain
            for domain in rule.domains:
                self._by_domain[domain] = rule
        self._default = Classification(
            category=settings.default_category.strip().lower() or WEB,
            credibility=settings.default_credibility,
        )

    def classify(self, url: str) -> Classification:
        """Category and credibility of `url`, by the host a browser would open (WHATWG URL
        standard); ValueError when it is not an http(s) URL. Classify the URL the text
        came from: after redirects, not the one first asked for."""
        host = parse_web_url(url).hostname.removesuffix(".")  # the root's dot: same name
        labels = host.split(".")
        for start in range(len(labels)):  # longest suffix first
            rule = self._by_domain.get(".".join(labels[start:]))
            if rule is not None:
                return Classification(category=rule.category, credibility=rule.credibility)
        return self._default
