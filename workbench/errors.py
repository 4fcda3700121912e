"""Errors a user can cause. The CLI prints them as one line and exits with status 2.

Bugs are not WorkbenchErrors: they still raise with a traceback.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """A problem the user can fix: the message names the cause, the hint names the fix."""

    exit_status = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message} ({self.hint})"
        return self.message


class ConfigError(WorkbenchError):
    """A workload file, property or flag is wrong."""


class BindingError(WorkbenchError):
    """A database binding cannot be set up (unknown name, cannot connect, ...)."""


class ClusterError(WorkbenchError):
    """A server cluster cannot be started, found or stopped."""
