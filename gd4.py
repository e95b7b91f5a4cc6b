import time, numpy as np
from gdl.reasoning.machine import load_machine
from gdl.reasoning import kernels
from agent.search.mcts import AgentConfig, DEFAULT_ENHANCEMENTS, AgentSearch
from agent.search.graph import GraphSearch
kernels.load()
m = load_machine("/work/shared/gdl-corpus/repository/connectFour.kif")
cfg=AgentConfig(enhancements=DEFAULT_ENHANCEMENTS + ("graph",))
a = AgentSearch(m, cfg); a.search(m.initial_state(), deadline=time.monotonic()+1)
s = GraphSearch(m, cfg)
root=m.initial_state()
r = s.search(root, deadline=time.monotonic()+1); g=s.graph
print("first", r.playouts, g.nodes, g.meta, r.value, r.proven)
n=g.nodes
bad=0
for k in range(min(n,3000)):
    st=s.state_of(k)
    if bool(m.is_terminal(st)) != bool(g.terminal[k]): bad+=1
print("bad", bad)
