"""Chat model clients: OpenAI-compatible `/v1/chat/completions` (LM Studio, llama.cpp, OpenAI)
and Ollama `/api/chat`, both streaming, both with tool calling.

Messages and tool calls use one neutral shape (OpenAI's); each client converts at its seam.
Every failure (unreachable, refused, timed out, garbage) is raised as `ModelError` with a
sentence a user can act on.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from ankita._errors import ConfigError, ModelError

CONNECT_TIMEOUT_S = 3.0
READ_TIMEOUT_S = 120.0  # a local model may think for a while before its first token
DEFAULT_OLLAMA = "http://127.0.0.1:11434"
DEFAULT_OLLAMA_MODEL = "llama3.2"
DEFAULT_CONTEXT = 8192


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] | str  # a model may send JSON text; `tools.dispatch` takes both


@dataclass(frozen=True)
class ModelReply:
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int | None = None  # measured by the server, when it says
    completion_tokens: int | None = None


Message = dict[str, Any]
OnDelta = Callable[[str], None]


@dataclass(frozen=True)
class ModelSettings:
    """Which model to talk to: argument > environment > default."""

    provider: str = "ollama"  # "ollama" | "openai"
    base_url: str = DEFAULT_OLLAMA
    model: str = DEFAULT_OLLAMA_MODEL
    api_key: str | None = field(default=None, repr=False)
    context_window: int = DEFAULT_CONTEXT
    timeout_s: float = READ_TIMEOUT_S

    @classmethod
    def from_env(cls, **overrides: Any) -> ModelSettings:
        """ANKITA_CHAT_* first, then SPEC §10's ANKITA_LLM_* names; without a provider, one
        is read off the URL as for the embedders (ending in /v1: OpenAI-compatible)."""
        env = os.environ
        url = overrides.get("base_url") or env.get("ANKITA_CHAT_URL") or env.get("ANKITA_LLM_BASE")
        provider = overrides.get("provider") or env.get("ANKITA_CHAT_PROVIDER")
        if not provider:
            provider = "openai" if url and str(url).rstrip("/").endswith("/v1") else "ollama"
        if provider not in ("ollama", "openai"):
            raise ConfigError(f"ANKITA_CHAT_PROVIDER must be ollama or openai, got {provider!r}")
        if provider == "ollama" and url and str(url).rstrip("/").endswith("/v1"):
            raise ConfigError(
                f"{url} ends in /v1, an OpenAI-compatible address: an Ollama base has no /v1. "
                "Drop /v1, or set ANKITA_CHAT_PROVIDER=openai"
            )
        default_url = DEFAULT_OLLAMA if provider == "ollama" else "http://127.0.0.1:1234/v1"
        values: dict[str, Any] = {
            "provider": provider,
            "base_url": url or default_url,
            "model": overrides.get("model")
            or env.get("ANKITA_CHAT_MODEL")
            or env.get("ANKITA_LLM_MODEL")
            or (DEFAULT_OLLAMA_MODEL if provider == "ollama" else "local-model"),
            "api_key": overrides.get("api_key")
            or env.get("ANKITA_CHAT_KEY")
            or env.get("ANKITA_LLM_API_KEY")
            or None,
        }
        for name, var, default in (
            ("context_window", "ANKITA_CHAT_CONTEXT", DEFAULT_CONTEXT),
            ("timeout_s", "ANKITA_CHAT_TIMEOUT", READ_TIMEOUT_S),
        ):
            raw = overrides.get(name) or env.get(var)
            try:
                values[name] = type(default)(raw) if raw else default
            except ValueError:
                raise ConfigError(f"{var} must be a number, got {raw!r}") from None
        if not str(values["base_url"]).startswith(("http://", "https://")):
            raise ConfigError(
                f"the chat URL must start with http:// or https://, got {values['base_url']!r}"
            )
        if int(values["context_window"]) < 256:
            raise ConfigError("the context window must be at least 256 tokens")
        return cls(**values)


class ChatModel(ABC):
    """One method: send messages (and tools), stream text to `on_delta`, get the reply."""

    settings: ModelSettings

    @abstractmethod
    def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        on_delta: OnDelta | None = None,
    ) -> ModelReply:
        """The model's next message."""

    def describe(self) -> str:
        return f"{self.settings.provider} {self.settings.model} at {self.settings.base_url}"

    @abstractmethod
    def ping(self) -> None:
        """Raise ModelError unless the server answers at all."""


class _HTTPModel(ChatModel):
    def __init__(
        self, settings: ModelSettings, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.settings = settings
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self.client = httpx.Client(
            timeout=httpx.Timeout(settings.timeout_s, connect=CONNECT_TIMEOUT_S),
            headers=headers,
            transport=transport,
        )

    def ping(self) -> None:
        path = "/api/tags" if self.settings.provider == "ollama" else "/models"
        try:
            response = self.client.get(
                self.settings.base_url.rstrip("/") + path, timeout=CONNECT_TIMEOUT_S
            )
        except httpx.HTTPError as exc:
            raise ModelError(
                f"no chat model reachable at {self.settings.base_url} ({type(exc).__name__})"
            ) from exc
        if response.status_code >= 500:
            raise ModelError(f"{self.describe()} answered HTTP {response.status_code}")

    def _stream(self, url: str, body: dict[str, Any]) -> Iterator[str]:
        """The response's lines; every failure becomes one ModelError."""
        try:
            with self.client.stream("POST", url, json=body) as response:
                if response.status_code >= 400:
                    detail = response.read().decode("utf-8", "replace")[:300]
                    raise ModelError(
                        f"{self.describe()} answered HTTP {response.status_code}: {detail}"
                    )
                yield from response.iter_lines()
        except httpx.TimeoutException as exc:
            raise ModelError(
                f"{self.describe()} did not answer within "
                f"{self.settings.timeout_s:g} s ({type(exc).__name__})"
            ) from exc
        except httpx.TransportError as exc:
            raise ModelError(
                f"no chat model reachable at {self.settings.base_url} ({type(exc).__name__}: {exc})"
            ) from exc


class OpenAIChat(_HTTPModel):
    """OpenAI-compatible servers: LM Studio, llama.cpp's server, vLLM, OpenAI."""

    def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        on_delta: OnDelta | None = None,
    ) -> ModelReply:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": list(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = list(tools)
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage: dict[str, Any] = {}
        for line in self._stream(self.settings.base_url.rstrip("/") + "/chat/completions", body):
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            chunk = _json(data, self)
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    text.append(delta["content"])
                    if on_delta:
                        on_delta(delta["content"])
                # Tool calls arrive in pieces keyed by index: the name once, arguments in parts.
                for part in delta.get("tool_calls") or []:
                    slot = calls.setdefault(
                        int(part.get("index", 0)), {"id": "", "name": "", "arguments": ""}
                    )
                    slot["id"] = part.get("id") or slot["id"]
                    function = part.get("function") or {}
                    slot["name"] += function.get("name") or ""
                    slot["arguments"] += function.get("arguments") or ""
        return ModelReply(
            content="".join(text),
            tool_calls=tuple(
                ToolCall(c["id"] or f"call_{i}", c["name"], c["arguments"])
                for i, c in sorted(calls.items())
            ),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )


class OllamaChat(_HTTPModel):
    """Ollama's own API: NDJSON streaming, tool arguments as objects."""

    def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        on_delta: OnDelta | None = None,
    ) -> ModelReply:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "stream": True,
            "messages": [_to_ollama(m) for m in messages],
            "options": {"num_ctx": self.settings.context_window},
        }
        if tools:
            body["tools"] = list(tools)
        text: list[str] = []
        calls: list[ToolCall] = []
        final: dict[str, Any] = {}
        for line in self._stream(self.settings.base_url.rstrip("/") + "/api/chat", body):
            if not line.strip():
                continue
            chunk = _json(line, self)
            if chunk.get("error"):
                raise ModelError(f"{self.describe()}: {chunk['error']}")
            message = chunk.get("message") or {}
            if message.get("content"):
                text.append(message["content"])
                if on_delta:
                    on_delta(message["content"])
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                calls.append(
                    ToolCall(
                        call.get("id") or f"call_{len(calls)}",
                        function.get("name", ""),
                        function.get("arguments") or {},
                    )
                )
            if chunk.get("done"):
                final = chunk
                break
        return ModelReply(
            content="".join(text),
            tool_calls=tuple(calls),
            prompt_tokens=final.get("prompt_eval_count"),
            completion_tokens=final.get("eval_count"),
        )


def _to_ollama(message: Message) -> Message:
    """Ollama wants tool arguments as objects and names tool results by tool."""
    out = {"role": message["role"], "content": message.get("content") or ""}
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "function": {
                    "name": c["function"]["name"],
                    "arguments": (
                        json.loads(c["function"]["arguments"])
                        if isinstance(c["function"]["arguments"], str)
                        and c["function"]["arguments"].strip().startswith("{")
                        else c["function"]["arguments"] or {}
                    ),
                }
            }
            for c in message["tool_calls"]
        ]
    if message["role"] == "tool" and message.get("name"):
        out["tool_name"] = message["name"]
    return out


def _json(data: str, model: ChatModel) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except (ValueError, RecursionError):
        raise ModelError(
            f"{model.describe()} sent something that is not JSON: {data[:120]!r}"
        ) from None
    if not isinstance(chunk, dict):
        raise ModelError(f"{model.describe()} sent an unexpected chunk: {data[:120]!r}")
    return chunk


def open_model(
    settings: ModelSettings | None = None, transport: httpx.BaseTransport | None = None
) -> ChatModel:
    settings = settings or ModelSettings.from_env()
    cls = OllamaChat if settings.provider == "ollama" else OpenAIChat
    return cls(settings, transport=transport)


SETUP_HELP = """\
Ankita needs a chat model, and none answered at {url}.

Ankita does not ship a chat model; it talks to a local model server you run. Either:

  Ollama      install it from ollama.com, then:
                ollama pull llama3.2
                ollama serve
              Ankita uses http://127.0.0.1:11434 and the model llama3.2 by default.
              Another model:  export ANKITA_CHAT_MODEL=qwen3

  LM Studio   load a model and start its server (Developer tab), then:
                export ANKITA_CHAT_PROVIDER=openai
                export ANKITA_CHAT_URL=http://127.0.0.1:1234/v1
                export ANKITA_CHAT_MODEL=<the model's name in LM Studio>

Any OpenAI-compatible server works the same way (llama.cpp's llama-server, vLLM, OpenAI with
ANKITA_CHAT_KEY). Tell Ankita the model's context size with ANKITA_CHAT_CONTEXT (default {ctx}).
Then run `ankita chat` again.
"""
