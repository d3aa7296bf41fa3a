"""The names of the main job's columns and figures, one spelling each for the terminal (`reso demo`,
`reso frontier`) and the documentation (`reso docs`, README.md and docs/results.md): what a run prints is
what the README says. Rows are named by the runs themselves (`reso.evals.reports.run_labels`).

`unit` is what one item of the runs is: a composite in the main job and its documentation, an item elsewhere.
"""

from __future__ import annotations

__all__ = ["ACCURACY", "BEST_SINGLE", "CAUSES", "COMPARISON_COLUMNS", "COST_VS_BEST", "GAP_CLOSED", "MEAN_GAIN",
           "METHOD", "QNC", "USD", "VS_BEST", "WORST_GAP", "frontier_columns"]

# The comparison table of one benchmark: every run against the best single model.
METHOD = "method"
ACCURACY = "accuracy [95 % CI]"
VS_BEST = "vs the best single model, points [95 % CI]"
USD = "USD"
COST_VS_BEST = "cost vs the best single model"
COMPARISON_COLUMNS = (METHOD, ACCURACY, VS_BEST, USD, COST_VS_BEST)
CAUSES = "won/lost vs the best single model: no recording · wrong answer"
"""The column splitting each run's gain by the loser's cause (the terminal's table has room for it)."""

# The frontier's figures (`reso.evals.reports.frontier`).
BEST_SINGLE = "best single model"
MEAN_GAIN = "mean gain over the single models' hull"
WORST_GAP = "worst gap"
QNC = "QNC"
GAP_CLOSED = "gap to the oracle closed at its cost"


def frontier_columns(unit: str = "item") -> tuple[str, ...]:
    """The frontier's budgets table: each budget, against the best single model's cost, and both hulls there."""
    return (f"budget, USD per {unit}", f"× the {BEST_SINGLE}'s cost", "single models' hull", "ReSo's hull",
            "gain, points")
