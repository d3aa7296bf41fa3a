"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1, for integration tests.

```python
from tests.openai_stub import OpenAIStub, StubReply, StubError

with OpenAIStub([StubError(429, retry_after_s=0.05), StubReply("4", prompt_tokens=12, completion_tokens=1)]) as stub:
    spec = ModelSpec(spec="openai:test-model", base_url=stub.base_url, api_key_env="STUB_KEY", ...)
    ...
    stub.requests[-1].headers["authorization"]   # what the client sent
```

Replies are served in order; when the script runs out, `default` answers (a `StubReply`, or a callable
taking the request body and returning a `StubReply` / `StubError`), else the server answers 500. Requests
are recorded (path, lower-cased headers, parsed JSON body). It serves `POST /v1/chat/completions`
(non-streaming) and `GET /v1/models`; it runs in a daemon thread with one thread per request, so
concurrent clients work. Hand-written on the standard library on purpose: no test dependency, and the
exact status codes and headers stay under the test's control.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class StubReply:
    """A successful chat completion with the given text and token usage."""

    text: str
    prompt_tokens: int = 10
    completion_tokens: int = 5
    delay_s: float = 0.0
    finish_reason: str = "stop"


@dataclass(frozen=True)
class StubError:
    """An HTTP error answer, optionally with a Retry-After header (seconds, may be fractional)."""

    status: int
    message: str = "stub error"
    retry_after_s: float | None = None
    headers: dict[str, str] = field(default_factory=dict)


StubItem = StubReply | StubError


@dataclass(frozen=True)
class RecordedRequest:
    """One request the stub received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class OpenAIStub:
    """A scripted OpenAI-compatible server; use as a context manager (see module docstring)."""

    def __init__(self, script: Iterable[StubItem] = (),
                 default: StubItem | Callable[[Any], StubItem] | None = None) -> None:
        self._script = list(script)
        self._default = default
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.requests: list[RecordedRequest] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="openai-stub", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The URL to give a client as `base_url` (ends in `/v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [request for request in self.requests if request.path.endswith("/chat/completions")]

    def add(self, *items: StubItem) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(items)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, body: Any) -> StubItem:
        with self._lock:
            if self._script:
                return self._script.pop(0)
        default = self._default
        if callable(default):
            return default(body)
        return default or StubError(500, "stub script exhausted")

    def _completion(self, body: Any, reply: StubReply) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-stub-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub") if isinstance(body, dict) else "stub",
            "choices": [{"index": 0, "finish_reason": reply.finish_reason,
                         "message": {"role": "assistant", "content": reply.text}}],
            "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                      "total_tokens": reply.prompt_tokens + reply.completion_tokens},
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                return

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _record(self, body: Any) -> None:
                with stub._lock:
                    stub.requests.append(RecordedRequest(
                        method=self.command, path=self.path,
                        headers={name.lower(): value for name, value in self.headers.items()}, body=body))

            def do_GET(self) -> None:
                self._record(None)
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"null")
                except json.JSONDecodeError:
                    body = None
                self._record(body)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                item = stub._next(body)
                if isinstance(item, StubError):
                    headers = dict(item.headers)
                    if item.retry_after_s is not None:
                        headers["Retry-After"] = f"{item.retry_after_s:g}"
                    self._send(item.status, {"error": {"message": item.message, "type": "stub_error",
                                                       "code": item.status}}, headers)
                    return
                if item.delay_s:
                    time.sleep(item.delay_s)
                self._send(200, stub._completion(body, item))

        return Handler
