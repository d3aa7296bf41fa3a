"""Database URLs: which targets name a PostgreSQL server, and the same URLs with their passwords hidden.

A DADB or checkpoint target is a PostgreSQL URL when it starts with `postgresql://` or `postgres://`
(libpq's two URI schemes); anything else is a SQLite file path. Whatever shows a URL (summary.json's
command line and settings, error messages, reprs) shows it through `redact`: a password in the user-info
part or in a `password=` query parameter becomes `***`. The safest URL carries no password at all: libpq
reads `PGPASSWORD` or `~/.pgpass` when the URL has none.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
MASK = "***"

# A URL inside free text ends at whitespace or a quote (error messages quote what they echo).
_URL_IN_TEXT = re.compile(r"(?i)postgres(?:ql)?://[^\s'\"]+")
_QUERY_PASSWORD = re.compile(r"(?i)([?&]password=)[^&#]*")


def is_postgres_url(target: object) -> bool:
    """Whether `target` is a PostgreSQL URL (rather than a file path)."""
    return isinstance(target, str) and target.lower().startswith(POSTGRES_SCHEMES)


def _parts(url: str) -> tuple[str, str | None, str, str]:
    """(scheme, user info or None, host and path, query with its '?' or '#')."""
    scheme, _, rest = url.partition("://")
    query_start = re.search(r"[?#]", rest)
    cut = query_start.start() if query_start else len(rest)
    authority_and_path, query = rest[:cut], rest[cut:]
    if "@" not in authority_and_path:
        return scheme, None, authority_and_path, query
    # The user info ends at the last '@' before the query: a raw '/' or '@' in a password stays hidden.
    user_info, host_and_path = authority_and_path.rsplit("@", 1)
    return scheme, user_info, host_and_path, query


def redact_url(url: str) -> str:
    """`url` with its password (user info or query parameter) replaced by `***`; the rest unchanged."""
    if "://" not in url:
        return url
    scheme, user_info, host_and_path, query = _parts(url)
    if user_info is not None and ":" in user_info:
        user_info = f"{user_info.split(':', 1)[0]}:{MASK}"
    credentials = f"{user_info}@" if user_info is not None else ""
    query = _QUERY_PASSWORD.sub(lambda match: match.group(1) + MASK, query)
    return f"{scheme}://{credentials}{host_and_path}{query}"


def redact(text: str) -> str:
    """`text` with the password of every PostgreSQL URL in it hidden (see `redact_url`)."""
    return _URL_IN_TEXT.sub(lambda match: redact_url(match.group(0)), text)


def without_credentials(url: str) -> str:
    """`url` without user or password: the same server and database, named alike by every user."""
    if "://" not in url:
        return url
    scheme, _, host_and_path, query = _parts(redact_url(url))
    return f"{scheme}://{host_and_path}{query}"


def _password_forms(url: str) -> set[str]:
    """The password as written in `url` and as decoded from it (empty when it has none)."""
    if not is_postgres_url(url):
        return set()
    _, user_info, _, query = _parts(url)
    written = [user_info.split(":", 1)[1]] if user_info is not None and ":" in user_info else []
    written += [match.group(0).split("=", 1)[1] for match in re.finditer(r"(?i)password=[^&#]*", query)]
    return {form for raw in written for form in (raw, unquote(raw))} - {""}


def scrub(message: str, url: str) -> str:
    """`message` (an error about `url`) with URLs redacted and the URL's password, as written or decoded, hidden."""
    message = redact(message)
    for form in sorted(_password_forms(url), key=len, reverse=True):
        message = message.replace(form, MASK)
    return message
