"""What counts as evidence: read, not seen (the thresholds count read sources only), and
new evidence in a debate (a read, quoted, related source from a document not held or
shown before)."""

from __future__ import annotations

import pytest

from oracle.core import ConsensusParams, SourceThresholds, evaluate
from oracle.core.debate import flips, next_standing
from oracle.core.evidence import (
    document_key,
    is_new_evidence,
    question_subject,
    quote_found,
    relates,
)
from oracle.core.models import AgentResult, ConsensusInput, Market, ResearchSource
from oracle.core.proof import build_proof, render_markdown, verify_proof
from oracle.testing import result

PAGE = (
    "BREAKING \u2014 The Dunmore parliament passed the budget bill on 28 August,\n"
    "  by 61 votes to 40, the speaker\u2019s office said."
)
QUESTION = "Did the Dunmore parliament pass the budget bill by the end of August?"
SUBJECT = question_subject(QUESTION, ("YES", "NO"))


def test_a_quote_is_found_as_written_up_to_case_spacing_and_typography() -> None:
    assert quote_found("the Dunmore parliament passed the budget bill", PAGE)
    assert quote_found("THE DUNMORE   PARLIAMENT passed\nthe budget bill", PAGE)
    assert quote_found("the speaker's office said", PAGE)  # curly apostrophe on the page
    assert quote_found("BREAKING - The Dunmore", PAGE)  # an em dash on the page
    assert quote_found("parliament passed ... by 61 votes to 40", PAGE)  # words left out
    assert quote_found("parliament pas\u200bsed the budget", PAGE)  # a hidden character


def test_a_quote_not_on_the_page_or_too_short_is_not_found() -> None:
    assert not quote_found("the parliament rejected the budget bill", PAGE)
    assert not quote_found("by 61 votes ... parliament passed", PAGE)  # parts out of order
    assert not quote_found("the", PAGE)  # on the page, but proves nothing
    assert not quote_found("budget", PAGE)
    assert not quote_found("", PAGE)
    assert not quote_found("... ...", PAGE)


@pytest.mark.parametrize(
    "variant",
    [
        "https://news.example/budget-vote?ref=debate",
        "https://news.example/budget-vote#frag",
        "https://news.example/budget-vote/",
        "http://news.example/budget-vote",
        "https://www.news.example/budget-vote",
        "https://NEWS.example:443/Budget-Vote",
        "https://news.example/budget-vote?utm_source=x&page=2#top",
    ],
)
def test_spellings_of_one_document_share_its_key(variant: str) -> None:
    assert document_key(variant) == document_key("https://news.example/budget-vote")


def test_other_documents_have_other_keys() -> None:
    base = document_key("https://news.example/budget-vote")
    assert document_key("https://news.example/budget-vote-2") != base
    assert document_key("https://other.example/budget-vote") != base
    assert document_key("https://news.example:8443/budget-vote") != base


def test_a_quote_relates_when_it_shares_a_content_word_with_the_question() -> None:
    assert relates("Lawmakers in Dunmore approved the spending plan", SUBJECT)
    assert relates("The budgets were approved", SUBJECT)  # plural, same stem
    # A recipe page: nothing about the question.
    assert not relates("Bake the cake for 30 minutes until golden", SUBJECT)
    # Only stopwords, months and short words are shared: not about the question.
    assert not relates("By the end of August it was done, they said.", SUBJECT)
    assert not relates("", SUBJECT)
    # Outcome labels are part of the subject.
    labels = question_subject("Who wins the race?", ("Verstappen", "Hamilton"))
    assert relates("Verstappen crossed the line first", labels)


def read_source(url: str, quote: str, *, read: bool = True) -> ResearchSource:
    return ResearchSource(
        url=url,
        title="t",
        category="news",
        credibility_score=0.8,
        relevance_score=0.9,
        quote=quote,
        read=read,
    )


QUOTE = "The Dunmore parliament passed the budget bill"


def test_new_evidence_is_read_quoted_related_and_from_another_document() -> None:
    known = {document_key("https://news.example/budget-vote")}
    fresh = read_source("https://wire.example/dunmore", QUOTE)
    assert is_new_evidence(fresh, known, SUBJECT)
    # The false positives:
    for url in (
        "https://news.example/budget-vote?ref=debate",
        "https://news.example/budget-vote#frag",
        "https://www.news.example/budget-vote/",
    ):
        assert not is_new_evidence(read_source(url, QUOTE), known, SUBJECT), url
    recipe = read_source("https://recipes.example/cake", "Bake the cake for 30 minutes")
    assert not is_new_evidence(recipe, known, SUBJECT)
    assert not is_new_evidence(read_source("https://wire.example/d", ""), known, SUBJECT)
    seen_only = read_source("https://wire.example/dunmore", QUOTE, read=False)
    assert not is_new_evidence(seen_only, known, SUBJECT)


def answer(agent: str, outcome: str, *sources: ResearchSource) -> AgentResult:
    return AgentResult(
        agent_id=agent, outcome=outcome, confidence=0.8, reasoning="r", sources=sources
    )


def test_a_flip_on_a_shown_page_with_a_query_appended_does_not_count() -> None:
    shown_page = read_source("https://news.example/budget-vote", QUOTE)
    before = {"a": answer("a", "NO", read_source("https://a.example/1", QUOTE))}
    shown = {"a": [answer("b", "YES", shown_page)]}
    for url in (
        "https://news.example/budget-vote?ref=debate",
        "https://news.example/budget-vote#frag",
    ):
        after = {"a": answer("a", "YES", read_source(url, QUOTE))}
        standing, (flip,) = next_standing(before, after, shown, subject=SUBJECT)
        assert not flip.supported, url
        assert standing["a"] == before["a"]
    # A recipe page read in the round is new, but not about the question.
    recipe = read_source("https://recipes.example/cake", "Bake the cake for 30 minutes")
    (flip,) = flips(before, {"a": answer("a", "YES", recipe)}, shown, subject=SUBJECT)
    assert not flip.supported
    # A search hit never opened is not new evidence either.
    hit = read_source("https://wire.example/dunmore", QUOTE, read=False)
    (flip,) = flips(before, {"a": answer("a", "YES", hit)}, shown, subject=SUBJECT)
    assert not flip.supported
    # Read, quoted, related, another document: it counts.
    found = read_source("https://wire.example/dunmore", QUOTE)
    (flip,) = flips(before, {"a": answer("a", "YES", found)}, shown, subject=SUBJECT)
    assert flip.new_sources == ("https://wire.example/dunmore",)


def test_a_document_held_in_an_earlier_round_is_not_new() -> None:
    before = {"a": answer("a", "NO", read_source("https://a.example/1", QUOTE))}
    found = read_source("https://wire.example/dunmore", QUOTE)
    known = {"a": {document_key("https://wire.example/dunmore?page=1")}}
    (flip,) = flips(before, {"a": answer("a", "YES", found)}, {}, subject=SUBJECT, known=known)
    assert not flip.supported


def test_sources_seen_not_read_count_for_nothing_and_are_shown() -> None:
    thresholds = SourceThresholds(min_total=3, min_categories=1, min_official=0, min_news=0)
    params = ConsensusParams(min_model_families=1)
    market = Market(id="m", question=QUESTION)
    read = [result(agent, "YES", 0.9, 3) for agent in ("a", "b", "d")]
    # c cites three search hits it never opened: kept as seen, counted for nothing.
    hits = tuple(
        read_source(f"https://sec.gov/hit/{i}", QUOTE, read=False).model_copy(
            update={"category": "official", "credibility_score": 0.95}
        )
        for i in range(3)
    )
    unread = answer("c", "NO", *hits)
    verdict = evaluate(ConsensusInput(market=market, results=(*read, unread)), params, thresholds)
    vote = next(v for v in verdict.votes if v.agent_id == "c")
    assert (vote.counted, vote.source_count) == (False, 0)
    assert vote.seen_not_read == tuple(f"https://sec.gov/hit/{i}" for i in range(3))
    assert all("sec.gov" not in s.url for s in verdict.sources)
    assert (verdict.reached, verdict.outcome) == (True, "YES")
    proof = build_proof(
        ConsensusInput(market=market, results=(*read, unread)), verdict, params, thresholds
    )
    assert verify_proof(proof)[0]
    (shown,) = [v for v in proof["votes"] if v["agent_id"] == "c"]
    assert shown["seen_not_read"] == list(vote.seen_not_read)
    assert all("seen_not_read" not in v for v in proof["votes"] if v["agent_id"] != "c")
    assert "Seen, not read" in render_markdown(proof)
