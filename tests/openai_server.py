"""A local OpenAI-compatible chat completions server that answers with recorded responses, in order, and keeps
every request it was sent: the real provider client (langchain-openai over HTTP) is exercised end to end."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def plan_answer(**plan: Any) -> dict[str, Any]:
    """A recorded 200 answer whose message content is a plan (what json_schema structured output returns)."""
    body = {"summary": "", "steps": [], "edits": [], "used_entries": [], "requests": [], "notes": [], **plan}
    return {"status": 200, "body": {
        "id": "chatcmpl-recorded", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": json.dumps(body)}}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280}}}


def server_error() -> dict[str, Any]:
    return {"status": 500, "body": {"error": {"message": "recorded outage", "type": "server_error"}}}


@contextmanager
def recorded_openai(answers: list[dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(base URL, requests seen) while the server answers `answers` in order (then 500 for anything more)."""
    seen: list[dict[str, Any]] = []
    queue = list(answers)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            seen.append({"path": self.path, "auth": self.headers.get("authorization"),
                         "body": json.loads(self.rfile.read(length) or b"{}")})
            answer = queue.pop(0) if queue else server_error()
            data = json.dumps(answer["body"]).encode()
            self.send_response(answer["status"])
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1", seen
    finally:
        server.shutdown()
        server.server_close()
