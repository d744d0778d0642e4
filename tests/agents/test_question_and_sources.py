"""Question parsing, source classification, model families, secrets and the answer schema."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from oracle.agents.answer import parse_answer
from oracle.agents.classify import SourceClassifier
from oracle.agents.question import parse_question, present, too_early_reason
from oracle.agents.settings import ClassificationSettings, DomainRule, SecretRef
from oracle.core.families import infer_model_family, infer_provider
from oracle.core.models import Market
from oracle.core.timing import AnswerWindow
from oracle.errors import AnswerInvalid, ConfigError

ANCILLARY = (
    "q: title: Will Donald Trump win the 2024 US Presidential Election?, description: This "
    'market will resolve to "Yes" if Donald J. Trump wins. Otherwise "No". res_data: p1: 0, '
    "p2: 1, p3: 0.5. Where p1 corresponds to No, p2 to Yes, p3 to unknown/50-50. Updates made "
    "by the question creator via the bulletin board at 0x65070BE91477460D8A7AeEb94ef92fe056C2f2A7 "
    "should be considered.,initializer:91430cad2d3975766499717fa0d66a78b814e5c5\n\n"
    "Clarification 2024-11-01: a concession counts as a win for the opponent."
)


def test_uma_ancillary_data_is_parsed() -> None:
    question = parse_question(ANCILLARY, criteria="Per the AP call.")
    assert question.from_ancillary_data
    assert question.title == "Will Donald Trump win the 2024 US Presidential Election?"
    assert (
        question.description
        == 'This market will resolve to "Yes" if Donald J. Trump wins. Otherwise "No".'
    )
    assert question.resolution_values == {"p1": "0", "p2": "1", "p3": "0.5"}
    assert question.outcome_meanings == {"p1": "No", "p2": "Yes", "p3": "unknown/50-50"}
    assert question.clarifications == (
        "Updates made by the question creator via the bulletin board at "
        "0x65070BE91477460D8A7AeEb94ef92fe056C2f2A7 should be considered",
        "Clarification 2024-11-01: a concession counts as a win for the opponent",
        "Per the AP call",
    )
    assert "initializer" not in question.render()
    assert "p3 = 0.5 (unknown/50-50)" in question.render()


def test_ancillary_data_without_meanings_uses_uma_defaults_and_p4() -> None:
    too_early_value = (
        "-57896044618658097711785492504343953926634992332820282019728.792003956564819968"
    )
    question = parse_question(
        "q: title: Will it rain?, description: Rain in Paris. "
        f"res_data: p1: 0, p2: 1, p3: 0.5, p4: {too_early_value}"
    )
    assert question.resolution_values["p4"].startswith("-5789604461865809771")
    assert question.outcome_meanings == {"p1": "No", "p2": "Yes", "p3": "unknown/50-50"}


def test_plain_text_question() -> None:
    question = parse_question(
        "Did it rain in Paris on 1 May 2024?\nPer Météo-France.", "Per Météo-France."
    )
    assert not question.from_ancillary_data
    assert question.title == "Did it rain in Paris on 1 May 2024?"
    assert question.description == "Per Météo-France."
    assert question.clarifications == ()  # the criteria repeat the description


def test_too_early_without_a_window_is_before_the_venues_resolution_time() -> None:
    market = Market(id="m", question="q?", resolve_after=1000.0)
    assert (too_early_reason(market, 999.0) or "").startswith("too early: ")
    assert too_early_reason(market, 1000.0) is None
    assert too_early_reason(Market(id="m", question="q?"), 0.0) is None


def test_too_early_with_a_window_follows_when_outcomes_become_final() -> None:
    window = AnswerWindow(closes_at=2000.0, early_outcomes=("YES",), origin="venue")
    by_date = Market(id="m", question="q?", resolve_after=5000.0, window=window)
    assert too_early_reason(by_date, 1500.0) is None  # YES could be known already
    scheduled = by_date.model_copy(
        update={"window": window.model_copy(update={"opens_at": 1800.0})}
    )
    assert (too_early_reason(scheduled, 1500.0) or "").startswith("not yet: the event cannot")
    assert too_early_reason(scheduled, 1800.0) is None
    no_early = by_date.model_copy(
        update={"window": window.model_copy(update={"early_outcomes": ()})}
    )
    reason = too_early_reason(no_early, 1999.0) or ""
    assert reason.startswith("not yet: no outcome is final before the question's window closes")
    assert "(the window from venue: no words recorded)" in reason
    assert too_early_reason(no_early, 2000.0) is None  # resolve_after yields to the window
    # An early outcome the market does not have makes none early (the hold rule matches names).
    other_name = window.model_copy(update={"early_outcomes": ("Yes",)})
    assert too_early_reason(by_date.model_copy(update={"window": other_name}), 1500.0) is not None


def test_the_present_is_the_venues_clock_when_the_market_says() -> None:
    assert present(Market(id="m", question="q?", now=100.0), 500.0) == 100.0
    assert present(Market(id="m", question="q?"), 500.0) == 500.0


@pytest.mark.parametrize(
    ("url", "category", "credibility"),
    [
        ("https://www.reuters.com/world/us/x", "news", 0.9),
        ("https://WWW.FEC.GOV/data", "official", 0.95),
        ("https://science.nasa.gov/x", "official", 0.95),
        ("https://www.gov.uk/government/news", "official", 0.95),
        ("https://en.wikipedia.org/wiki/X", "reference", 0.7),
        ("https://arxiv.org/abs/1", "academic", 0.9),
        ("https://fred.stlouisfed.org/series/X", "data", 0.9),
        ("https://x.com/someone/status/1", "social", 0.3),
        ("https://notgov.example/x", "web", 0.4),
        ("https://example.com:8443/a", "web", 0.4),
        # By the host a browser opens (WHATWG URL standard), not urllib's reading:
        ("http://blog.example\\@www.sec.gov/x", "web", 0.4),  # host blog.example
        ("http://www.sec.gov\\@blog.example/x", "official", 0.95),  # host www.sec.gov
        ("http://blog.example%5C@www.sec.gov/x", "official", 0.95),  # escaped: userinfo
        ("https://www.reuters.com\tx.example/", "web", 0.4),  # tab removed: reuters.comx
        ("https://WWW.REUTERS.COM./a", "news", 0.9),  # the root's trailing dot
        ("https://xn--bcher-kva.gov/", "official", 0.95),
        ("https://Bücher.GOV/", "official", 0.95),
    ],
)
def test_default_domain_rules(url: str, category: str, credibility: float) -> None:
    classification = SourceClassifier().classify(url)
    assert (classification.category, classification.credibility) == (category, credibility)


def test_configured_rules_extend_or_replace_the_defaults() -> None:
    settings = ClassificationSettings(
        rules=(
            DomainRule(domains=("fec.gov",), category="official", credibility=0.99),
            DomainRule(domains=("*.example",), category="news", credibility=0.5),
        ),
        default_credibility=0.2,
    )
    classifier = SourceClassifier(settings)
    assert classifier.classify("https://www.fec.gov/").credibility == 0.99  # most specific wins
    assert classifier.classify("https://www.whitehouse.gov/").credibility == 0.95
    assert classifier.classify("https://news.example/").category == "news"
    assert classifier.classify("https://unknown.org/").credibility == 0.2
    only = SourceClassifier(
        ClassificationSettings(rules=settings.rules, replace_default_rules=True)
    )
    assert only.classify("https://www.reuters.com/").category == "web"
    with pytest.raises(ValidationError, match="is not a domain"):
        DomainRule(domains=("https://x.com/",), category="news", credibility=0.5)


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("gpt-4.1-mini", "gpt"),
        ("o3-mini", "gpt"),
        ("claude-opus-4-6", "claude"),
        ("anthropic/claude-sonnet-4", "claude"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama"),
        ("llama3.1:8b", "llama"),
        ("qwen2.5:32b", "qwen"),
        ("mistralai/Mixtral-8x7B", "mistral"),
        ("deepseek-r1", "deepseek"),
        ("gemini-2.5-pro", "gemini"),
        ("my-house-model:latest", "my-house-model"),
    ],
)
def test_model_families(model: str, family: str) -> None:
    assert infer_model_family(model) == family


def test_providers() -> None:
    assert infer_provider("openai", None) == "openai"
    assert infer_provider("anthropic", None) == "anthropic"
    assert infer_provider("openai", "https://openrouter.ai/api/v1") == "openrouter"
    assert infer_provider("openai", "http://gpu-box:8000/v1") == "gpu-box"


def test_secrets_from_env_or_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", " from-env \n")
    assert SecretRef(api_key_env="MY_KEY").require("x") == SecretStr("from-env")
    key_file = tmp_path / "key"
    key_file.write_text("from-file\n")
    secret = SecretRef(api_key_file=key_file).require("x")
    assert secret.get_secret_value() == "from-file"
    assert "from-file" not in repr(secret)
    with pytest.raises(ConfigError, match=r"^agents\[a\]\.api_key_file: .*: no such file$"):
        SecretRef(api_key_file=tmp_path / "nope").require("agents[a]")
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(ConfigError, match=r"is empty$"):
        SecretRef(api_key_file=tmp_path / "empty").require("agents[a]")
    with pytest.raises(ValidationError, match="not both"):
        SecretRef(api_key_env="A", api_key_file=key_file)
    with pytest.raises(ValidationError, match="String should match pattern"):
        SecretRef(api_key_env="sk-this-looks-like-a-key!")
    assert SecretRef().resolve("x") is None


def test_answer_validation_names_the_field() -> None:
    outcomes = ("YES", "NO", "UNDETERMINED")
    source = {
        "url": "https://a.example/",
        "title": "",
        "quote": "q",
        "published_date": "2024-11-06",
        "relevance": 0.5,
    }
    good = json.dumps({"outcome": "no", "confidence": 0.7, "reasoning": "r", "sources": [source]})
    answer = parse_answer(f"```json\n{good}\n```", outcomes)
    assert answer.outcome == "NO"
    assert answer.sources[0].published_date is not None
    with pytest.raises(AnswerInvalid, match=r"^\(answer\): not usable JSON \(line 1"):
        parse_answer("YES", outcomes)
    with pytest.raises(AnswerInvalid, match=r"sources\[0\]\.published_date: .*ISO 8601"):
        parse_answer(good.replace("2024-11-06", "last week"), outcomes)
    with pytest.raises(AnswerInvalid, match=r"verdict: unknown key"):
        parse_answer(good.replace('"outcome"', '"verdict": "YES", "outcome"'), outcomes)
    with pytest.raises(AnswerInvalid, match=r"reasoning: is required"):
        parse_answer('{"outcome": "YES", "confidence": 1, "sources": []}', outcomes)


def quick(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


# Regular expressions that backtrack blocked the event loop for minutes on such text (the
# market's question is anyone's; the answer is the model server's).
LONG = 200_000


@pytest.mark.parametrize(
    "question",
    [
        "q: title: x" + " " * LONG + "y",
        "q: title: x," + " " * LONG,
        "q: title: x res_data:" + " \t" * LONG,
        "q: title: t, initializer:" + " " * LONG,
        "q: title: t res_data: p1: 0, p2: 1. Where p1 corresponds to x" + " " * LONG + "y",
        "x\n" + " \n" * LONG,
    ],
)
def test_questions_parse_in_linear_time(question: str) -> None:
    assert quick(lambda: parse_question(question, "")) < 2.0


def test_a_fenced_answer_is_read_in_linear_time() -> None:
    for text in ["```" + " " * LONG + "x", "```" + "\n" * LONG + "x", "```json" + " ```" * LONG]:
        with pytest.raises(AnswerInvalid):
            assert quick(lambda text=text: parse_answer(text, ("YES", "NO"))) < 2.0
    fenced = '```json\n{"outcome": "YES", "confidence": 1, "reasoning": "r", "sources": []}\n```'
    assert parse_answer(f"  {fenced}  ", ("YES", "NO")).outcome == "YES"
