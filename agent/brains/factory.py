"""The one place that picks a brain for a match (:func:`make_brain`)."""

from __future__ import annotations

from agent.brains.base import Brain
from agent.brains.gdl import GdlBrain
from agent.brains.gdl2 import Gdl2Brain
from agent.brains.options import BrainOptions, GameSpec
from agent.brains.playable import PlayableBrain
from agent.brains.switching import SwitchingGdlBrain


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
