import time, numpy as np
from gdl.reasoning.machine import load_machine
from gdl.reasoning import kernels
from agent.search.mcts import AgentConfig, DEFAULT_ENHANCEMENTS
from agent.search.graph import GraphSearch
kernels.load()
m = load_machine("/work/shared/gdl-corpus/repository/connectFour.kif")
s = GraphSearch(m, AgentConfig(enhancements=DEFAULT_ENHANCEMENTS + ("graph",)))
root=m.initial_state()
r = s.search(root, deadline=time.monotonic()+2); g=s.graph
print("first", r.playouts, g.nodes, g.meta, r.value, r.proven, g.count[:3], g.terminal[:3], g.proven[:3], g.value[:3], g.size[:3])
print([s.state_of(i)==root for i in range(g.nodes)], m.is_terminal(s.state_of(1)))
r = s.search(root, deadline=time.monotonic()+4)
print("second", r.playouts, g.nodes, g.meta, r.value, r.proven, g.count[:3], g.terminal[:3], g.proven[:3], g.value[:3], g.size[:3], g.child[:10])
print(m.is_terminal(s.state_of(1)), m.state_to_kif(s.state_of(1)))
