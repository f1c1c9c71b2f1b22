"""The one exception tree of aieval.

Every error aieval raises on purpose derives from :class:`AievalError`. Errors a user can fix
(a bad file, a bad field, a missing key) are :class:`UserError` subclasses: their message names the
file, row or field and says what to do, and the CLI prints it without a traceback.

::

    AievalError
    ├── UserError
    │   ├── ConfigError            bad configuration or argument to a public function (a ValueError)
    │   │   └── IncompatibleDatasetError  rows lack a workflow's required inputs
    │   ├── DatasetError           unreadable dataset, bad row, duplicate id (names row / line)
    │   ├── RubricError            invalid rubric or profile file (names file, criterion, field)
    │   ├── WorkflowError          invalid workflow definition or run log (names file, field)
    │   ├── RunNotFoundError       no stored run with that id or name
    │   ├── RunInProgressError     resuming a run a live process is still running
    │   ├── ConversationError      an invalid conversation record (names scenario, turn, field)
    │   │   └── ReplayMissError    a replayed turn the record lacks (names scenario and turn)
    │   ├── ReviewError            a review queue refused a request (names queue, item, reviewer)
    │   └── FilterError            an online rule's filter could not judge a trace (names rule, key)
    │       └── FilterTimeout      its regex ran past the time limit on an attribute value
    ├── ScorerError                a scorer raised or returned something outside 0..1
    ├── FormulaError               a normalization formula got a value it cannot normalize
    ├── ProviderError              a model call failed
    │   ├── ProviderNotFoundError  unknown provider name (also a UserError)
    │   ├── ProviderAuthError      401/403: bad or missing API key (also a UserError)
    │   ├── RateLimitError         429 (retryable; carries ``retry_after``)
    │   ├── ProviderServerError    5xx (retryable)
    │   ├── ProviderTimeoutError   no answer in time (retryable)
    │   ├── ProviderConnectionError connection refused or reset (retryable)
    │   ├── ProviderHTTPError      any other 4xx (not retried)
    │   ├── ProviderRequestError   a request that cannot be encoded as given (not sent)
    │   ├── BudgetExhausted        an online rule's spend limit refused the call (not sent)
    │   └── ProviderResponseError  a body that is not a valid completion
    ├── StoreError                 the SQLite store cannot be read or written
    │   └── UnstorableSampleError  a sample holds a value the store cannot keep (not a failure)
    ├── PushError                  a run could not be copied to another store or server (names it)
    ├── GitHubError                the GitHub API refused or failed a request (names the call)
    ├── SandboxError               the code sandbox itself failed (not the code it runs)
    └── McpError                   an MCP server under test did not start, answer or list
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AievalError",
    "BudgetExhausted",
    "ConfigError",
    "ConversationError",
    "DatasetError",
    "FilterError",
    "FilterTimeout",
    "FormulaError",
    "GitHubError",
    "IncompatibleDatasetError",
    "McpError",
    "ProviderAuthError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderNotFoundError",
    "ProviderRequestError",
    "ProviderResponseError",
    "ProviderServerError",
    "ProviderTimeoutError",
    "PushError",
    "RateLimitError",
    "ReplayMissError",
    "ReviewError",
    "RubricError",
    "RunInProgressError",
    "RunNotFoundError",
    "SandboxError",
    "ScorerError",
    "StoreError",
    "UnstorableSampleError",
    "UntrustedStoreError",
    "UserError",
    "WorkflowError",
]


class AievalError(Exception):
    """Base class of every error aieval raises on purpose.

    Every one survives pickling (a worker process or Ray sends it back) with its message and
    attributes: it is rebuilt from them, never by calling ``__init__`` again, whose arguments
    (``ReplayMissError``'s scenario and turn, keyword-only ones) differ from the message.
    """

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuilt, (type(self), self.args, dict(self.__dict__))


def _rebuilt(cls: type[AievalError], args: tuple[Any, ...], state: dict[str, Any]) -> AievalError:
    """An unpickled error: its class, message (``args``) and attributes, as they were."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class UserError(AievalError):
    """An error the user can fix; the message says where and how."""


class ConfigError(UserError, ValueError):
    """An invalid eval configuration or argument (a ``ValueError`` too, as Python's own bad
    arguments are)."""


class IncompatibleDatasetError(ConfigError):
    """A dataset whose rows lack inputs the workflow requires (found before any sample runs).

    Attributes:
        missing_inputs: the missing input names (``"valid <input>"`` for enum violations).
        rows: for each missing input, the ids of the rows that lack it.
    """

    def __init__(self, message: str, *, missing_inputs: dict[str, list[str]]):
        super().__init__(message)
        self.missing_inputs = list(missing_inputs)
        self.rows = dict(missing_inputs)


class DatasetError(UserError):
    """A dataset that cannot be read, or a row that is not a valid example.

    Attributes:
        source: the file (or ``"<rows>"`` for in-memory rows) the error is in.
        line: 1-based line (JSONL) or row number (CSV, list), when known.
    """

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        in_memory = source is None or source.startswith("<")
        where = ""
        if line is not None:
            where = f"row {line}: " if in_memory else f"{source}, line {line}: "
        elif not in_memory:
            where = f"{source}: "
        super().__init__(where + message)
        self.source = source
        self.line = line


class RubricError(UserError):
    """An invalid rubric or profile file."""


class WorkflowError(UserError):
    """An invalid workflow definition or workflow run log."""


class RunNotFoundError(UserError):
    """No stored run matches the given id or name."""


class RunInProgressError(UserError):
    """A run cannot be resumed: a live process is still running it.

    Resuming it would run its samples a second time, at once. Wait for that process to
    finish, or stop it (a run whose process is gone reads as ``interrupted`` and resumes).

    Attributes:
        run_id: the run.
        pid / host: the process recorded as running it, when known.
        heartbeat_age_s: seconds since that process last said it was alive, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        run_id: str,
        pid: int | None = None,
        host: str | None = None,
        heartbeat_age_s: float | None = None,
    ):
        super().__init__(message)
        self.run_id = run_id
        self.pid = pid
        self.host = host
        self.heartbeat_age_s = heartbeat_age_s


class ScorerError(AievalError):
    """A scorer raised, or returned a value that is not a number in 0..1."""


class FormulaError(AievalError):
    """A normalization formula cannot normalize the value it was given."""


class ProviderError(AievalError):
    """A model call failed.

    Attributes:
        retryable: whether retrying the same request may succeed.
        status: the HTTP status, when there was one.
        retries: failed attempts retried before this final error (set by the retry layer).
    """

    retryable: bool = False
    retries: int = 0

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status


class ProviderNotFoundError(ProviderError, UserError):
    """No provider is registered under that name."""


class ProviderAuthError(ProviderError, UserError):
    """The provider refused the credentials (401/403)."""


class RateLimitError(ProviderError):
    """The provider answered 429; ``retry_after`` is its Retry-After in seconds, if given."""

    retryable = True

    def __init__(self, message: str, *, status: int | None = 429, retry_after: float | None = None):
        super().__init__(message, status=status)
        self.retry_after = retry_after


class ProviderServerError(ProviderError):
    """The provider answered 5xx."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    """The provider did not answer in time."""

    retryable = True


class ProviderConnectionError(ProviderError):
    """The connection to the provider failed."""

    retryable = True


class ProviderHTTPError(ProviderError):
    """The provider answered a 4xx that retrying will not fix."""


class ProviderRequestError(ProviderError):
    """The request cannot be encoded as given, so it was not sent (retrying will not help)."""


class ProviderResponseError(ProviderError):
    """The provider's body is not a valid completion."""


class BudgetExhausted(ProviderError):
    """The call gate refused a model call: the online rule's spend limit for this hour or day
    is reached, so the call was never sent (not retried: the limit holds until the period
    ends). A :class:`ProviderError`, so whatever handles a failed call handles it; the gate
    also counts it, so a scorer that swallows it cannot hide it (docs/online.md, "Budgets")."""


class StoreError(AievalError):
    """The run store (SQLite or PostgreSQL) cannot be opened, read or written."""


class UnstorableSampleError(StoreError):
    """A sample holds a value the store cannot keep (an integer beyond its signed 64 bits).

    Not a failure of the store: the run stores that sample as an error and goes on.
    """


class UntrustedStoreError(StoreError, UserError):
    """A store someone else made (``--baseline-db``) that aieval refuses to read: not a file,
    not one aieval wrote, or holding values aieval never writes. The CLI exits 2 (a bad input),
    never 1, which ``compare`` and ``github`` keep for a blocked candidate."""


class PushError(AievalError):
    """A run could not be copied to the target store or server (``aieval push``).

    The message names the run and the cause. The target holds none of the failed attempt (each
    run is written in one transaction); runs pushed before it stay pushed.

    Attributes:
        run_id: the run that could not be pushed.
        changed_since: the target's copy of the run changed between the comparison and the
            write (another writer): comparing again may find the copies the same.
        forbidden: the writer may not write that run there (a server's upload token that did
            not create it).
    """

    def __init__(
        self, message: str, *, run_id: str, changed_since: bool = False, forbidden: bool = False
    ) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.changed_since = changed_since
        self.forbidden = forbidden


class GitHubError(AievalError):
    """The GitHub REST API refused or failed a request of ``aieval github``; the message names
    the call, the status and GitHub's own message (and, for 403/404, the permission needed)."""


class SandboxError(AievalError):
    """The code sandbox failed before the code it was given ran (bubblewrap, the interpreter
    or the command could not start); the message names the cause."""


class ConversationError(UserError):
    """An invalid conversation record: the message names the scenario, the turn and the field."""


class ReplayMissError(ConversationError):
    """A replay needed a turn the recorded conversation does not hold (or holds otherwise).

    The conversation fails closed: nothing is asked live in its place.

    Attributes:
        scenario_id: the scenario being replayed.
        turn: the 1-based position of the missing turn in the conversation.
    """

    def __init__(
        self, scenario_id: str, turn: int, reason: str, *, mode: str | None = None
    ) -> None:
        # branch mode is advised unless it is the mode that missed
        advice = "" if mode == "branch" else ", or replay in branch mode"
        super().__init__(
            f"scenario {scenario_id!r}, turn {turn}: {reason}; the replay stops here (nothing "
            f"is asked live in its place): record the conversation again{advice}"
        )
        self.scenario_id = scenario_id
        self.turn = turn


class McpError(AievalError):
    """An MCP server under test could not be started, reached or listed, or a call to it
    hung (past its timeout) or lost the server: the message names the server and the cause.
    During a run it fails the sample it happened in, never the run."""


class ReviewError(UserError):
    """A review queue refused a request: an unknown queue, an item the reviewer no longer
    holds, a second label by the same reviewer, a label file naming unknown samples. The
    message names the queue, item or line and the reviewer."""


class FilterError(UserError):
    """An online rule's filter could not decide whether a trace matches (a value too long for
    its regex, or a regex past its time limit): the message names the rule and the attribute,
    and the trace is recorded as that rule's ``error``, never as a match or a miss.

    Attributes:
        rule: the rule's name.
        key: the attribute the condition reads.
    """

    def __init__(self, message: str, *, rule: str = "", key: str = ""):
        super().__init__(message)
        self.rule = rule
        self.key = key


class FilterTimeout(FilterError):
    """An online rule's regex ran past its time limit on a trace's attribute value."""
