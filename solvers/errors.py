"""Errors as values with context.

Every bad-input error in the project derives from :class:`GameError`. It carries the
place (file, line, column) where the format has one; the command line turns it into
one line ``file:line:col: message`` and a non-zero exit, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Location:
    """Where in an input something went wrong (any part may be unknown)."""

    file: str | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.file or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class GameError(Exception):
    """A clear, user-facing error about a game, a file, a message or a limit."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        return f"{self.location}: {self.message}"


class FormatError(GameError):
    """A file or message does not follow its format (syntax or structure)."""


class ValidationError(GameError):
    """A well-formed input describes an invalid game; may carry several problems."""

    def __init__(self, message: str, problems: list[GameError] | None = None,
                 location: Location | None = None) -> None:
        super().__init__(message, location)
        self.problems = problems or []


class GameRuntimeError(GameError):
    """An ill-defined situation met while playing (no legal move, bad goals...)."""


class LimitReached(GameError):
    """A node, time or memory budget was reached; ``partial`` may hold a partial result."""

    def __init__(self, message: str, partial: object | None = None) -> None:
        super().__init__(message)
        self.partial = partial


class UnsupportedGame(GameError):
    """The game is valid but outside what this solver handles (e.g. 3+ roles)."""
