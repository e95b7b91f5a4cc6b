import time, sys
from gdl.reasoning.machine import load_machine
from gdl.reasoning import kernels
from agent.search.mcts import AgentSearch, AgentConfig, DEFAULT_ENHANCEMENTS
from agent.search.graph import GraphSearch
kernels.load()
for game in sys.argv[1:]:
    m = load_machine(f"/work/shared/gdl-corpus/repository/{game}.kif")
    chance = tuple(i for i, r in enumerate(m.roles) if r == "random")
    for cls in (AgentSearch, GraphSearch):
        cfg = AgentConfig(enhancements=DEFAULT_ENHANCEMENTS + ("graph",))
        s = cls(m, cfg, chance_roles=chance)
        s.search(m.initial_state(), deadline=time.monotonic()+2)
        t=time.process_time()
        r = s.search(m.initial_state(), deadline=time.monotonic()+4)
        cpu=time.process_time()-t
        print(game, cls.__name__, "playouts/s", round(r.playouts/cpu), "nodes", r.nodes, "value", r.value.round(1), flush=True)
