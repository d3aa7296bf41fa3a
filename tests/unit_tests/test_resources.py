"""`tests/resources.py`: a missing resource skips a developer's test and fails CI's, with the reason either way."""

from __future__ import annotations

import pytest

from tests.resources import in_ci, require_module, unavailable

MISSING = "reso_no_such_module_4f1c"


@pytest.mark.parametrize("value", ["", "false", "0"])
def test_outside_ci_a_missing_resource_skips_with_its_reason(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    assert not in_ci()
    with pytest.raises(pytest.skip.Exception, match="^no Chromium binary on PATH$"):
        unavailable("no Chromium binary on PATH")
    with pytest.raises(pytest.skip.Exception, match="^the extra is not installed$"):
        require_module(MISSING, "the extra is not installed")


@pytest.mark.parametrize("value", ["true", "TRUE", "1"])
def test_under_ci_a_missing_resource_fails_with_its_reason(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    assert in_ci()
    with pytest.raises(pytest.fail.Exception,
                       match=r"^no Chromium binary on PATH \(CI=true: what a test needs must be there\)$"):
        unavailable("no Chromium binary on PATH")
    with pytest.raises(pytest.fail.Exception, match=r"^the extra is not installed \(CI=true"):
        require_module(MISSING, "the extra is not installed")


def test_a_module_that_is_there_is_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert require_module("json", "never").dumps([1]) == "[1]"
