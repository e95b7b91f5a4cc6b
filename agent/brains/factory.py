"""The one place that picks a brain for a match (:func:`make_brain`)."""

from __future__ import annotations

from agent.brains.base import Brain
from agent.brains.gdl import GdlBrain
from agent.brains.gdl2 import Gdl2Brain
from agent.brains.options import BrainOptions, GameSpec
from agent.brains.playable import PlayableBrain
from agent.brains.switching import SwitchingGdlBrain
from agent.search import graph
from gdl.reasoning import kernels


def make_brain(spec: GameSpec, role: str, options: BrainOptions, until: float) -> Brain:
    """The brain of seat ``role`` in a match of ``spec``, built within ``until``: for
    GDL the GDL-II brain when the rules have ``sees``, else the GDL brain (which turns
    into the GDL-II one if the manager speaks GDL-II); for the other formats
    (``.efg``, tree, POSG) their equilibrium strategy."""
    if spec.format != "gdl":
        return PlayableBrain(spec, role, options)
    brain = GdlBrain(spec, role, options, until)
    if brain.machine.has_sees:
        return Gdl2Brain(brain.machine, brain.role, options)
    return SwitchingGdlBrain(brain)


def warm_up() -> None:
    """What a spare worker loads beside its loop, so no clock pays for it: the batched
    playouts' and the graph search's compiled kernels (0.65 s from numba's disk cache,
    10-30 s for the first compile after an installation; on a start clock only from
    ``KERNEL_CLOCK`` on, and never on a play clock)."""
    kernels.compiled(kernels.MIN_ITEMS)
    if graph.KERNELS.enabled:   # (numba absent, or GGP_NUMBA=0: nothing to load)
        graph.KERNELS.load()
