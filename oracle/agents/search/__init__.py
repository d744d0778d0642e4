"""Search providers behind one interface: Tavily, Brave, SearXNG, GDELT, RSS/Atom feeds."""

from oracle.agents.search.base import SearchHit, SearchProvider
from oracle.agents.search.config import SearchConfig, build_search_provider

__all__ = ["SearchConfig", "SearchHit", "SearchProvider", "build_search_provider"]
