"""Player specs: the command-line names of players (a contract shared with the agent).

Forms (``docs/server.md``): ``random``, ``first``, ``uct``, ``solver`` (built-ins),
``http://HOST:PORT`` (a GGP HTTP player), ``ws:NAME`` (a websocket agent that says
hello with that name), ``agent`` / ``agent:NAME`` (our agent, launched by the server).
Any spec may carry options after ``?``: ``uct?playouts=1000&seed=3``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

from solvers.errors import GameError

BUILTINS = ("random", "first", "uct", "solver")
KINDS = BUILTINS + ("http", "ws", "agent")
_NAME = re.compile(r"[A-Za-z0-9_.:@-]{1,64}")
MAX_SECONDS = 86400.0  # the bound of every time option, as of the clocks
# numeric options: (lowest, highest, whole numbers only)
NUMBERS = {"wait": (0.0, MAX_SECONDS, False), "delay": (0.0, MAX_SECONDS, False),
           "margin": (0.0, MAX_SECONDS, False), "playouts": (0.0, 1e9, True)}


@dataclass(frozen=True)
class PlayerSpec:
    kind: str  # one of KINDS
    target: str = ""  # the URL (http), the agent name (ws, agent)
    options: dict[str, str] = field(default_factory=dict)
    text: str = ""  # the spec as written

    def option_int(self, name: str, default: int) -> int:
        return int(self.option_float(name, default))

    def option_float(self, name: str, default: float) -> float:
        """A numeric option (checked by :func:`parse_spec` against ``NUMBERS``)."""
        value = self.options.get(name)
        return default if value is None else _number(self, name, value)


def _number(spec: PlayerSpec, name: str, value: str) -> float:
    """An option's number, within its bounds: every number in a spec is bounded (a spec
    may come from a remote message)."""
    low, high, whole = NUMBERS[name]
    try:
        number = float(value)
    except ValueError:
        raise GameError(f"player {spec.text!r}: option {name}={value[:40]!r} is not a number") \
            from None
    if not low <= number <= high or (whole and number != int(number)):  # also NaN
        kind = "a whole number" if whole else "a number"
        raise GameError(f"player {spec.text!r}: option {name} must be {kind} in "
                        f"[{low:g}, {high:g}]")
    return number


def _checked(spec: PlayerSpec) -> PlayerSpec:
    for name, value in spec.options.items():
        if name in NUMBERS:
            _number(spec, name, value)
    return spec


def parse_spec(text: str) -> PlayerSpec:
    """One player spec -> :class:`PlayerSpec` (:class:`GameError` when malformed)."""
    if text.startswith(("http://", "https://")):
        url = urlsplit(text)
        if url.scheme != "http" or not url.hostname or url.path not in ("", "/"):
            raise GameError(f"player {text!r}: a GGP HTTP player is http://HOST:PORT")
        try:
            url.port  # noqa: B018 - validates the port
        except ValueError:
            raise GameError(f"player {text!r}: bad port") from None
        return PlayerSpec("http", f"http://{url.netloc}", dict(parse_qsl(url.query)), text)
    head, _, query = text.partition("?")
    try:
        options = dict(parse_qsl(query, strict_parsing=bool(query)))
    except ValueError:
        raise GameError(f"player {text!r}: options are KEY=VALUE&KEY=VALUE after '?'") from None
    kind, _, name = head.partition(":")
    if kind in BUILTINS and not name:
        return _checked(PlayerSpec(kind, "", options, text))
    if kind in ("ws", "agent") and (name or kind == "agent"):
        if name and not _NAME.fullmatch(name):
            raise GameError(f"player {text!r}: a name is 1-64 of A-Z a-z 0-9 _ . : @ -")
        return _checked(PlayerSpec(kind, name, options, text))
    raise GameError(f"unknown player {text!r} (random, first, uct, solver, http://HOST:PORT, "
                    "ws:NAME, agent, agent:NAME; options after '?')")


def ws_names(specs: list[str]) -> list[str]:
    """The agent names of the ``ws:NAME`` seats among ``specs``."""
    return [spec.target for spec in map(parse_spec, specs) if spec.kind == "ws"]
