"""The pages: the index, one match (live or replayed), one tournament, errors.

Each function takes plain data (a spectator ``watching`` message, records rows) and
returns a whole HTML page (``html.py`` escapes every value). The match page shows the
state without JavaScript; ``static/match.js`` then keeps it live over the spectator
subscription, drawing the same markup (the hooks ``body[data-status]``, ``#board``
``.cell``, ``#log`` ``.step`` and ``#scores`` are the same either way).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from server.web.html import cell_text, colour_class, esc, number, page, table, tag, void, when

FINISHED = ("completed", "aborted")


def body_status(status: str) -> str:
    """The ``data-status`` hook: running | finished | aborted."""
    return {"completed": "finished", "aborted": "aborted"}.get(status, "running")


def match_href(match_id: str) -> str:
    return "/matches/" + quote(match_id, safe="")


def tournament_href(tid: str) -> str:
    return "/tournaments/" + quote(tid, safe="")


# --- state views ---

def render_view(view: dict[str, Any]) -> str:
    """A state view (``server/web/board.py``) as the content of ``#board``."""
    kind = view.get("kind")
    if kind == "gdl":
        parts = []
        if view.get("grid"):
            parts.append(render_grid(view["grid"]))
        if view.get("facts"):
            parts.append(tag("ul", "".join(tag("li", esc(f)) for f in view["facts"]),
                             class_="facts"))
        return "".join(parts) or tag("p", "(no facts hold)", class_="note")
    if kind == "tree":
        path = "".join(tag("li", tag("span", esc(actor), class_="actor") + " " + esc(action))
                       for actor, action in view.get("path", []))
        return (tag("ol", path or tag("li", "(the root)", class_="note"), class_="path")
                + tag("p", "node " + tag("b", esc(view.get("node"))) + (
                    f", {esc(view['to_move'])} to move" if view.get("to_move") else "")))
    if kind == "posg":
        fields = [("step", view.get("step")), ("state", view.get("state")),
                  ("partition", view.get("partition")),
                  ("last actions", " / ".join(map(str, view.get("last_actions") or [])) or "–"),
                  ("observation", view.get("observation") or "–"),
                  ("reward so far (P1)", number(view.get("reward"), 4))]
        return tag("dl", "".join(tag("dt", esc(k)) + tag("dd", esc(v)) for k, v in fields),
                   class_="posg")
    return tag("pre", esc(view.get("text", "")), class_="state")


def render_grid(grid: dict[str, Any]) -> str:
    head = tag("tr", tag("th", "") + "".join(tag("th", esc(c)) for c in grid["columns"]))
    rows = []
    for label, cells in zip(grid["rows"], grid["cells"], strict=True):
        tds = "".join(tag("td", esc(cell_text(text)),
                          class_=f"cell {colour_class(text)}".strip())
                      for text in cells)
        rows.append(tag("tr", tag("th", esc(label)) + tds))
    return tag("table", tag("thead", head) + tag("tbody", "".join(rows)), class_="grid",
               data_relation=grid["relation"])


# --- the match page ---

def render_step(entry: dict[str, Any], n_roles: int) -> str:
    """One ``.step`` row of the move log."""
    cells = [tag("td", esc(entry["step"]), class_="n")]
    for r in range(n_roles):
        move, error = entry["moves"][r], entry["errors"][r]
        time_s = entry["times"][r] if entry.get("times") else None
        text = tag("span", esc("–" if move is None else move), class_="move")
        if time_s is not None:
            text += " " + tag("span", esc(f"{time_s:.2f}s"), class_="time")
        if error:
            text += " " + tag("span", esc(error), class_="fault", title=_fault_title(error))
        cells.append(tag("td", text))
    return tag("tr", "".join(cells), class_="step", data_step=entry["step"])


def _fault_title(error: str) -> str:
    code = error.split(" ", 1)[0]
    return {"TO": "timeout: the server played a random legal move",
            "CE": "connection error: the server played a random legal move",
            "IL": "illegal move: the server played a random legal move"}.get(code, error)


def render_scores(w: dict[str, Any]) -> str:
    if w["status"] == "completed" and w.get("payoffs") is not None:
        best = max(w["payoffs"])
        rows = [[esc(role), esc(player), tag("b", esc(number(p))) if p == best
                 else esc(number(p))]
                for role, player, p in zip(w["roles"], w["players"], w["payoffs"], strict=True)]
        note = tag("p", esc(w["reason"]), class_="note") if w.get("reason") else ""
        return table(["role", "player", "score"], rows) + note
    if w["status"] == "aborted":
        return tag("p", "aborted: " + esc(w.get("reason") or "no reason recorded"),
                   class_="aborted")
    return tag("p", "the match is running", class_="note")


def clock_text(clock: dict[str, Any] | None, status: str) -> str:
    if status in FINISHED or clock is None:
        return "" if status in FINISHED else "waiting"
    what = "start clock" if clock["step"] == 0 else f"step {clock['step']}"
    return f"{what}: {clock['deadline']:.1f} s left ({', '.join(clock['acting'])})"


def match_page(w: dict[str, Any], view: dict[str, Any], shown: int) -> str:
    """A match (a ``watching`` message) with the state after step ``shown``."""
    status, n_roles = w["status"], len(w["roles"])
    title = f"{w['game']['name']} match"
    tournament = (tag("a", esc(w["tournament"]), href=tournament_href(w["tournament"]))
                  if w.get("tournament") else "–")
    summary = tag("dl", "".join(tag("dt", esc(k)) + tag("dd", v) for k, v in [
        ("match", esc(w["match"])),
        ("game", esc(f"{w['game']['name']} ({w['game']['format']})")),
        ("status", tag("span", esc(status), id="status")),
        ("step", tag("span", esc(w["step"]), id="step")),
        ("tournament", tournament),
        ("started", esc(when(w.get("started")))),
        ("clocks", esc(f"start {number(w['startclock'])} s, play {number(w['playclock'])} s")),
    ]), class_="summary")
    clock = w.get("clock")
    players = table(["role", "player"],
                    [[esc(role), esc(player)] for role, player in
                     zip(w["roles"], w["players"], strict=True)], id="players")
    clock_p = tag("p", esc(clock_text(clock, status)), id="clock",
                  data_deadline=None if clock is None else clock["deadline"],
                  data_step=None if clock is None else clock["step"],
                  data_acting=None if clock is None else ", ".join(clock["acting"]))
    board_title = "board" if shown == w["step"] else f"board after step {shown}"
    board = tag("section", tag("h2", esc(board_title), id="board-title")
                + tag("div", render_view(view), id="board"), class_="board")
    replay = ""
    if status in FINISHED and w["step"] > 0:
        replay = tag("form", tag("label", "step " + void(
            "input", type="range", name="step", min="0", max=w["step"], value=shown,
            id="step-slider") + " " + tag("output", esc(shown), id="step-shown"),
            for_="step-slider")
            + " " + tag("button", "show", type="submit"),
            id="replay", method="get", action=match_href(w["match"]))
    log = table(["step"] + list(w["roles"]), id="log",
                body="".join(render_step(entry, n_roles) for entry in w["history"]))
    scores = tag("section", tag("h2", "scores") + tag("div", render_scores(w), id="scores"))
    body = (tag("div", summary + tag("section", tag("h2", "players") + players + clock_p),
                class_="top")
            + board + replay + tag("section", tag("h2", "moves") + log, class_="moves")
            + scores)
    return page(title, body, status=body_status(status), script="match.js",
                data={"match": w["match"], "format": w["game"]["format"],
                      "shown": str(shown), "steps": str(w["step"])})


# --- the index ---

def index_page(running: Sequence[dict[str, Any]], recent: Sequence[dict[str, Any]],
               tournaments: Sequence[dict[str, Any]]) -> str:
    def match_row(m: dict[str, Any]) -> list[str]:
        payoffs = " / ".join(number(p) for p in m["payoffs"]) if m.get("payoffs") else "–"
        return [tag("a", esc(m["id"]), href=match_href(m["id"])), esc(m["game"]),
                esc(", ".join(m["players"])), esc(m["status"]), esc(payoffs),
                esc(when(m.get("started")))]

    headers = ["match", "game", "players", "status", "payoffs", "started"]
    parts = [tag("h2", "running matches"),
             table(headers, [match_row(m) for m in running], id="running")
             if running else tag("p", "none", class_="note"),
             tag("h2", "recent matches"),
             table(headers, [match_row(m) for m in recent], id="recent")
             if recent else tag("p", "none recorded yet", class_="note"),
             tag("h2", "tournaments")]
    if tournaments:
        parts.append(table(["tournament", "games", "players", "status", "matches", "started"], [
            [tag("a", esc(t["id"]), href=tournament_href(t["id"])),
             esc(", ".join(t["config"].get("games", []))),
             esc(", ".join(t["config"].get("players", []))), esc(t["status"]),
             esc(t["matches"]), esc(when(t.get("started")))] for t in tournaments],
            id="tournaments"))
    else:
        parts.append(tag("p", "none recorded yet", class_="note"))
    return page("matches", "".join(parts), refresh=10 if running else None)


# --- the tournament page ---

def tournament_page(t: dict[str, Any], standings: Sequence[dict[str, Any]],
                    head_to_head: dict[str, dict[str, list[int]]], progress: dict[str, int],
                    matches: Sequence[dict[str, Any]]) -> str:
    config = t["config"]
    total = progress.get("scheduled")
    done = progress["completed"] + progress["aborted"]
    bar = tag("progress", esc(f"{done}/{total or '?'}"), max=total or max(1, done),
              value=done, id="progress")
    facts = tag("dl", "".join(tag("dt", esc(k)) + tag("dd", esc(v)) for k, v in [
        ("tournament", t["id"]), ("status", t["status"]),
        ("games", ", ".join(config.get("games", []))),
        ("players", ", ".join(config.get("players", []))),
        ("rounds", config.get("rounds")), ("swap roles", config.get("swap_roles")),
        ("clocks", f"start {config.get('startclock')} s, play {config.get('playclock')} s"),
        ("seed", config.get("seed")), ("started", when(t.get("started"))),
        ("finished", when(t.get("finished"))),
    ]), class_="summary")
    progress_p = tag("p", bar + " " + esc(
        f"{done} of {total if total is not None else '?'} matches finished "
        f"({progress['completed']} completed, {progress['aborted']} aborted), "
        f"{progress['running']} running"), class_="progress")
    overall = [s for s in standings if s["game"] == "overall"]
    per_game = [s for s in standings if s["game"] != "overall"]
    parts = [facts, progress_p, tag("h2", "standings"),
             standings_table(overall, "standings") if overall
             else tag("p", "no match has finished yet", class_="note")]
    names = list(head_to_head)
    if names:
        rows = [[esc(a)] + [esc("–" if a == b else "{}-{}-{}".format(*head_to_head[a][b]))
                            for b in names] for a in names]
        parts += [tag("h2", "head to head"),
                  tag("p", "wins-draws-losses of the row's player against the column's, "
                      "by payoff in the matches they met", class_="note"),
                  table(["player"] + names, rows, id="head-to-head")]
    if per_game:
        parts += [tag("h2", "per game"), standings_table(per_game, "per-game")]
    parts += [tag("h2", "matches"), table(
        ["match", "game", "players", "status", "payoffs"],
        [[tag("a", esc(m["id"]), href=match_href(m["id"])), esc(m["game"]),
          esc(", ".join(m["players"])), esc(m["status"]),
          esc(" / ".join(number(p) for p in m["payoffs"]) if m.get("payoffs") else "–")]
         for m in matches], id="matches")]
    running = t["status"] == "running"
    return page(f"tournament {t['id']}", "".join(parts),
                status="running" if running else body_status(t["status"]),
                refresh=5 if running else None)


def standings_table(rows: Sequence[dict[str, Any]], table_id: str) -> str:
    def ci(s: dict[str, Any]) -> str:
        if s.get("mean") is None or s.get("ci95") is None:
            return "–"  # undefined: too few matches
        low = s.get("ci95_low", s["mean"] - s["ci95"])  # (clipped to the payoff range)
        high = s.get("ci95_high", s["mean"] + s["ci95"])
        return f"{low:.2f} .. {high:.2f}"

    return table(["player", "game", "matches", "mean", "±95%", "95% CI", "W", "D", "L",
                  "aborted"],
                 [[esc(s["player"]), esc(s["game"]), esc(s["matches"]),
                   esc(number(s["mean"])), esc(number(s["ci95"])), esc(ci(s)),
                   esc(s["wins"]), esc(s["draws"]), esc(s["losses"]), esc(s["aborted"])]
                  for s in rows], id=table_id, class_="standings")


def error_page(status: int, message: str) -> str:
    return page(f"{status}", tag("h1", esc(f"{status}")) + tag("p", esc(message)),
                status="error")
