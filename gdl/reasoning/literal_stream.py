"""The encoding of a rule network's literal stream, shared by its builder
(:mod:`gdl.reasoning.playout_net`) and the kernels that read it
(:mod:`gdl.reasoning.playout_kernels`).

An entry is a uint64: bits 0-28 the row read, bit 29 negated, bit 30 the last
literal of its body, bit 31 the last body of its head, bits 32-63 the head's row.
"""

ROW_BITS = 29
