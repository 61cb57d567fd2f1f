"""Remote embedders: Ollama, OpenAI-compatible servers (LM Studio, llama.cpp) and Cloudflare.

Every call has a short connect timeout and a bounded read timeout, and is retried at most once
(only for connection errors, timeouts and 5xx). Whatever goes wrong is raised as
`EmbedderError`; the write path turns that into a lexical comparison, never a failed write.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import httpx

from ankita._errors import ConfigError, EmbedderError
from ankita.embed._base import Embedder

CONNECT_TIMEOUT_S = 2.0
READ_TIMEOUT_S = 15.0
CLOUDFLARE_API = "https://api.cloudflare.com/client/v4"
CLOUDFLARE_DEFAULT_MODEL = "@cf/baai/bge-base-en-v1.5"
CLOUDFLARE_BATCH = 100  # the API's limit per call


def _timeout() -> httpx.Timeout:
    raw = os.environ.get("ANKITA_EMBED_TIMEOUT", "")
    try:
        read = float(raw) if raw else READ_TIMEOUT_S
    except ValueError:
        raise ConfigError(f"ANKITA_EMBED_TIMEOUT must be seconds, got {raw!r}") from None
    return httpx.Timeout(read, connect=min(CONNECT_TIMEOUT_S, read))


class RemoteEmbedder(Embedder):
    """Shared HTTP plumbing; subclasses build requests and read responses."""

    provider = ""

    def __init__(
        self,
        base: str,
        model: str,
        api_key: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base or not base.startswith(("http://", "https://")):
            raise ConfigError(
                f"{self.provider}: base URL must start with http:// or https://, got {base!r}"
            )
        if not model:
            raise ConfigError(f"{self.provider}: a model name is needed (EMBED_LOCAL_MODEL)")
        self.base = base.rstrip("/")
        self.model = model
        self.model_id = f"{self.provider}:{model}"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(timeout=_timeout(), headers=headers, transport=transport)

    def _post(self, url: str, body: dict[str, Any]) -> httpx.Response:
        last: Exception | None = None
        for _attempt in range(2):  # one try and at most one retry
            try:
                response = self.client.post(url, json=body)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last = exc
                continue
            if response.status_code >= 500:
                last = EmbedderError(f"{self.provider}: HTTP {response.status_code}")
                continue
            return response
        raise EmbedderError(f"{self.provider}: {last}") from last

    @staticmethod
    def _json(response: httpx.Response, provider: str) -> Any:
        if response.status_code in (401, 403):
            raise EmbedderError(f"{provider}: authentication refused (HTTP {response.status_code})")
        if response.status_code >= 400:
            raise EmbedderError(f"{provider}: HTTP {response.status_code}")
        try:
            return response.json()
        except ValueError:
            raise EmbedderError(f"{provider}: the answer is not JSON") from None

    @staticmethod
    def _vectors(value: Any, count: int, provider: str) -> list[list[float]]:
        if (
            not isinstance(value, list)
            or len(value) != count
            or not all(isinstance(v, list) for v in value)
        ):
            raise EmbedderError(f"{provider}: expected {count} vectors")
        return value


class OllamaEmbedder(RemoteEmbedder):
    """`POST /api/embed` (`input` list -> `embeddings`); falls back to the older
    `POST /api/embeddings` (`prompt` -> `embedding`, one text a call) on a 404."""

    provider = "ollama"

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        response = self._post(f"{self.base}/api/embed", {"model": self.model, "input": list(texts)})
        if response.status_code == 404:
            return [self._legacy(text) for text in texts]
        data = self._json(response, self.provider)
        embeddings = data.get("embeddings") if isinstance(data, dict) else None
        return self._vectors(embeddings, len(texts), self.provider)

    def _legacy(self, text: str) -> list[float]:
        response = self._post(f"{self.base}/api/embeddings", {"model": self.model, "prompt": text})
        data = self._json(response, self.provider)
        vector = data.get("embedding") if isinstance(data, dict) else None
        return self._vectors([vector], 1, self.provider)[0]


class OpenAIEmbedder(RemoteEmbedder):
    """`POST {base}/embeddings` (`input` list -> `data[i].embedding`, ordered by `index`)."""

    provider = "openai"

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        response = self._post(
            f"{self.base}/embeddings", {"model": self.model, "input": list(texts)}
        )
        data = self._json(response, self.provider)
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise EmbedderError("openai: no 'data' list in the answer")
        try:
            items = sorted(items, key=lambda item: int(item.get("index", 0)))
        except (TypeError, ValueError):
            raise EmbedderError("openai: bad 'index' in the answer") from None
        return self._vectors([i.get("embedding") for i in items], len(texts), self.provider)


class CloudflareEmbedder(RemoteEmbedder):
    """Workers AI: `POST .../accounts/{id}/ai/run/{model}` with `{"text": [...]}` (<= 100),
    vectors in `result.data`."""

    provider = "cloudflare"

    def __init__(
        self,
        account_id: str,
        api_token: str,
        model: str = CLOUDFLARE_DEFAULT_MODEL,
        base: str = CLOUDFLARE_API,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not account_id or not api_token:
            raise ConfigError(
                "cloudflare: CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN are needed"
            )
        super().__init__(base, model, api_token, transport)
        self.account_id = account_id

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), CLOUDFLARE_BATCH):
            chunk = list(texts[start : start + CLOUDFLARE_BATCH])
            url = f"{self.base}/accounts/{self.account_id}/ai/run/{self.model}"
            data = self._json(self._post(url, {"text": chunk}), self.provider)
            if not isinstance(data, dict) or data.get("success") is False:
                errors = data.get("errors") if isinstance(data, dict) else None
                raise EmbedderError(f"cloudflare: request failed {errors!r}")
            result = data.get("result")
            vectors = result.get("data") if isinstance(result, dict) else None
            out.extend(self._vectors(vectors, len(chunk), self.provider))
        return out


def from_env(name: str) -> Embedder:
    """Build a remote embedder from the SPEC §8 environment variables."""
    if name == "cloudflare":
        return CloudflareEmbedder(
            os.environ.get("CLOUDFLARE_ACCOUNT_ID", ""),
            os.environ.get("CLOUDFLARE_API_TOKEN", ""),
            os.environ.get("CLOUDFLARE_EMBED_MODEL") or CLOUDFLARE_DEFAULT_MODEL,
        )
    base = os.environ.get("EMBED_LOCAL_BASE", "")
    model = os.environ.get("EMBED_LOCAL_MODEL", "")
    if name == "ollama":
        return OllamaEmbedder(base, model)
    return OpenAIEmbedder(base, model, os.environ.get("EMBED_API_KEY") or None)
