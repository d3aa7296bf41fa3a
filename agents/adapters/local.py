"""Local agents: a transformers causal language model on this machine, as a LangChain chat model.

`local:<path>` names a checkpoint folder (config, weights, tokenizer) or a single `.gguf` file (loaded
through transformers' GGUF support, which needs the `gguf` package and dequantises the weights). The
model runs on CUDA (bfloat16) when available, else on the CPU (float32). Prompts use the tokenizer's
chat template when it has one, and a plain `System: / User: / Assistant:` layout otherwise.

Why not `langchain-huggingface`'s `ChatHuggingFace`: it requires a chat template (no plain-prompt
fallback), reports no token usage for in-process pipelines, and adds `huggingface-hub` plumbing this
offline adapter does not need; the adapter below is the few lines that differ.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from reso.agents.adapters.load_error import ModelLoadError

_ROLES = {"human": "user", "ai": "assistant", "system": "system"}
PLAIN_LABELS = {"system": "System", "user": "User", "assistant": "Assistant"}


def best_device() -> str:
    """`cuda` when a GPU is visible, else `cpu`."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class LocalChatModel(BaseChatModel):
    """A transformers causal LM answering chat messages; greedy by default, usage counted exactly."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: str
    """Checkpoint folder, or a `.gguf` file."""
    max_new_tokens: int = Field(default=512, ge=1)
    temperature: float = Field(default=0.0, ge=0.0, description="0 means greedy decoding.")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    device: str | None = None
    """`cuda`, `cpu`, …; None picks the best available."""

    _model: Any = PrivateAttr(default=None)
    _tokenizer: Any = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(self.model_path)
        folder, extra = (path.parent, {"gguf_file": path.name}) if path.suffix == ".gguf" else (path, {})
        device = self.device or best_device()
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        self._tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, **extra)
        if extra and not getattr(self._tokenizer, "chat_template", None):
            self._tokenizer.chat_template = gguf_chat_template(path)
        self._model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=dtype, **extra)
        self._model.to(device).eval()
        self.device = device

    @property
    def _llm_type(self) -> str:
        return "local-transformers"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "max_new_tokens": self.max_new_tokens,
                "temperature": self.temperature, "top_p": self.top_p}

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self._tokenizer, "chat_template", None))

    def render_prompt(self, messages: Sequence[BaseMessage]) -> str:
        """The text the model sees: the chat template's rendering, or the plain layout without one."""
        turns = [{"role": _ROLES.get(m.type, "user"), "content": m.text} for m in messages]
        if self.has_chat_template:
            try:
                return self._tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True)
            except Exception:  # noqa: BLE001 - templates rejecting a system turn raise jinja's own types
                return self._tokenizer.apply_chat_template(
                    _fold_system(turns), tokenize=False, add_generation_prompt=True)
        lines = [f"{PLAIN_LABELS[turn['role']]}: {turn['content']}" for turn in turns]
        return "\n\n".join([*lines, f"{PLAIN_LABELS['assistant']}:"])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        import torch

        prompt = self.render_prompt(messages)
        encoded = self._tokenizer(prompt, return_tensors="pt", add_special_tokens=not self.has_chat_template)
        encoded = {name: tensor.to(self._model.device) for name, tensor in encoded.items()
                   if name in ("input_ids", "attention_mask")}
        input_tokens = int(encoded["input_ids"].shape[1])
        eos = self._tokenizer.eos_token_id
        sampling = {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p} \
            if self.temperature > 0 else {"do_sample": False}
        with self._lock, torch.inference_mode():
            output = self._model.generate(
                **encoded,
                max_new_tokens=int(kwargs.get("max_new_tokens", self.max_new_tokens)),
                pad_token_id=self._tokenizer.pad_token_id if self._tokenizer.pad_token_id is not None else eos,
                **sampling,
            )
        new_tokens = output[0, input_tokens:].tolist()
        if eos is not None and eos in new_tokens:
            new_tokens = new_tokens[: new_tokens.index(eos) + 1]
        text = self._tokenizer.decode(new_tokens, skip_special_tokens=True)
        stops = list(stop or [])
        if not self.has_chat_template:  # a plain-prompt model may go on to write the next turns itself
            stops += [f"\n\n{label}:" for label in PLAIN_LABELS.values()]
        for marker in stops:
            text = text.split(marker, 1)[0]
        message = AIMessage(
            content=text.strip(),
            usage_metadata={"input_tokens": input_tokens, "output_tokens": len(new_tokens),
                            "total_tokens": input_tokens + len(new_tokens)},
            response_metadata={"model_name": self.model_path, "device": self.device},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def gguf_chat_template(path: Path) -> str | None:
    """The chat template stored in a GGUF file's metadata (transformers does not carry it over)."""
    from gguf import GGUFReader

    field = GGUFReader(path).fields.get("tokenizer.chat_template")
    if field is None:
        return None
    value = field.contents()
    return value if isinstance(value, str) and value.strip() else None


def _fold_system(turns: list[dict[str, str]]) -> list[dict[str, str]]:
    """Put system turns in front of the first user turn, for templates without a system role."""
    system = "\n\n".join(turn["content"] for turn in turns if turn["role"] == "system")
    rest = [dict(turn) for turn in turns if turn["role"] != "system"]
    if system and rest and rest[0]["role"] == "user":
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
    elif system:
        rest.insert(0, {"role": "user", "content": system})
    return rest


def load_local_model(target: str, params: Mapping[str, Any] | None = None) -> LocalChatModel:
    """Load the model of a `local:<path>` spec (params: max_new_tokens, temperature, top_p, device).

    Raises:
        reso.agents.adapters.load_error.ModelLoadError: The path does not exist or holds no loadable model.
    """
    path = Path(target).expanduser()
    if not path.exists():
        raise ModelLoadError(f"local:{target}: no such file or folder")
    try:
        return LocalChatModel(model_path=str(path.resolve()), **dict(params or {}))
    except (OSError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelLoadError(f"local:{target}: cannot load the model ({first})") from None

