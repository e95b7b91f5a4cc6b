"""A player for a seat, from its spec (the server passes itself for ws/agent seats)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.players.base import Player
from server.players.builtin import make_builtin
from server.players.spec import BUILTINS, PlayerSpec

if TYPE_CHECKING:
    from server.app import MatchServer


def make_player(spec: PlayerSpec, server: MatchServer) -> Player:
    if spec.kind in BUILTINS:
        return make_builtin(spec)
    if spec.kind == "http":
        from server.players.http import HttpPlayer

        return HttpPlayer(spec)
    if spec.kind == "ws":
        from server.players.websocket import WsSeat

        return WsSeat(spec, server.lobby, spec.option_float("wait", server.seat_wait))
    from server.players.launched import LaunchedAgent

    return LaunchedAgent(spec, server)
