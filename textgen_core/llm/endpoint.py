"""The ``openai`` client object for an endpoint: OpenAI-compatible, or an Azure OpenAI deployment.

Azure OpenAI differs from the OpenAI API in three ways, all handled by the
SDK's ``AsyncAzureOpenAI``: the key travels in an ``api-key`` header, every
request carries an ``api-version`` query parameter, and the model is named by
the deployment in the path (``/openai/deployments/{model}/chat/completions``).
An endpoint is an Azure deployment when ``settings.api_version`` is set; its
``base_url`` is then the resource endpoint (``https://NAME.openai.azure.com``)
and ``model`` the deployment name.
"""

from __future__ import annotations

from typing import Any, Protocol

import openai



class Endpoint(Protocol):
    """The settings an endpoint is reached with (the judge's settings are one)."""

    base_url: str
    api_key: str
    timeout: float
    api_version: str | None

    @property
    def endpoint(self) -> str: ...

#: Local servers need no key; the openai client insists on a value.
PLACEHOLDER_KEY = "no-key"


def is_azure(settings: Endpoint) -> bool:
    return bool(settings.api_version)


def async_openai(settings: Endpoint, *, http_client: Any = None, timeout: float | None = None) -> openai.AsyncOpenAI:
    """An ``AsyncOpenAI`` (or ``AsyncAzureOpenAI``) for ``settings``, with the SDK's own retries off."""
    options: dict[str, Any] = {"api_key": settings.api_key or PLACEHOLDER_KEY, "max_retries": 0,
                               "timeout": settings.timeout if timeout is None else timeout}
    if http_client is not None:
        options["http_client"] = http_client
    if is_azure(settings):
        resource = settings.endpoint.removesuffix("/openai")  # the SDK adds /openai itself
        return openai.AsyncAzureOpenAI(azure_endpoint=resource, api_version=settings.api_version,
                                       **options)
    return openai.AsyncOpenAI(base_url=settings.base_url, **options)


def is_local(settings: Endpoint) -> bool:
    """True for an endpoint on this machine (llama.cpp, Ollama, vLLM on localhost): there time is the cost."""
    from urllib.parse import urlparse

    host = (urlparse(settings.endpoint).hostname or "").lower()
    return host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.endswith(".localhost")
