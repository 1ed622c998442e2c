"""A small OpenAI-compatible chat server on loopback, for tests that check the wire.

It serves ``POST /v1/chat/completions`` (streamed as server-sent events when the
request asks for it), records every request body, and answers from a script:
each scripted reply is a string (text) or ``{"tool_calls": [(name, arguments), ...]}``
(optionally with ``"text"``). A request whose system prompt is jupymem's
compaction prompt gets an anchored summary instead, so a conversation can be
folded without scripting it. When the script runs out it answers "ok".
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARY = (
    "## Objective\nKeep the churn analysis honest.\n"
    "## Important Details\nJoin on customer_id.\n"
    "## Work State (Completed / Active / Blocked)\nCompleted: loading. Active: joins. Blocked: nothing.\n"
    "## Next Move\nPlot churn by month.\n"
    "## Relevant Files\nnotebooks/churn.ipynb"
)


class FakeOpenAI:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: deque[Any] = deque()
        self._lock = threading.Lock()
        # Cleared, it holds every answer until set again (up to 60 s): a test can then
        # show that whoever asked did not wait for the answer.
        self.gate = threading.Event()
        self.gate.set()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                reply = server._answer(body)
                server.gate.wait(60)
                if body.get("stream"):
                    self._stream(body, reply)
                else:
                    self._whole(body, reply)

            def _whole(self, body: dict[str, Any], reply: dict[str, Any]) -> None:
                message: dict[str, Any] = {"role": "assistant", "content": reply.get("text") or None}
                if reply.get("tool_calls"):
                    message["tool_calls"] = [
                        {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                        for i, (n, a) in enumerate(reply["tool_calls"])
                    ]
                data = {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [{"index": 0, "message": message,
                                 "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, body: dict[str, Any], reply: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()

                def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
                    data = {
                        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                    }
                    self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
                    self.wfile.flush()

                chunk({"role": "assistant", "content": ""})
                text = reply.get("text") or ""
                for i in range(0, len(text), 7):
                    chunk({"content": text[i : i + 7]})
                for i, (name, arguments) in enumerate(reply.get("tool_calls") or ()):
                    raw = json.dumps(arguments)
                    chunk({"tool_calls": [{"index": i, "id": f"call_{i}", "type": "function",
                                           "function": {"name": name, "arguments": ""}}]})
                    for j in range(0, len(raw), 11):
                        chunk({"tool_calls": [{"index": i, "function": {"arguments": raw[j : j + 11]}}]})
                chunk({}, "tool_calls" if reply.get("tool_calls") else "stop")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        # A short poll: ``stop`` waits for the serving loop to notice, up to one interval.
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def say(self, *replies: Any) -> None:
        """Queue replies: text, or {"tool_calls": [(name, args), ...], "text": ...}."""
        with self._lock:
            self.script.extend(replies)

    def chat_requests(self) -> list[dict[str, Any]]:
        """Requests other than compaction (summary) requests."""
        return [r for r in self.requests if not _is_compaction(r)]

    def compaction_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if _is_compaction(r)]

    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            if _is_compaction(body):
                return {"text": SUMMARY}
            item = self.script.popleft() if self.script else "ok"
        return {"text": item} if isinstance(item, str) else dict(item)


def _is_compaction(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    first = messages[0].get("content") if messages else ""
    return isinstance(first, str) and first.startswith("You keep the running summary of a conversation")


def system_prompt(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "system")
