import time
from agent.search import graph_kernels as k
print("warm", k.warm_up())
from gdl.reasoning.machine import load_machine
from gdl.reasoning import kernels
from agent.search.mcts import AgentConfig, DEFAULT_ENHANCEMENTS
from agent.search.graph import GraphSearch
kernels.load()
m = load_machine("/work/shared/gdl-corpus/repository/connectFour.kif")
s = GraphSearch(m, AgentConfig(enhancements=DEFAULT_ENHANCEMENTS + ("graph",)))
t=time.time(); r = s.search(m.initial_state(), deadline=time.monotonic()+1); print("first search", r.playouts, time.time()-t)
