import time, numpy as np
from gdl.reasoning.machine import load_machine
from gdl.reasoning import kernels
from agent.search.mcts import AgentConfig, DEFAULT_ENHANCEMENTS
from agent.search.graph import GraphSearch
kernels.load()
m = load_machine("/work/shared/gdl-corpus/repository/connectFour.kif")
s = GraphSearch(m, AgentConfig(enhancements=DEFAULT_ENHANCEMENTS + ("graph",), max_nodes=20000))
root=m.initial_state()
r = s.search(root, playouts=15000); g=s.graph
print("before", g.nodes, g.meta, r.value)
n0 = s.node_of(root)
keep = __import__("agent.search.graph_kernels", fromlist=["x"]).reachable(n0, g.nodes, g.terminal, g.size, g.child_base, g.child)
print("reachable", keep.sum(), "root", n0)
new = g.compact(n0)
print("after compact", g.nodes, g.meta, "root", new, s.node_of(root), g.count[new], g.terminal[new], g.proven[new])
r = s.search(root, playouts=2000)
print("search after", r.playouts, g.nodes, r.value, r.proven)
