"""A fake chat model on 127.0.0.1 that speaks both wire formats: OpenAI-compatible
`/v1/chat/completions` (server-sent events) and Ollama `/api/chat` (NDJSON), streaming, with tool
calls split across chunks as real servers send them, and the prompt size in tokens (4 characters
each) reported as usage.

What it answers comes from a `brain`: a function from the request to a `Say`. `scripted_brain`
is a small rule-based companion good enough for an end-to-end chat; tests pass their own.

    python tests/fakemodel.py [PORT]   # serve the scripted brain until killed
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Say:
    content: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200  # anything else: an error response
    hang_s: float = 0.0  # sleep before answering (a hung model)
    gap_s: float = 0.0  # sleep between streamed pieces (a slow model)


Brain = Callable[[dict[str, Any]], Say]


def prompt_tokens(body: dict[str, Any]) -> int:
    """As a server counts them: the messages and the tool schemas it was sent."""
    return (len(json.dumps(body.get("messages", []))) + len(json.dumps(body.get("tools", [])))) // 4


def _last(body: dict[str, Any], role: str) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == role:
            return str(message.get("content") or "")
    return ""


def _last_assistant(body: dict[str, Any]) -> str:
    return _last(body, "assistant")


def _resolve_from(body: dict[str, Any], listing: str) -> Say:
    """The user answered "the first/second one" to our question: resolve that pair."""
    question = ""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "assistant" and "says both" in str(message.get("content")):
            question = str(message["content"])
            break
    asked = re.search(r'says both "([^"]+)" and "([^"]+)"', question)
    choice = re.match(r"(?i)^the (first|second) one", _last(body, "user"))
    ids = {text.strip(): fid for fid, text in re.findall(r"\[(\w+)\] ([^\[<]+)", listing)}
    if not asked or not choice:
        return Say("Sorry, which one did you mean?")
    first, second = ids.get(asked.group(1)), ids.get(asked.group(2))
    if not first or not second:
        return Say("Sorry, I could not find those facts.")
    keep, over = (first, second) if choice.group(1).lower() == "first" else (second, first)
    return Say(tool_calls=[("resolve_conflict", {"keep": keep, "over": over})])


def scripted_brain(body: dict[str, Any]) -> Say:
    """A tiny companion: remembers statements, asks about conflicts, answers from memory."""
    messages = body.get("messages", [])
    system = str(messages[0].get("content", "")) if messages else ""
    last = messages[-1] if messages else {}
    if system.startswith("Summarise"):
        return Say("We chatted about the user's life, home and habits.")
    if last.get("role") == "tool" and "<->" in str(last.get("content")):
        return _resolve_from(body, str(last.get("content")))
    if last.get("role") == "tool":
        result = str(last.get("content"))
        if "conflicts with" in result or "CONFLICTS" in result:
            return Say(
                "Noted, though my memory already says something different. "
                "Let me ask you about it next time."
            )
        if result.startswith("Resolved") or "superseded" in result or "Kept" in result:
            return Say("Got it, I've updated my memory.")
        return Say("Got it, I'll remember that.")
    user = _last(body, "user")
    if user.startswith("The conversation is about to be shortened"):
        return Say("[SILENT]")
    if user.lower().startswith("be quiet"):
        return Say("[SILENT]")
    asked = re.search(r'\[(\w+)\] "([^"]+)" and \[(\w+)\] "([^"]+)"', system)
    if asked and "Ask " in system:
        first, second = asked.group(2), asked.group(4)
        return Say(
            f'Quick question: my memory says both "{first}" and "{second}". Which one is current?'
        )
    if re.match(r"(?i)^the (first|second) one", user) and "says both" in _last_assistant(body):
        return Say(tool_calls=[("list_conflicts", {})])
    if re.match(r"(?i)^(i|my|i'm|i am)\b", user) and not user.endswith("?"):
        return Say(tool_calls=[("remember", {"text": user})])
    known = re.findall(r"- \[\w+\] ([^\n(]+)", system)
    if known:
        return Say("From what I remember: " + "; ".join(k.strip() for k in known[:3]) + ".")
    return Say("Tell me more!")


class FakeModel:
    """The server; `requests` holds every request body, in order."""

    def __init__(self, brain: Brain = scripted_brain, port: int = 0) -> None:
        self.brain = brain
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body = (
                    {"models": [{"name": "fake"}]}
                    if self.path == "/api/tags"
                    else {"data": [{"id": "fake"}]}
                )
                self._send(200, "application/json", json.dumps(body).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                fake.requests.append(body)
                say = fake.brain(body)
                if say.hang_s:
                    time.sleep(say.hang_s)
                if say.status != 200:
                    self._send(
                        say.status,
                        "application/json",
                        json.dumps({"error": "forced failure"}).encode(),
                    )
                    return
                if self.path.endswith("/chat/completions"):
                    self._openai(body, say)
                elif self.path == "/api/chat":
                    self._ollama(body, say)
                else:
                    self._send(404, "text/plain", b"no such route")

            def _send(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _chunks(self, kind: str, pieces: list[bytes], gap_s: float = 0.0) -> None:
                self.send_response(200)
                self.send_header("content-type", kind)
                self.end_headers()
                try:
                    for piece in pieces:
                        self.wfile.write(piece)
                        self.wfile.flush()
                        time.sleep(gap_s)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client stopped reading (a cancelled reply), as real ones do

            def _openai(self, body: dict[str, Any], say: Say) -> None:
                def event(obj: Any) -> bytes:
                    return b"data: " + json.dumps(obj).encode() + b"\n\n"

                pieces = [
                    event({"choices": [{"index": 0, "delta": {"content": part}}]})
                    for part in _split(say.content)
                ]
                for i, (name, args) in enumerate(say.tool_calls):
                    text = json.dumps(args)
                    half = len(text) // 2  # arguments arrive in two parts
                    pieces.append(
                        event(
                            {
                                "choices": [
                                    {
                                        "index": 0,
                                        "delta": {
                                            "tool_calls": [
                                                {
                                                    "index": i,
                                                    "id": f"call_{i}",
                                                    "type": "function",
                                                    "function": {
                                                        "name": name,
                                                        "arguments": text[:half],
                                                    },
                                                }
                                            ]
                                        },
                                    }
                                ]
                            }
                        )
                    )
                    pieces.append(
                        event(
                            {
                                "choices": [
                                    {
                                        "index": 0,
                                        "delta": {
                                            "tool_calls": [
                                                {"index": i, "function": {"arguments": text[half:]}}
                                            ]
                                        },
                                    }
                                ]
                            }
                        )
                    )
                finish = "tool_calls" if say.tool_calls else "stop"
                pieces.append(
                    event({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
                )
                pieces.append(
                    event(
                        {
                            "choices": [],
                            "usage": {"prompt_tokens": prompt_tokens(body), "completion_tokens": 5},
                        }
                    )
                )
                pieces.append(b"data: [DONE]\n\n")
                self._chunks("text/event-stream", pieces, say.gap_s)

            def _ollama(self, body: dict[str, Any], say: Say) -> None:
                def line(obj: Any) -> bytes:
                    return json.dumps(obj).encode() + b"\n"

                pieces = [
                    line(
                        {
                            "model": body.get("model"),
                            "message": {"role": "assistant", "content": part},
                            "done": False,
                        }
                    )
                    for part in _split(say.content)
                ]
                if say.tool_calls:
                    pieces.append(
                        line(
                            {
                                "model": body.get("model"),
                                "message": {
                                    "role": "assistant",
                                    "content": "",
                                    "tool_calls": [
                                        {"function": {"name": n, "arguments": a}}
                                        for n, a in say.tool_calls
                                    ],
                                },
                                "done": False,
                            }
                        )
                    )
                pieces.append(
                    line(
                        {
                            "model": body.get("model"),
                            "message": {"role": "assistant", "content": ""},
                            "done": True,
                            "done_reason": "stop",
                            "prompt_eval_count": prompt_tokens(body),
                            "eval_count": 5,
                        }
                    )
                )
                self._chunks("application/x-ndjson", pieces, say.gap_s)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, provider: str) -> str:
        base = f"http://127.0.0.1:{self.port}"
        return base if provider == "ollama" else base + "/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _split(text: str) -> list[str]:
    """Stream text in a few pieces, as a model does."""
    if not text:
        return []
    step = max(1, len(text) // 3)
    return [text[i : i + step] for i in range(0, len(text), step)]


if __name__ == "__main__":
    server = FakeModel(port=int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(server.port, flush=True)
    threading.Event().wait()
