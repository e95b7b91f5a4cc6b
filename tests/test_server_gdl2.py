"""GDL-II matches under our server: each seat is told only its own move and percepts.

Every message a websocket seat receives is compared with the one it must get, rebuilt
from the match record (the true states, every role's moves and percepts): anything
more (another role's move or percepts, the state) would make the comparison fail.
A ggp-base style GGP HTTP player of GDL-II plays from the GDL-II PLAY/STOP messages
alone, tracking the states consistent with its own moves and percepts.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import GAMES, running_server
from test_server_support import GgpHttpTestPlayer, ScriptedAgent, kif_items

from gdl.formats import load_game
from server import ggp_http
from server.gdl2 import is_gdl2
from server.protocol import normalize_move
from server.records import Records, ggp_base_json

GDL2_GAMES = sorted((GAMES / "gdl2").glob("*.kif"))
SEEDS = range(4)


@pytest.fixture
async def server(tmp_path):
    async with running_server(tmp_path, grace=0.3, seat_wait=10) as srv:
        yield srv


def test_ggp_ii_play_and_stop_message_text() -> None:
    """The GDL-II forms of ``shared/protocols/ggp-ii.md``, in ggp-base's spacing."""
    assert ggp_http.play_message_ii("m1", 0, None, None) == "( PLAY m1 0 NIL NIL )"
    assert ggp_http.play_message_ii("m1", 3, "(mark 1 2)", ["(marked 1 2)", "(ok)"]) \
        == "( PLAY m1 3 (mark 1 2) ( (marked 1 2) (ok) ) )"
    assert ggp_http.play_message_ii("m1", 1, "noop", []) == "( PLAY m1 1 noop () )"
    assert ggp_http.stop_message_ii("m1", 4, "(bet 2)", ["(card red k)"]) \
        == "( STOP m1 4 (bet 2) ( (card red k) ) )"
    assert ggp_http.stop_message_ii("m1", 2, "wait", []) == "( STOP m1 2 wait () )"
    # the same list as the protocol page's example, up to spacing
    items = kif_items(ggp_http.play_message_ii("m1", 3, "(mark 1 2)", ["(marked 1 2)", "(ok)"]))
    assert items == kif_items("(PLAY m1 3 (mark 1 2) ((marked 1 2) (ok)))")
    assert kif_items(items[4]) == ["(marked 1 2)", "(ok)"]


def test_gdl2_games_exist() -> None:
    names = {path.stem for path in GDL2_GAMES}
    assert {"kuhn_poker", "monty_hall"} <= names, names
    for path in GDL2_GAMES:
        assert is_gdl2(load_game(path)), path


# --- what a seat must be sent, rebuilt from the record ---

def own_view(record: dict[str, Any], seat: int, turn: int) -> dict[str, Any]:
    """The GDL-II observation of ``seat`` after ``turn`` joint moves."""
    if turn == 0:
        return {"turn": 0, "last_move": None, "percepts": None}
    step = record["steps"][turn - 1]
    return {"turn": turn, "last_move": step["moves"][seat], "percepts": step["percepts"][seat]}


def true_legal(game: Any, record: dict[str, Any], seat: int, step: int) -> list[str]:
    """The seat's legal moves at ``step`` (from 1) in the recorded true state."""
    text = record["initial_state"] if step == 1 else record["steps"][step - 2]["state"]
    machine = game.machine
    state = machine.state_from_kif(kif_items(text))
    role = list(machine.roles).index(game.roles[seat])
    return [machine.move_to_kif(m) for m in machine.legal_moves(state, role)]


def check_seat_messages(game: Any, record: dict[str, Any], seat: int,
                        received: list[dict[str, Any]]) -> None:
    """Every message of this match sent to ``seat`` is exactly what GDL-II lets it see."""
    match, role = record["id"], game.roles[seat]
    sent = [m for m in received if m.get("match") == match]
    steps = len(record["steps"])
    kinds = [m["type"] for m in sent]
    assert kinds == ["offer"] + ["request", "step"] * steps + ["end"], kinds
    assert sent[0] == {"type": "offer", "match": match, "role": role, "roles": list(game.roles),
                       "game": game.description(), "startclock": record["startclock"],
                       "playclock": record["playclock"], "step": 0}
    for step in range(1, steps + 1):
        request, result = sent[2 * step - 1], sent[2 * step]
        assert set(request) == {"type", "match", "step", "role", "observation", "legal",
                                "deadline"}
        assert (request["step"], request["role"]) == (step, role)
        assert request["observation"] == own_view(record, seat, step - 1)
        assert request["legal"] == true_legal(game, record, seat, step)
        recorded = record["steps"][step - 1]
        assert result == {"type": "step", "match": match, "step": step, "role": role,
                          "move": recorded["moves"][seat], "error": recorded["errors"][seat],
                          "observation": own_view(record, seat, step)}
    payoffs = record["payoffs"]
    assert sent[-1] == {"type": "end", "match": match, "status": "completed",
                        "payoffs": payoffs, "payoff": payoffs[seat],
                        "observation": own_view(record, seat, steps)}


def info_history(messages: list[dict[str, Any]], upto: int) -> tuple:
    """A seat's information before its request of step ``upto``: its moves and percepts."""
    views = [m["observation"] for m in messages if m["type"] == "step" and m["step"] < upto]
    return tuple((v["last_move"], tuple(v["percepts"])) for v in views)


@pytest.mark.parametrize("path", GDL2_GAMES, ids=lambda p: p.stem)
async def test_ws_seat_sees_only_its_own_moves_and_percepts(server, path: Path) -> None:
    game = load_game(path)
    legal_by_info: dict[tuple, set[tuple[str, ...]]] = {}
    states_by_info: dict[tuple, set[str]] = {}
    for seed, seat in itertools.product(SEEDS, range(len(game.roles))):
        agent = await ScriptedAgent(server.url, f"a{seed}{seat}",
                                    policy=random_legal(seed)).start()
        players = ["random"] * len(game.roles)
        players[seat] = f"ws:a{seed}{seat}"
        outcome = await server.play_match(game, players, startclock=5, playclock=5, seed=seed)
        assert outcome.status == "completed", outcome.reason
        assert all(e == "" for errors in outcome.errors for e in errors), outcome.errors
        await asyncio.sleep(0.05)  # the end message is sent after the outcome is known
        record = server.records.get_match(outcome.match)
        check_seat_messages(game, record, seat, agent.received)
        percepts = [s["percepts"] for s in record["steps"]]
        assert percepts == outcome.percepts and all(len(p) == len(game.roles) for p in percepts)
        # a role's legal moves follow from what it knows (the request's `legal` leaks nothing)
        mine = [m for m in agent.received if m.get("match") == outcome.match]
        for request in (m for m in mine if m["type"] == "request"):
            key = (seat, info_history(mine, request["step"]))
            legal_by_info.setdefault(key, set()).add(tuple(request["legal"]))
            step = request["step"]
            states_by_info.setdefault(key, set()).add(
                record["steps"][step - 2]["state"] if step > 1 else record["initial_state"])
        await agent.stop()
    assert all(len(options) == 1 for options in legal_by_info.values())
    # the test is not idle: a seat knew the same while the true states differed
    assert any(len(states) > 1 for states in states_by_info.values())


def random_legal(seed: int):
    rng = random.Random(seed)
    return lambda message: rng.choice(message["legal"])


async def test_faults_tell_only_the_replacement(server) -> None:
    """An illegal answer and a silence: IL and TO, the seat is told the move played for
    it, and nothing else changes."""
    game = load_game(GAMES / "gdl2" / "monty_hall.kif")
    seat = 0
    answers = iter(["(bogus move)", None])

    def faulty(message: dict[str, Any]) -> Any:
        return next(answers, message["legal"][0])

    agent = await ScriptedAgent(server.url, "faulty", policy=faulty).start()
    players = ["random"] * len(game.roles)
    players[seat] = "ws:faulty"
    outcome = await server.play_match(game, players, startclock=2, playclock=0.5, seed=5)
    assert outcome.status == "completed", outcome.reason
    assert [errors[seat] for errors in outcome.errors[:2]] == ["IL (bogus move)", "TO"]
    await asyncio.sleep(0.05)
    check_seat_messages(game, server.records.get_match(outcome.match), seat, agent.received)
    await agent.stop()


def expected_ii_messages(record: dict[str, Any], seat: int) -> list[str]:
    """The GDL-II PLAY and STOP messages a GGP HTTP seat must get, written out by hand
    from the record (``shared/protocols/ggp-ii.md``)."""
    match, steps = record["id"], len(record["steps"])
    expected = [f"( PLAY {match} 0 NIL NIL )"]
    for turn, step in enumerate(record["steps"], start=1):
        seen = step["percepts"][seat]
        text = "( " + " ".join(seen) + " )" if seen else "()"
        kind = "STOP" if turn == steps else "PLAY"
        expected.append(f"( {kind} {match} {turn} {step['moves'][seat]} {text} )")
    return expected


class Gdl2HttpPlayer(GgpHttpTestPlayer):
    """A GGP HTTP player of GDL-II (ggp-base style): it keeps the set of states
    consistent with its own moves and percepts, and plays the first legal move (its
    legal moves must be the same in all of them: the rules let it know them)."""

    def __init__(self) -> None:
        super().__init__()
        self.belief: set[Any] = set()

    def reply(self, body: str) -> str:
        items = kif_items(body)
        kind = items[0].upper()
        if kind == "START":
            answer = super().reply(body)
            self.belief = {self.state}
            return answer
        if kind not in ("PLAY", "STOP"):
            return super().reply(body)
        self._observe(items[3], items[4])
        if kind == "STOP":
            return "done"
        options = {self.machine.legal_moves(s, self.role) for s in self.belief}
        assert len(options) == 1, options
        return self.machine.move_to_kif(options.pop()[0])

    def _observe(self, last: str, seen: str) -> None:
        if last.upper() == "NIL":
            assert seen.upper() == "NIL"
            return
        percepts = sorted(kif_items(seen)) if seen.upper() != "NIL" else []
        machine, after = self.machine, set()
        for state in self.belief:
            for joint in itertools.product(*machine.legal_joint_moves(state)):
                if machine.move_to_kif(joint[self.role]) != last:
                    continue
                told = machine.percepts(state, list(joint))[self.role]
                if sorted(normalize_move("gdl", p) for p in told) == percepts:
                    after.add(machine.next_state(state, list(joint)))
        assert after, f"no state explains {last} {seen}"
        self.belief = after


@pytest.mark.parametrize("path", GDL2_GAMES, ids=lambda p: p.stem)
async def test_ggp_http_player_gets_the_gdl2_messages(server, path: Path) -> None:
    game = load_game(path)
    for seat in range(len(game.roles)):
        http = Gdl2HttpPlayer()
        url = await http.start()
        players = ["random"] * len(game.roles)
        players[seat] = url
        outcome = await server.play_match(game, players, startclock=5, playclock=5, seed=seat)
        await http.close()
        assert outcome.status == "completed", outcome.reason
        assert all(e == "" for errors in outcome.errors for e in errors), outcome.errors
        record = server.records.get_match(outcome.match)
        steps = len(outcome.moves)
        assert [m.split()[1] for m in http.messages] == ["START"] + ["PLAY"] * steps + ["STOP"]
        assert http.messages[1:] == expected_ii_messages(record, seat)
        # the player found its own legal moves from the messages alone, and the record
        # still holds the true state for the organiser
        assert ggp_base_json(record)["percepts"] == [s["percepts"] for s in record["steps"]]


async def test_rejoin_history_is_the_seat_own_view(server) -> None:
    game = load_game(GAMES / "gdl2" / "kuhn_poker.kif")
    dropped = asyncio.Event()

    def drop_at_step_2(message: dict[str, Any]) -> Any:
        if message["step"] == 2:
            dropped.set()
            return None
        return message["legal"][0]

    agent = await ScriptedAgent(server.url, "dora", policy=drop_at_step_2).start()
    match = server.create_match(game, ["ws:dora", "random"], startclock=2, playclock=3, seed=4)
    await asyncio.wait_for(dropped.wait(), 10)
    await agent.stop()
    back = ScriptedAgent(server.url, "dora")
    back.task = asyncio.create_task(back.run({"type": "rejoin", "match": match.id,
                                              "token": agent.token}))
    outcome = await server.tasks[match.id]
    assert outcome.status == "completed", outcome.reason
    await asyncio.sleep(0.05)
    record = server.records.get_match(match.id)
    offer = back.of_type("offer")[0]
    assert offer["rejoin"] is True and offer["step"] == 2
    assert offer["history"] == [own_view(record, 0, 1)]
    assert back.of_type("request")[0]["observation"] == own_view(record, 0, 1)
    await back.stop()


async def test_a_game_failure_is_not_told_to_the_players(server, monkeypatch) -> None:
    """A rules error names the state: the record keeps it, the players get a plain reason."""
    game = load_game(GAMES / "gdl2" / "kuhn_poker.kif")
    real = game.is_terminal
    calls = {"n": 0}

    def failing(state: Any) -> bool:
        calls["n"] += 1
        if calls["n"] == 3:
            from solvers.errors import GameError

            facts = " ".join(game.machine.state_to_kif(state[0]))
            raise GameError(f"a rules error in the state {{{facts}}}")
        return real(state)

    monkeypatch.setattr(game, "is_terminal", failing)
    agent = await ScriptedAgent(server.url, "erin").start()
    outcome = await server.play_match(game, ["ws:erin", "random"], startclock=2, playclock=2,
                                      seed=1)
    assert outcome.status == "aborted" and "rules error in the state {" in outcome.reason
    await asyncio.sleep(0.05)
    told = agent.of_type("abort")[0]["reason"]
    assert told == "the game failed at step 2 (the reason is in the match record)"
    assert server.records.get_match(outcome.match)["reason"] == outcome.reason
    await agent.stop()


def test_old_databases_open_and_gain_the_percepts_column(tmp_path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE matches (id TEXT PRIMARY KEY, game TEXT NOT NULL, format TEXT NOT NULL,
            roles TEXT NOT NULL, players TEXT NOT NULL, seed INTEGER NOT NULL,
            startclock REAL NOT NULL, playclock REAL NOT NULL, tournament TEXT,
            status TEXT NOT NULL, reason TEXT, payoffs TEXT, initial_state TEXT,
            description TEXT, started REAL NOT NULL, finished REAL);
        CREATE TABLE steps (match TEXT NOT NULL, step INTEGER NOT NULL, moves TEXT NOT NULL,
            errors TEXT NOT NULL, state TEXT, time REAL NOT NULL, PRIMARY KEY (match, step));
        INSERT INTO matches VALUES ('g.1', 'g', 'gdl', '["a"]', '["random"]', 1, 1, 1, NULL,
            'completed', NULL, '[100]', '( (s 0) )', '{}', 0, 1);
        INSERT INTO steps VALUES ('g.1', 1, '["noop"]', '[""]', '( (s 1) )', 0.5);
    """)
    db.close()
    records = Records(path)
    try:
        record = records.get_match("g.1")
        assert record["steps"][0]["percepts"] is None
        assert "percepts" not in ggp_base_json(record)
        asyncio.run(records.add_step("g.1", 2, ["noop"], [""], "( (s 2) )", [["(saw 2)"]]))
        assert records.get_match("g.1")["steps"][1]["percepts"] == [["(saw 2)"]]
    finally:
        records.close()


async def test_random_without_sees_stays_plain_gdl(server) -> None:
    """Nature hides a coin, the guesser guesses: `random` without `sees` is plain GDL."""
    from test_gdl_playable import COIN

    from gdl.formats import load_game_text

    game = load_game_text("gdl", COIN, name="coin")
    assert not is_gdl2(game)
    agent = await ScriptedAgent(server.url, "gus").start()
    outcome = await server.play_match(game, ["ws:gus"], startclock=2, playclock=2, seed=2)
    assert outcome.status == "completed" and outcome.percepts == []
    first = agent.of_type("step")[0]["observation"]["last_moves"]
    # the joint move in role order, nature's hidden coin included, as GGP shows it
    assert first[1] == "noop" and first[0] in ("(hide heads)", "(hide tails)")
    assert server.records.get_match(outcome.match)["steps"][0]["percepts"] is None
    await agent.stop()


async def test_builtins_do_not_search_the_true_state_in_gdl2() -> None:
    from server.players.base import SeatInfo
    from server.players.builtin import SolverPlayer, UctPlayer
    from server.players.spec import parse_spec

    game = load_game(GAMES / "gdl2" / "kuhn_poker.kif")
    for player in (UctPlayer(parse_spec("uct")), SolverPlayer(parse_spec("solver"))):
        await player.start(SeatInfo("m", game, 0, 4.0, 1.0, 1))
        assert player.search is None  # uct plays uniformly at random
        assert getattr(player, "gdl", None) is None  # solver does not use the state's DAG


async def test_solver_builtin_plays_the_solved_strategy_at_its_information_sets(
        server) -> None:
    """``solver`` in Kuhn poker: every move it makes has positive probability in its
    solved strategy at the information set of its own recorded moves and percepts."""
    from gdl.gdl2.tree import infoset_name

    game = load_game(GAMES / "gdl2" / "kuhn_poker.kif")
    checked, pure = 0, False
    for seed in range(8):
        match = server.create_match(game, ["random", "solver"], startclock=4, playclock=1,
                                    seed=seed)
        outcome = await server.tasks[match.id]
        assert outcome.status == "completed" and not any(any(e) for e in outcome.errors)
        strategy = match.players[1].policy.table  # {infoset: {move: p}}
        assert strategy, "Kuhn poker is solved within the start clock"
        record = server.records.get_match(match.id)
        history: list[tuple[str, tuple[str, ...]]] = []
        for recorded in record["steps"]:
            at = strategy.get(infoset_name("second", history))
            if at is not None:  # a decision (more than one legal move)
                assert at[recorded["moves"][1]] > 0, (history, at)
                checked += 1
                pure |= min(at.values()) == 0.0
            history.append((recorded["moves"][1], tuple(recorded["percepts"][1])))
    assert checked >= 8 and pure


def test_the_organiser_view_shows_every_role_percepts(tmp_path) -> None:
    from server.live import record_text as _show_text

    record = {"id": "k.1", "game": "kuhn_poker", "format": "gdl", "seed": 1, "startclock": 1.0,
              "playclock": 1.0, "roles": ["first", "second"], "players": ["a", "b"],
              "tournament": None, "status": "completed", "payoffs": [75.0, 25.0],
              "reason": None,
              "steps": [{"moves": ["noop", "noop"], "errors": ["", ""],
                         "percepts": [["(your_card king)"], ["(your_card jack)"]]},
                        {"moves": ["bet", "noop"], "errors": ["", "TO"],
                         "percepts": [["(did first bet)"], []]}]}
    assert _show_text(record).splitlines()[2:] == [
        "step 1: first noop | second noop",
        "  sees: first (your_card king) | second (your_card jack)",
        "step 2: first bet | second noop [TO]",
        "  sees: first (did first bet) | second -",
        "result: first=75 second=25"]


async def test_nature_is_drawn_from_the_match_seed(server) -> None:
    """The server plays `random` from the match's chance generator: a seed replays the
    deal, and different seeds deal differently."""
    game = load_game(GAMES / "gdl2" / "kuhn_poker.kif")

    async def deal(seed: int) -> tuple[str, list[list[str]]]:
        outcome = await server.play_match(game, ["first", "first"], startclock=1,
                                          playclock=1, seed=seed)
        record = server.records.get_match(outcome.match)
        return record["steps"][0]["state"], record["steps"][0]["percepts"]

    first = await deal(7)
    assert await deal(7) == first
    deals = {(await deal(seed))[0] for seed in range(12)}
    assert len(deals) >= 3  # 6 deals of 3 cards: 12 seeds show several


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_for_http_player(port: int) -> None:
    from server.players.http import HttpPlayer
    from server.players.spec import parse_spec

    player = HttpPlayer(parse_spec(f"http://127.0.0.1:{port}"))
    for _ in range(200):
        try:
            await player._send(ggp_http.info_message())
            return
        except Exception:
            await asyncio.sleep(0.1)
    raise AssertionError(f"no GGP HTTP player on port {port}")


@pytest.mark.slow
@pytest.mark.parametrize("path", GDL2_GAMES, ids=lambda p: p.stem)
async def test_our_agent_plays_gdl2_over_both_protocols(server, path: Path,
                                                       monkeypatch) -> None:
    """Our agent against random on every games/gdl2 game, launched as a websocket
    agent and as ``ggp agent --http``: no faults, and everything the server sent it
    (recorded at the server's side) is exactly its own view."""
    import sys

    from server.connections import Connection
    from server.players.http import HttpPlayer

    sent_ws: list[dict[str, Any]] = []
    sent_http: list[str] = []
    ws_send, http_send = Connection.send, HttpPlayer._send

    async def record_ws(self: Connection, message: dict[str, Any]) -> bool:
        sent_ws.append(message)
        return await ws_send(self, message)

    async def record_http(self: HttpPlayer, body: str) -> str:
        sent_http.append(body)
        return await http_send(self, body)

    monkeypatch.setattr(Connection, "send", record_ws)
    monkeypatch.setattr(HttpPlayer, "_send", record_http)
    game = load_game(path)
    others = ["random"] * (len(game.roles) - 1)
    outcome = await server.play_match(game, ["agent", *others], startclock=5, playclock=1,
                                      seed=3)
    assert outcome.status == "completed", outcome.reason
    assert all(e == "" for errors in outcome.errors for e in errors), outcome.errors
    await asyncio.sleep(0.05)
    check_seat_messages(game, server.records.get_match(outcome.match), 0, sent_ws)

    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ggp_cli", "agent", "--http", str(port), "--name", "ours",
        "--quiet")
    try:
        await wait_for_http_player(port)
        outcome = await server.play_match(game, [f"http://127.0.0.1:{port}", *others],
                                          startclock=5, playclock=1, seed=4)
    finally:
        process.terminate()
        await process.wait()
    assert outcome.status == "completed", outcome.reason
    assert all(e == "" for errors in outcome.errors for e in errors), outcome.errors
    bodies = [b for b in sent_http if outcome.match in b]
    assert bodies[0].startswith(f"( START {outcome.match} {game.roles[0]} ")
    assert bodies[1:] == expected_ii_messages(server.records.get_match(outcome.match), 0)
