"""The one error of model loading, `ModelLoadError`, apart from the loaders that raise it.

The loader (`loader.py`) and the local loader it dispatches to (`local.py`) both raise it, so it sits below
both of them.
"""

from __future__ import annotations

__all__ = ["ModelLoadError"]


class ModelLoadError(ValueError):
    """A model spec cannot be turned into a chat model; the message names the spec and the cause."""
