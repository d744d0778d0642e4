"""Exceptions raised by oracle.

The tree::

    OracleError                  base of everything oracle raises on purpose
    ├── ConfigError              a configuration value is invalid (names the key path)
    ├── InputError               a document given to oracle is malformed (names the field)
    └── ProofError               a proof document cannot be read or checked

Every message names what was wrong and never contains a secret.
"""

from __future__ import annotations


class OracleError(Exception):
    """Base class for every error oracle raises deliberately."""


class ConfigError(OracleError):
    """The configuration is invalid; the message is one line per problem, `key.path: reason`."""


class InputError(OracleError):
    """An input document is malformed; the message names the field and the problem."""


class ProofError(OracleError):
    """A proof document cannot be parsed or lacks the fields needed to verify it."""
