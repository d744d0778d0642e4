"""Exceptions raised by oracle.

The tree::

    OracleError                  base of everything oracle raises on purpose
    ├── ConfigError              a configuration value is invalid (names the key path)
    │   └── SetupError           a valid value that does not work: an unreachable database,
    │                            a node on another chain, a busy port (names the key)
    ├── InputError               a document given to oracle is malformed (names the field)
    └── ProofError               a proof document cannot be read or checked

Every message names what was wrong and never contains a secret.
"""

from __future__ import annotations


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


class ProofError(OracleError):
    """A proof document cannot be parsed or lacks the fields needed to verify it."""
