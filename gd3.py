import time, numpy as np
from gdl.reasoning.machine import load_machine
from gdl.reasoning import kernels
from agent.search.mcts import AgentConfig, DEFAULT_ENHANCEMENTS
from agent.search.graph import GraphSearch
kernels.load()
m = load_machine("/work/shared/gdl-corpus/repository/connectFour.kif")
s = GraphSearch(m, AgentConfig(enhancements=DEFAULT_ENHANCEMENTS + ("graph",)))
root=m.initial_state()
r = s.search(root, deadline=time.monotonic()+3); g=s.graph
print("first", r.playouts, g.nodes, g.meta, r.value, r.proven)
n0 = s.node_of(root); print("root node", n0, g.capacity)
r = s.search(root, deadline=time.monotonic()+2)
print("second", r.playouts, g.nodes, g.meta, r.value, r.proven)
