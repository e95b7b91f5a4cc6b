"""A player for a seat, from its spec (the server seating it is the host of ws/agent seats)."""

from __future__ import annotations

from server.players.base import Player, SeatHost
from server.players.builtin import make_builtin
from server.players.http import HttpPlayer
from server.players.launched import LaunchedAgent
from server.players.spec import BUILTINS, PlayerSpec
from server.players.websocket import WsSeat


def make_player(spec: PlayerSpec, host: SeatHost) -> Player:
    if spec.kind in BUILTINS:
        return make_builtin(spec)
    if spec.kind == "http":
        return HttpPlayer(spec)
    if spec.kind == "ws":
        return WsSeat(spec, host.lobby, spec.option_float("wait", host.seat_wait))
    return LaunchedAgent(spec, host)
