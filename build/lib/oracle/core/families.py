"""Model family from a model name: gpt-4.1 -> gpt, anthropic/claude-sonnet-4 -> claude."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_FAMILIES: tuple[tuple[str, str], ...] = (
    (r"claude", "claude"),
    (r"chatgpt|gpt|^o[1-9](\b|-|$)|davinci", "gpt"),
    (r"llama", "llama"),
    (r"mistral|mixtral|codestral|ministral|magistral|pixtral", "mistral"),
    (r"qwen|qwq", "qwen"),
    (r"gemini", "gemini"),
    (r"gemma", "gemma"),
    (r"deepseek", "deepseek"),
    (r"^phi|[/-]phi", "phi"),
    (r"command|^c4ai|aya", "command"),
    (r"grok", "grok"),
    (r"kimi|moonshot", "kimi"),
    (r"glm|chatglm", "glm"),
    (r"nemotron", "nemotron"),
    (r"granite", "granite"),
    (r"olmo", "olmo"),
)


def infer_model_family(model: str) -> str:
    """The family of `model`; an unknown model is its own family (its base name)."""
    name = model.strip().lower()
    base = name.rsplit("/", 1)[-1]
    for pattern, family in _FAMILIES:
        if re.search(pattern, base) or re.search(pattern, name):
            return family
    return re.split(r"[:@]", base, maxsplit=1)[0] or name


def infer_provider(api: str, base_url: str | None) -> str:
    """`anthropic`, `openai`, or the endpoint's host (openrouter.ai -> openrouter)."""
    if base_url is None:
        return api
    host = (urlsplit(base_url).hostname or "").lower()
    if host in ("api.openai.com", "api.anthropic.com"):
        return host.split(".")[1]
    if host.endswith("openrouter.ai"):
        return "openrouter"
    return host or api
