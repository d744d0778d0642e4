"""Every exception oracle raises on purpose, in one place (as httpx does).

The tree::

    OracleError                  base of everything oracle raises on purpose
    ├── ConfigError              a configuration value is invalid (names the key path)
    │   └── SetupError           a valid value that does not work: an unreachable database,
    │                            a node on another chain, a busy port (names the key)
    ├── InputError               a document given to oracle is malformed (names the field)
    │   ├── AncillaryDataError   UMA ancillary data that cannot be read exactly as a
    │   │                        question, or a price it does not offer (names the part)
    │   └── RealityQuestionError a Reality.eth question that cannot be read exactly, or an
    │                            answer it does not offer (names the field)
    ├── ProofError               a proof document cannot be read or checked
    ├── JsonError (ValueError)   outside JSON that cannot be used (never quotes it)
    │   └── JsonTooDeep          nested deeper than the limit
    ├── IllegalTransition        an event the market lifecycle does not allow in a state
    ├── IllegalIntentTransition  an event a transaction intent's states do not allow
    ├── StoreError               a request the store cannot honour (names the record)
    │   ├── StaleDecision        a review decision made on evidence newer research replaced
    │   └── LeaseLost            another replica holds (or took over) the market's lease
    ├── AccessDenied             a person is not who they claim, or their role may not act
    ├── SourceError              a market source could not be read (names the source)
    ├── ResolverError            an answer could not be delivered (`retryable` false: a
    │                            person at once, `oracle.core.failures`)
    │   ├── AwaitingOthers       nothing to send until someone else answers (a second
    │   │                        opinion off a managed oracle's proposer whitelist)
    │   └── AnswerLost           an answer paid for can no longer take effect (a person looks)
    ├── AgentError               an agent could not answer (recorded as its failure)
    │   └── AnswerInvalid        a model's answer does not match the schema (names the
    │                            field; the model is asked again)
    ├── ToolError                a research tool failed (shown to the model, never fatal)
    │   ├── RateLimited          the service wants more patience than the budget allows
    │   └── BlockedAddress       a URL leads to an address agents may not fetch
    ├── ModelError               a model's API failed
    └── ChainError               the chain layer
        ├── RpcError             a node failed or disagreed (names its redacted URL)
        │   └── ChainIdMismatch  a node serves another chain than the configured one
        ├── RpcUnavailable       no node answered within the deadline
        ├── KeystoreError        a keystore or its password cannot be read or used
        ├── TxError              a transaction could not be built, sent or completed
        │   ├── TxReverted       the call reverts (carries the decoded custom error)
        │   ├── SubjectsHeld     another intent already acts on what this one would
        │   ├── BondRefused      the bond budget refused the bond an intent would post
        │   ├── BondShortfall    the signer holds less of a bond currency than a bond
        │   │                    needs (names the token, the need and the shortfall)
        │   ├── NotWhitelisted   UMA's managed oracle would refuse our proposal: the
        │   │                    signer is off the request's proposer whitelist
        │   ├── AnswerRefused    a Reality.eth answer not sent: the question is not open
        │   │   │                now, or its bond is above the cap (names which)
        │   │   └── RevealMissed a commitment's reveal window passed: its bond is lost
        │   └── ArbitrationRefused  a Reality.eth arbitration request not sent: the
        │                        question moved on, or the fee is 0 or above the cap
        └── DeploymentError      a deployment file or contract artifact is unusable

Every message names what was wrong and never contains a secret: no private key,
password, keystore content, API key or URL credential (`oracle.core.urls.redact_url`).
Two exceptions live with the SDK they must pass through (`UnusableAnswer` in each model
provider subclasses that SDK's own error, so the SDK neither retries nor wraps it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class OracleError(Exception):
    """Base class for every error oracle raises deliberately."""


class ConfigError(OracleError):
    """The configuration is invalid; the message is one line per problem, `key.path: reason`."""


class SetupError(ConfigError):
    """The configuration is valid but does not work where it runs; `key` is the setting (or
    command-line option) to fix, `problem` what is wrong with it. Shown as `key: problem`,
    the key followed by the environment variable that set it, if one did
    (`oracle.config.config_key`)."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


class InputError(OracleError):
    """An input document is malformed; the message names the field and the problem."""


class AncillaryDataError(InputError):
    """UMA ancillary data that cannot be read exactly as a question (the message names the
    part and the byte offset: `ancillary data: res_data p2: appears twice (at offset 80)`),
    or a price the question does not offer, or UMA's too-early price where it is not
    allowed. Never quotes more of the data than a key."""


class RealityQuestionError(InputError):
    """A Reality.eth question that cannot be read exactly as one of the built-in templates
    (the message names the field: `reality question: outcomes: label 3 is empty`), or an
    answer it does not offer, or an answer encoding it cannot decode. Never quotes more of
    the question than a field name."""


class ProofError(OracleError):
    """A proof document cannot be parsed or lacks the fields needed to verify it."""


class JsonError(OracleError, ValueError):
    """Outside JSON that cannot be used: `not usable JSON (why)`, never quoting the input."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"not usable JSON ({reason})")


class JsonTooDeep(JsonError):
    """Arrays and objects nested deeper than the limit."""


class IllegalTransition(OracleError):
    """`event` is not allowed in `state` (both by value); the state is unchanged."""

    def __init__(self, state: str, event: str, allowed: list[str]) -> None:
        super().__init__(
            f"event {event!r} is not allowed in state {state!r}; "
            f"allowed: {', '.join(sorted(allowed)) or 'none (terminal)'}"
        )
        self.state = state
        self.event = event


class IllegalIntentTransition(OracleError):
    """`event` is not allowed in a transaction intent's `state` (both by value; "none":
    nothing recorded yet); the intent is unchanged. A bug, never a chain condition, so
    it is no `ChainError` that the transaction manager would log as a failed poll."""

    def __init__(self, state: str, event: str, allowed: list[str]) -> None:
        super().__init__(
            f"intent event {event!r} is not allowed in state {state!r}; "
            f"allowed: {', '.join(sorted(allowed)) or 'none (terminal)'}"
        )
        self.state = state
        self.event = event


class StoreError(OracleError):
    """A request the store cannot honour; the message says which record and why."""


class LeaseLost(StoreError):
    """Another replica holds (or took over) the market's lease."""


class StaleDecision(StoreError):
    """A review decision bound to evidence (consensus id, proof checksum) that newer
    research has replaced: the person must look again before deciding."""


class AccessDenied(OracleError):
    """A person could not be identified (bad password, token or session), or their role
    may not do what they asked; the message never repeats a secret."""


class SourceError(OracleError):
    """A market source could not be read; the message names the source."""


class ResolverError(OracleError):
    """An answer could not be delivered; `retryable` says whether trying later may help.
    The daemon hands a delivery that is not retryable to a person at once, and retries
    one that is with a growing delay, up to `daemon.max_attempts` (`oracle.core.failures`)."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class AwaitingOthers(ResolverError):
    """Nothing can be sent until someone else acts (the signer may not propose on a
    managed oracle's request: our verdict waits as a second opinion for a whitelisted
    proposer's). Not a failure a person must see: tried again with a growing delay, and at
    once when the venue's events show another's answer."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class AnswerLost(ResolverError):
    """An answer already paid for can no longer take effect (a Reality.eth commitment
    whose reveal window passed): never retried; the market goes to a person. `record`
    is what the market keeps of it (so a person's next decision answers over it)."""

    def __init__(self, message: str, record: dict[str, object]) -> None:
        super().__init__(message, retryable=False)
        self.record = record


class AgentError(OracleError):
    """An agent could not answer; the message is recorded as the agent's failure."""


class AnswerInvalid(AgentError):
    """The model's answer does not match the schema; the message names the field. The
    research loop shows it to the model and asks again."""


class ToolError(OracleError):
    """A search or page read failed; the message is safe to show to the model and to log.
    A tool error is shown to the model, which may try again; it never ends the run."""


class RateLimited(ToolError):
    """The service answered 429 and asked for more patience than the budget allows."""


class BlockedAddress(ToolError):
    """The URL leads to an address the agent may not fetch."""


class ModelError(OracleError):
    """The model's API failed; the message is safe to record."""


class ChainError(OracleError):
    """Base class for the chain layer's errors."""


class RpcError(ChainError):
    """A node failed, timed out or answered something unusable."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url


class ChainIdMismatch(RpcError):
    """A node reports a different chain id than the one configured (or than the others)."""

    def __init__(self, url: str, expected: int, actual: int) -> None:
        super().__init__(url, f"serves chain id {actual}, expected {expected}")
        self.expected = expected
        self.actual = actual


class RpcUnavailable(ChainError):
    """No node of the pool answered in time."""


class KeystoreError(ChainError):
    """A keystore file or its password cannot be read, or the password is wrong."""


class TxError(ChainError):
    """A transaction could not be built, sent or brought to a final state."""


class TxReverted(TxError):
    """The transaction (or its gas estimate) reverts; `error` is the decoded reason and
    `name` the custom error's name (`Error` for a string, `Panic`, `Unknown`, `Empty`)."""

    def __init__(self, key: str, error: str, name: str = "") -> None:
        super().__init__(f"{key}: reverts with {error}")
        self.key = key
        self.error = error
        self.name = name


class SubjectsHeld(TxError):
    """Another recorded intent (unfinished, or confirmed) acts on some of the subjects of
    the one being sent, so it must not be sent; `holders` maps each such subject to the
    key of the intent that holds it, `subjects` are all the subjects the one being sent
    names (by default: those held). Nothing was recorded or sent."""

    def __init__(
        self, key: str, holders: Mapping[str, str], subjects: Sequence[str] | None = None
    ) -> None:
        named = ", ".join(f"{s} by {k}" for s, k in sorted(holders.items()))
        super().__init__(f"{key}: already in another transaction: {named}")
        self.key = key
        self.holders = dict(holders)
        self.subjects = tuple(holders) if subjects is None else tuple(subjects)


class BondRefused(TxError):
    """The bond budget (`oracle.core.budget`) refused the bond an intent would post, when
    the intent was recorded: nothing was recorded, signed for good or sent. `reason` is
    the refusal's code (a metric label), `detail` its sentence."""

    def __init__(self, key: str, reason: str, detail: str) -> None:
        super().__init__(f"{key}: bond refused ({reason}): {detail}")
        self.key = key
        self.reason = reason
        self.detail = detail


class NotWhitelisted(TxError):
    """UMA's managed Optimistic Oracle V2 would refuse our proposal on a request
    (`ProposerNotWhitelisted()`): the signer is not on the request's effective proposer
    whitelist. Nothing was approved, signed or sent."""

    def __init__(self, key: str, signer: str, oracle: str, request: str) -> None:
        super().__init__(
            f"{key}: the signer {signer} is not on the proposer whitelist of request "
            f"{request} on the managed oracle {oracle} (ProposerNotWhitelisted): nothing sent"
        )
        self.key = key
        self.signer = signer
        self.oracle = oracle
        self.request = request


class BondShortfall(TxError):
    """The signer's balance of a bond currency is below what a bond (plus the final fee)
    needs; nothing was sent."""

    def __init__(self, key: str, token: str, needed: int, balance: int) -> None:
        super().__init__(
            f"{key}: the bond needs {needed} of token {token}; the signer holds {balance}, "
            f"{needed - balance} short"
        )
        self.key = key
        self.token = token
        self.needed = needed
        self.balance = balance
        self.shortfall = needed - balance


class DeploymentError(ChainError):
    """A deployment file or an exported contract artifact is missing or malformed."""


class AnswerRefused(TxError):
    """A Reality.eth answer the chain layer will not send, and did not: the question is not
    open now (not yet at its `opening_ts`, finalized or about to be, pending arbitration,
    never asked) or the bond it needs is above the cap. `question` is its id (hex),
    `reason` why."""

    def __init__(self, question: str, reason: str) -> None:
        super().__init__(f"reality question {question}: not answered: {reason}")
        self.question = question
        self.reason = reason


class ArbitrationRefused(TxError):
    """A Reality.eth arbitration request the chain layer will not send, and did not: the
    question is not open or moved on since it was decided, or its arbitrator's fee is 0
    (it does not arbitrate the question) or above the cap. `question` (hex), `reason`."""

    def __init__(self, question: str, reason: str) -> None:
        super().__init__(f"reality question {question}: arbitration not requested: {reason}")
        self.question = question
        self.reason = reason


class RevealMissed(AnswerRefused):
    """Our Reality.eth commitment can no longer be revealed: its reveal window (the
    question's timeout / 8 after the commitment) passed, so its bond is lost."""
