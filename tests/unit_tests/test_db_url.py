"""Database URLs: PostgreSQL targets are told from file paths, and passwords are hidden wherever a URL shows."""

from __future__ import annotations

import pytest

from reso.agents.dadb.url import is_postgres_url, redact, redact_url, scrub, without_credentials


@pytest.mark.parametrize(("target", "expected"), [
    ("postgresql://u@h/db", True), ("postgres://h/db", True), ("POSTGRESQL://h/db", True),
    ("runs/dadb.sqlite", False), ("", False), (None, False), ("sqlite:///x.db", False),
])
def test_postgres_urls_are_told_from_paths(target, expected) -> None:
    assert is_postgres_url(target) is expected


@pytest.mark.parametrize(("url", "shown", "anonymous"), [
    ("postgresql://reso:s3cret@db.internal:5433/dadb?sslmode=require",
     "postgresql://reso:***@db.internal:5433/dadb?sslmode=require", "postgresql://db.internal:5433/dadb?sslmode=require"),
    ("postgres://reso@db/dadb", "postgres://reso@db/dadb", "postgres://db/dadb"),
    ("postgresql:///dadb?host=/run/pg&password=s3cret&port=5432",
     "postgresql:///dadb?host=/run/pg&password=***&port=5432", "postgresql:///dadb?host=/run/pg&password=***&port=5432"),
    # A password holding a raw '@' or '/' is still hidden whole (the user info ends at the last '@').
    ("postgresql://reso:p@ss/w0rd@db/dadb", "postgresql://reso:***@db/dadb", "postgresql://db/dadb"),
    ("runs/dadb.sqlite", "runs/dadb.sqlite", "runs/dadb.sqlite"),
])
def test_redaction_hides_the_password_and_keeps_the_rest(url, shown, anonymous) -> None:
    assert redact_url(url) == shown
    assert without_credentials(url) == anonymous


def test_urls_inside_text_are_redacted() -> None:
    text = "error: 'postgresql://a:one@h/db' failed, then postgres://b:two@k/db2 did too"
    assert redact(text) == "error: 'postgresql://a:***@h/db' failed, then postgres://b:***@k/db2 did too"
    assert redact("no url here: dadb.sqlite") == "no url here: dadb.sqlite"


def test_scrub_hides_the_password_even_outside_a_url() -> None:
    url = "postgresql://reso:p%40ss%2Fword@db/dadb"
    message = f'FATAL: bad password "p@ss/word" (given as p%40ss%2Fword) for {url}'
    scrubbed = scrub(message, url)
    assert "p@ss" not in scrubbed and "p%40ss" not in scrubbed
    assert scrubbed == 'FATAL: bad password "***" (given as ***) for postgresql://reso:***@db/dadb'
    query_url = "postgresql:///d?host=/run/pg&password=q%20r"
    assert scrub("auth failed for q r (q%20r)", query_url) == "auth failed for *** (***)"
    assert scrub("auth failed for reso", "postgresql://reso@db/d") == "auth failed for reso"
