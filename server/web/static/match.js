// The live match page: keeps the server-rendered page up to date over the spectator
// subscription (server/PROTOCOL.md, "Spectators"), and replays a finished match with
// the step slider. Everything from the server is set as text (textContent), never as
// markup. The markup built here is the one server/web/pages.py renders.
"use strict";

(function () {
  const body = document.body;
  const matchId = body.dataset.match;
  const BLANKS = new Set(["", "b", "blank", "empty", "e", "0", "none", "nil", "dirt"]);
  const FAULTS = { TO: "timeout", CE: "connection error", IL: "illegal move" };
  let roles = [];
  let steps = Number(body.dataset.steps || 0);
  let deadlineAt = null;
  let clockInfo = null;
  let replayViews = null;
  let retries = 0;
  window.ggpDelays = []; // seconds from a step's last answer to this page (for benches)

  function el(name, text, cls) {
    const node = document.createElement(name);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  // as server/web/html.py: x and o, the usual two marks, red and blue
  const COLOUR_WORDS = { red: "v0", yellow: "v1", green: "v2", purple: "v3", black: "v4",
                         orange: "v5", blue: "v6", pink: "v7", white: "vw", x: "v0", o: "v6" };

  function colourClass(text) {
    const word = text.trim().toLowerCase();
    if (BLANKS.has(word)) return "";
    if (Object.hasOwn(COLOUR_WORDS, word)) return COLOUR_WORDS[word];
    let code = 0;
    for (const ch of text) code = (code * 31 + ch.codePointAt(0)) % 1000003;
    return "v" + (code % 8);
  }

  function num(x) {
    if (x === null || x === undefined) return "–";
    return Number.isInteger(x) ? String(x) : x.toFixed(2);
  }

  // --- the board ---
  function renderGrid(grid) {
    const table = el("table", null, "grid");
    table.dataset.relation = grid.relation;
    const head = el("tr");
    head.appendChild(el("th", ""));
    grid.columns.forEach((c) => head.appendChild(el("th", c)));
    table.appendChild(el("thead")).appendChild(head);
    const tbody = table.appendChild(el("tbody"));
    grid.rows.forEach((label, r) => {
      const tr = tbody.appendChild(el("tr"));
      tr.appendChild(el("th", label));
      grid.cells[r].forEach((text) => {
        const blank = BLANKS.has(text.trim().toLowerCase()); // a blank shows nothing
        tr.appendChild(el("td", blank ? "" : text, ("cell " + colourClass(text)).trim()));
      });
    });
    return table;
  }

  function renderView(view) {
    const out = document.createDocumentFragment();
    if (view.kind === "gdl") {
      if (view.grid) out.appendChild(renderGrid(view.grid));
      if (view.facts && view.facts.length) {
        const ul = el("ul", null, "facts");
        view.facts.forEach((f) => ul.appendChild(el("li", f)));
        out.appendChild(ul);
      }
      if (!out.childNodes.length) out.appendChild(el("p", "(no facts hold)", "note"));
    } else if (view.kind === "tree") {
      const ol = el("ol", null, "path");
      (view.path || []).forEach(([actor, action]) => {
        const li = ol.appendChild(el("li"));
        li.appendChild(el("span", actor, "actor"));
        li.appendChild(document.createTextNode(" " + action));
      });
      if (!ol.childNodes.length) ol.appendChild(el("li", "(the root)", "note"));
      out.appendChild(ol);
      const p = el("p", "node ");
      p.appendChild(el("b", view.node));
      if (view.to_move) p.appendChild(document.createTextNode(", " + view.to_move + " to move"));
      out.appendChild(p);
    } else if (view.kind === "posg") {
      const dl = el("dl", null, "posg");
      [["step", view.step], ["state", view.state], ["partition", view.partition],
       ["last actions", (view.last_actions || []).join(" / ") || "–"],
       ["observation", view.observation || "–"],
       ["reward so far (P1)", view.reward]].forEach(([k, v]) => {
        dl.appendChild(el("dt", k));
        dl.appendChild(el("dd", v));
      });
      out.appendChild(dl);
    } else {
      out.appendChild(el("pre", view.text || "", "state"));
    }
    return out;
  }

  function showBoard(view, title) {
    const board = document.getElementById("board");
    board.replaceChildren(renderView(view));
    const h = document.getElementById("board-title");
    if (h) h.textContent = title;
  }

  // --- the log ---
  function stepRow(entry) {
    const tr = el("tr", null, "step");
    tr.dataset.step = entry.step;
    tr.appendChild(el("td", entry.step, "n"));
    roles.forEach((_, r) => {
      const td = tr.appendChild(el("td"));
      const move = entry.moves[r];
      td.appendChild(el("span", move === null ? "–" : move, "move"));
      const t = entry.times ? entry.times[r] : null;
      if (t !== null && t !== undefined) {
        td.appendChild(document.createTextNode(" "));
        td.appendChild(el("span", t.toFixed(2) + "s", "time"));
      }
      const error = entry.errors[r];
      if (error) {
        td.appendChild(document.createTextNode(" "));
        const f = td.appendChild(el("span", error, "fault"));
        f.title = (FAULTS[error.split(" ")[0]] || error) + ": the server played a random legal move";
      }
    });
    return tr;
  }

  function addStep(entry) {
    const tbody = document.querySelector("#log tbody");
    if (tbody.querySelector('tr.step[data-step="' + entry.step + '"]')) return;
    tbody.appendChild(stepRow(entry));
    const box = tbody.closest(".moves");
    if (box) box.scrollTop = box.scrollHeight;
  }

  // --- status, clock, scores ---
  function setStatus(status) {
    body.dataset.status = status === "completed" ? "finished"
      : status === "aborted" ? "aborted" : "running";
    const s = document.getElementById("status");
    if (s) s.textContent = status;
  }

  function setSteps(n) {
    steps = n;
    body.dataset.steps = String(n);
    const s = document.getElementById("step");
    if (s) s.textContent = String(n);
  }

  function setClock(clock) {
    clockInfo = clock;
    deadlineAt = clock ? Date.now() + 1000 * clock.deadline : null;
    tick();
  }

  function tick() {
    const p = document.getElementById("clock");
    if (!p) return;
    if (!clockInfo || body.dataset.status !== "running") {
      p.textContent = body.dataset.status === "running" ? "waiting" : "";
      return;
    }
    const left = Math.max(0, (deadlineAt - Date.now()) / 1000);
    const what = clockInfo.step === 0 ? "start clock" : "step " + clockInfo.step;
    p.textContent = what + ": " + left.toFixed(1) + " s left (" + clockInfo.acting.join(", ") + ")";
  }

  function renderScores(w) {
    const box = document.getElementById("scores");
    box.replaceChildren();
    if (w.status === "completed" && w.payoffs) {
      const best = Math.max(...w.payoffs);
      const table = box.appendChild(el("table"));
      const head = table.appendChild(el("thead")).appendChild(el("tr"));
      ["role", "player", "score"].forEach((h) => head.appendChild(el("th", h)));
      const tbody = table.appendChild(el("tbody"));
      w.roles.forEach((role, r) => {
        const tr = tbody.appendChild(el("tr"));
        tr.appendChild(el("td", role));
        tr.appendChild(el("td", w.players[r]));
        const td = tr.appendChild(el("td"));
        if (w.payoffs[r] === best) td.appendChild(el("b", num(w.payoffs[r])));
        else td.textContent = num(w.payoffs[r]);
      });
      if (w.reason) box.appendChild(el("p", w.reason, "note"));
    } else if (w.status === "aborted") {
      box.appendChild(el("p", "aborted: " + (w.reason || "no reason recorded"), "aborted"));
    } else {
      box.appendChild(el("p", "the match is running", "note"));
    }
  }

  // --- the replay slider (finished matches) ---
  async function replayTo(k) {
    if (!replayViews) {
      const answer = await fetch("/api/matches/" + encodeURIComponent(matchId));
      if (!answer.ok) return;
      replayViews = (await answer.json()).views;
    }
    const view = replayViews[Math.min(k, replayViews.length - 1)];
    showBoard(view, k === steps ? "board" : "board after step " + k);
    const out = document.getElementById("step-shown");
    if (out) out.textContent = String(k);
    document.querySelectorAll("#log tr.step").forEach((tr) => {
      tr.classList.toggle("shown", Number(tr.dataset.step) === k);
    });
  }

  function setUpReplay() {
    let form = document.getElementById("replay");
    if (!form && steps > 0) {  // the match ended while this page was open
      form = el("form");
      form.id = "replay";
      const label = form.appendChild(el("label", "step "));
      const input = label.appendChild(el("input"));
      Object.assign(input, { type: "range", name: "step", min: 0, max: steps, value: steps,
                             id: "step-slider" });
      label.appendChild(document.createTextNode(" "));
      label.appendChild(el("output", steps)).id = "step-shown";
      document.querySelector("section.board").after(form);
    }
    if (!form) return;
    const button = form.querySelector("button");
    if (button) button.hidden = true;
    form.addEventListener("submit", (e) => e.preventDefault());
    const slider = document.getElementById("step-slider");
    slider.addEventListener("input", () => replayTo(Number(slider.value)));
  }

  // --- the live subscription ---
  function onMessage(message) {
    if (message.match !== matchId) return;
    if (message.type === "watching") {
      roles = message.roles;
      setStatus(message.status);
      setSteps(message.step);
      document.querySelector("#log tbody").replaceChildren();
      message.history.forEach(addStep);
      showBoard(message.view, "board");
      setClock(message.clock);
      renderScores(message);
      if (message.status === "completed" || message.status === "aborted") setUpReplay();
    } else if (message.type === "clock") {
      if (message.step > 0) setStatus("running");
      setClock(message);
    } else if (message.type === "played") {
      setStatus("running");
      addStep(message);
      setSteps(message.step);
      showBoard(message.view, "board");
      window.ggpDelays.push(Date.now() / 1000 - message.at);
      if (window.ggpDelays.length > 10000) window.ggpDelays.shift();
    } else if (message.type === "ended") {
      if (message.history) {  // a hidden-information match shows what it held back
        document.querySelector("#log tbody").replaceChildren();
        message.history.forEach(addStep);
        showBoard(message.view, "board");
      }
      setStatus(message.status);
      setClock(null);
      renderScores({ status: message.status, payoffs: message.payoffs, reason: message.reason,
                     roles: roles, players: Array.from(document.querySelectorAll(
                       "#players tbody tr td:nth-child(2)")).map((td) => td.textContent) });
      setUpReplay();
    }
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    const ws = new WebSocket(scheme + location.host + "/");
    ws.onopen = () => {
      retries = 0;
      ws.send(JSON.stringify({ type: "watch", match: matchId }));
    };
    ws.onmessage = (event) => onMessage(JSON.parse(event.data));
    ws.onclose = () => {
      if (body.dataset.status === "running" && retries < 30) {
        retries += 1;
        setTimeout(connect, Math.min(5000, 200 * 2 ** retries));
      }
    };
  }

  roles = Array.from(document.querySelectorAll("#log thead th")).slice(1)
    .map((th) => th.textContent);
  const p = document.getElementById("clock");
  if (p && p.dataset.deadline) {
    setClock({ step: Number(p.dataset.step), deadline: Number(p.dataset.deadline),
               acting: (p.dataset.acting || "").split(", ") });
  }
  setInterval(tick, 100);
  if (body.dataset.status === "running") connect();
  else setUpReplay();
})();
