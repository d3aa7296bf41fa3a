"""The error of a scorer configuration that cannot be built, `ScorerConfigError`.

The registry (`registry.py`, specs and mappings) and the blend reader (`blend.py`, YAML files) both raise
it, and the registry builds blends, so it sits below both of them.
"""

from __future__ import annotations

__all__ = ["ScorerConfigError"]


class ScorerConfigError(ValueError):
    """A scorer spec or blend configuration that cannot be built; the message says where and why."""
