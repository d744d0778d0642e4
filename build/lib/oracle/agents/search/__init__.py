"""Search providers behind one interface: Tavily, Brave, SearXNG, GDELT, RSS/Atom feeds
(built from their settings by `oracle.app.build_search_provider`)."""

from oracle.agents.search.base import SearchHit, SearchProvider

__all__ = ["SearchHit", "SearchProvider"]
