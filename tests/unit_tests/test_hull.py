"""The accuracy–cost hull and the frontier's figures on hand-made points (`reso.evals.reports.hull`)."""

from __future__ import annotations

import math

import pytest

from reso.evals.reports.hull import budgets_below, figures, upper_hull


def test_the_upper_hull_keeps_the_concave_majorant_from_the_cheapest_to_the_most_accurate_point():
    # (0.5, 0.3) lies under the segment from (0, 0.1) to (1, 0.9); (3, 0.85) costs more for less; (2, 0.9) ties
    # the top at a higher cost; (1, 0.5) is beaten at the same cost.
    hull = upper_hull([0.0, 0.5, 1.0, 1.0, 2.0, 3.0], [0.1, 0.3, 0.9, 0.5, 0.9, 0.85])
    assert hull.costs == (0.0, 1.0) and hull.accuracies == (0.1, 0.9)


def test_a_hull_is_read_between_its_vertices_is_flat_after_them_and_zero_before():
    hull = upper_hull([1.0, 2.0, 4.0], [0.2, 0.6, 0.7])
    assert hull.costs == (1.0, 2.0, 4.0)
    assert hull.at(0.99) == 0.0  # below the cheapest run nothing is reached
    assert hull.at(1.0) == pytest.approx(0.2)
    assert hull.at(1.5) == pytest.approx(0.4)
    assert hull.at(3.0) == pytest.approx(0.65)
    assert hull.at(100.0) == pytest.approx(0.7)
    assert hull.first_reaching(0.2) == pytest.approx(1.0)
    assert hull.first_reaching(0.5) == pytest.approx(1.75)
    assert hull.first_reaching(0.7) == pytest.approx(4.0)
    assert hull.first_reaching(0.71) is None


def test_a_point_under_the_chord_is_left_out_and_one_above_it_kept():
    assert upper_hull([1, 2, 3], [0.2, 0.3, 0.6]).costs == (1.0, 3.0)  # 0.3 < the chord's 0.4
    assert upper_hull([1, 2, 3], [0.2, 0.5, 0.6]).costs == (1.0, 2.0, 3.0)


def test_an_empty_set_reaches_nothing_and_mismatched_lists_are_refused():
    assert upper_hull([], []).at(1.0) == 0.0 and upper_hull([], []).first_reaching(0.0) is None
    with pytest.raises(ValueError, match="2 costs for 1 accuracies"):
        upper_hull([1.0, 2.0], [0.5])


def test_budgets_span_a_decade_below_the_best_model_log_spaced():
    budgets = budgets_below(2.0)
    assert len(budgets) == 9 and budgets[0] == pytest.approx(0.2) and budgets[-1] == pytest.approx(2.0)
    ratios = [b / a for a, b in zip(budgets, budgets[1:])]
    assert all(r == pytest.approx(10 ** 0.125) for r in ratios)
    assert budgets_below(0.0) == []


def test_the_figures_of_a_router_against_the_single_models():
    # Single models: a cheap one (cost 1, 10 %) and the best (cost 10, 70 %); their hull is the chord.
    singles = upper_hull([1.0, 10.0], [0.1, 0.7])
    # The router: 40 % at cost 2 and 75 % at cost 8.
    router = upper_hull([2.0, 8.0], [0.4, 0.75])
    found = figures(router, singles, best_cost=10.0, best_accuracy=0.7, oracle_accuracy=0.9)
    expected = []
    for b in found.budgets:
        single = 0.1 + 0.6 * (b - 1.0) / 9.0 if b >= 1.0 else 0.0
        reso = 0.0 if b < 2.0 else 0.4 + 0.35 * (b - 2.0) / 6.0 if b <= 8.0 else 0.75
        expected.append(reso - single)
    assert found.gains == pytest.approx(expected)
    assert found.mean_gain == pytest.approx(sum(expected) / 9)
    # The router cannot go as cheap as $2: it counts 0 below, and its worst gap is the last budget there.
    assert found.worst_budget == pytest.approx(10 ** 0.25) and found.worst_gap == pytest.approx(
        -(0.1 + 0.6 * (10 ** 0.25 - 1.0) / 9.0))
    # 70 % first reached on the segment from (2, 0.4) to (8, 0.75): 2 + 6 * 0.3 / 0.35.
    assert found.qnc == pytest.approx((2.0 + 6.0 * 0.3 / 0.35) / 10.0)
    # At $10 the router has its 75 %: a quarter of the way from 70 % to the oracle's 90 %.
    assert found.gap_closed == pytest.approx(0.25)


def test_a_router_that_never_reaches_the_best_accuracy_has_no_qnc_and_no_oracle_no_gap_closed():
    singles = upper_hull([1.0, 10.0], [0.1, 0.7])
    router = upper_hull([0.5, 5.0], [0.2, 0.6])
    found = figures(router, singles, best_cost=10.0, best_accuracy=0.7)
    assert found.qnc is None and found.gap_closed is None
    assert not math.isnan(found.mean_gain)
    with pytest.raises(ValueError, match="no budgets below it"):
        figures(router, singles, best_cost=0.0, best_accuracy=0.7)
