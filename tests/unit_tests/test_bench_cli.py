"""`reso bench`'s comma-separated options: one reading for every list of sizes, rates, worker counts and seeds."""

from __future__ import annotations

import pytest
import typer

from reso.evals.bench.cli import comma_numbers, comma_parts


def test_comma_lists_skip_blank_parts() -> None:
    assert comma_parts(" a , ,b,") == ["a", "b"]
    assert comma_numbers(" 1, 2,,3 ", int, "--sizes") == [1, 2, 3]
    assert comma_numbers("0,0.5", float, "--rates") == [0.0, 0.5]
    assert comma_numbers("", int, "--workers") == []


@pytest.mark.parametrize(("text", "parse", "message"), [
    ("1,two", int, "--workers must be comma-separated integers, got '1,two'"),
    ("0.1,x", float, "--rates must be comma-separated numbers, got '0.1,x'"),
])
def test_a_bad_part_names_the_option(text: str, parse: type, message: str) -> None:
    option = message.split(" ", 1)[0]
    with pytest.raises(typer.BadParameter) as caught:
        comma_numbers(text, parse, option)
    assert str(caught.value) == message
