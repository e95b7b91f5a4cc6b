import time, numpy as np
from gdl.reasoning.machine import load_machine
from gdl.reasoning import kernels
from agent.search.mcts import AgentConfig, DEFAULT_ENHANCEMENTS
from agent.search.graph import GraphSearch
kernels.load()
m = load_machine("/work/shared/gdl-corpus/repository/connectFour.kif")
s = GraphSearch(m, AgentConfig(enhancements=DEFAULT_ENHANCEMENTS + ("graph",), max_nodes=40000))
root=m.initial_state()
r = s.search(root, playouts=40000); g=s.graph
print("first", r.playouts, g.nodes, g.meta, len(g.slot_move), len(g.child))
r = s.search(root, playouts=1000)
print("second", r.playouts, g.nodes, g.meta, r.value, r.proven)
