"""The kinds of method an evaluation compares, by the part of a method's name before its first colon.

Apart from `reso.evals.methods` (which builds the methods) so that reports can name the kinds without loading
the engine.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["MethodKind"]


class MethodKind(StrEnum):
    """What a method is (the part of its name before the first colon; see the module docstring)."""

    RESO = "reso"
    RANDOM = "random"
    ORACLE = "oracle"
    SINGLE = "single"
    COT_SC = "cot-sc"
    VOTE = "vote"
    CASCADE = "cascade"

    @property
    def reads_dadb(self) -> bool:
        """Whether the method's answers depend on what the DADB learned (the others answer alike whatever)."""
        return self in (MethodKind.RESO, MethodKind.VOTE)
