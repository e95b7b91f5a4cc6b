"""Recorded matches as ggp-base match JSON that ggp.org-style viewers render.

:func:`server.records.ggp_base_json` writes the fields of ggp-base's ``Match.toJSON``
from a record; this adds what a viewer needs to show a match without fetching
anything: the rules (``gameRulesheet``, the game file's text, and its SHA-1 as
``gameRulesheetHash``), the game's format, the seed as a number, every step's answer
times, and readable states. GDL states are recorded as ggp-base writes them, the KIF
list of the state's facts. An ``.efg``/tree state is recorded as a node number, which
says nothing outside this program: the export gives the node's label instead (its
name in the file, or, for an unnamed node, the actions from the root as
``/ACTOR:ACTION/...``). A POSG state becomes its state's name.

Records written before the rules were stored have no ``gameRulesheet``, and keep
their states as recorded.
"""

from __future__ import annotations

import ast
from typing import Any

from gdl.formats import load_game_text
from server.records import Records, ggp_base_json
from server.web.board import posg_view, tree_view
from solvers.errors import GameError
from solvers.playable import PlayableGame


def export_match(records: Records, match_id: str) -> dict[str, Any]:
    """One recorded match as extended ggp-base match JSON (see the module docstring)."""
    record = records.get_match(match_id)
    out = ggp_base_json(record)
    out["randomSeed"] = record["seed"]
    out["gameFormat"] = record["format"]
    out["isPlayerHuman"] = [False] * len(record["roles"])
    out["answerTimes"] = [step.get("times") for step in record["steps"]]
    rules = records.game_rules(record.get("game_hash"))
    if rules is not None:
        out["gameRulesheet"] = rules["text"]
        out["gameRulesheetHash"] = record["game_hash"]
        if record["format"] != "gdl":
            game = load_game_text(rules["format"], rules["text"], name=rules["name"])
            out["states"] = [state_label(game, text) for text in out["states"]]
    return out


def export_tournament(records: Records, tournament: str) -> list[dict[str, Any]]:
    """Every recorded match of a tournament, in the order they started."""
    records.get_tournament(tournament)  # a clear error when there is no such tournament
    rows = records.list_matches(tournament, limit=-1)
    return [export_match(records, row["id"]) for row in reversed(rows)]


def state_label(game: PlayableGame, text: str | None) -> str | None:
    """A recorded non-GDL state as a readable label (the text itself if it is not one
    of the game's states)."""
    if text is None:
        return None
    try:
        state = ast.literal_eval(text)  # a node number, or a POSG state tuple (no code runs)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    model = getattr(game, "game", None)
    if game.format in ("efg", "tree") and model is not None and isinstance(state, int) \
            and 0 <= state < model.num_nodes:
        view = tree_view(model, state, list(game.roles))
        name = model.node_names[state]
        return name or "/" + "/".join(f"{actor}:{action}" for actor, action in view["path"])
    if game.format == "posg" and isinstance(state, tuple):
        try:
            return str(posg_view(game, state)["state"])
        except (GameError, IndexError, TypeError, ValueError):
            return text
    return text
