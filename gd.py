import time, numpy as np
from gdl.reasoning.machine import load_machine
from gdl.reasoning import kernels
from agent.search.mcts import AgentConfig, DEFAULT_ENHANCEMENTS
from agent.search.graph import GraphSearch
kernels.load()
m = load_machine("/work/shared/gdl-corpus/repository/connectFour.kif")
s = GraphSearch(m, AgentConfig(enhancements=DEFAULT_ENHANCEMENTS + ("graph",)))
for i in range(6):
    r = s.search(m.initial_state(), deadline=time.monotonic()+0.5)
    g=s.graph
    print(r.playouts, g.nodes, r.proven, r.value.round(1), g.terminal[:g.nodes].sum(), g.proven[:g.nodes].sum(), g.meta)
bad=0
for n in range(g.nodes):
    st=s.state_of(n)
    if bool(m.is_terminal(st)) != bool(g.terminal[n]): bad+=1
    elif g.terminal[n] and not np.allclose(np.array(m.goals(st))/100, g.value[n]): bad+=1
print("bad", bad)
