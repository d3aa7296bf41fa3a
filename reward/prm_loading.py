"""Loading and checking process-reward-model checkpoints of the Qwen2.5-Math-PRM family.

Three layouts load:

- a standard transformers token-classification model (`*ForTokenClassification`, e.g.
  `Qwen2ForTokenClassification`) whose head has two labels — what the tests and `train_prm` build;
- the layout of the released Qwen2.5-Math-PRM checkpoints: a custom `Qwen2ForProcessRewardModel` class
  shipped as remote code with the checkpoint (`auto_map` in config.json), a Qwen2 decoder with a
  `score` MLP head of two outputs per token, loaded through `AutoModel` with `trust_remote_code`;
- a peft LoRA adapter folder (adapter_config.json) over either of the above, merged at load.

A checkpoint is refused at load, with a message naming the checkpoint, when its tokenizer has no
`<extra_0>` step-separator token, or when its head has no trained weights or other than two classes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

STEP_SEPARATOR = "<extra_0>"
HEAD_NAMES = ("score", "classifier")


class PRMLoadError(ValueError):
    """A checkpoint that cannot serve as a process reward model; the message says why."""


@dataclass(slots=True)
class LoadedPRM:
    """A checked PRM: the model (evaluation mode, on its device), its tokenizer and the separator's id."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    separator_id: int
    device: torch.device
    dtype: torch.dtype
    layout: str


def resolve_device(device: str | None) -> torch.device:
    """`None` → CUDA when available, else CPU. Asking for CUDA without one is an error."""
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available on this machine")
    return resolved


def resolve_dtype(dtype: Any, device: torch.device) -> torch.dtype:
    """`None` → bfloat16 on CUDA, float32 elsewhere; strings such as "bfloat16" name a torch dtype."""
    import torch

    if dtype is None:
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    resolved = getattr(torch, str(dtype).removeprefix("torch."), None)
    if isinstance(resolved, torch.dtype):
        return resolved
    raise ValueError(f"unknown dtype {dtype!r}: use e.g. 'bfloat16', 'float16' or 'float32'")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise PRMLoadError(f"{path}: cannot read JSON ({exc})") from exc


def checkpoint_layout(checkpoint: str | Path) -> str:
    """"adapter", "remote-code" (Qwen2ForProcessRewardModel and kin) or "token-classification"."""
    path = Path(checkpoint)
    if (path / "adapter_config.json").is_file():
        return "adapter"
    config_path = path / "config.json"
    if config_path.is_file():
        config = _read_json(config_path)
        architectures = config.get("architectures") or []
        if "AutoModel" in (config.get("auto_map") or {}) or any(
                "ProcessRewardModel" in name for name in architectures):
            return "remote-code"
    return "token-classification"


def separator_id(tokenizer: PreTrainedTokenizerBase, checkpoint: str | Path,
                 separator: str = STEP_SEPARATOR) -> int:
    """The separator's token id; `PRMLoadError` when the tokenizer does not encode it as one token."""
    token_id = tokenizer.convert_tokens_to_ids(separator)
    encoded = tokenizer.encode(separator, add_special_tokens=False)
    if not isinstance(token_id, int) or token_id == tokenizer.unk_token_id or encoded != [token_id]:
        raise PRMLoadError(
            f"{checkpoint}: the tokenizer has no step-separator token {separator!r} (it encodes to "
            f"{encoded}); a Qwen2.5-Math-PRM checkpoint marks step ends with it")
    return int(token_id)


def moved(model: PreTrainedModel, *, device: torch.device | None = None,
          dtype: torch.dtype | None = None) -> PreTrainedModel:
    """`model` moved to `device` and cast to `dtype` (either may be None: unchanged); the same object."""
    # transformers declares `.to` through functools.wraps, which typeshed types as a plain callable rather
    # than a method, so mypy misses the bound `self`; the call is transformers' documented one.
    return model.to(device=device, dtype=dtype)  # type: ignore[call-arg]


def head_classes(model: PreTrainedModel) -> tuple[str, int]:
    """The head module's name and its number of outputs per token (the last linear layer's width)."""
    import torch

    for name in HEAD_NAMES:
        head = getattr(model, name, None)
        if head is None:
            continue
        linears = [module for module in head.modules() if isinstance(module, torch.nn.Linear)]
        if linears:
            return name, linears[-1].out_features
    raise PRMLoadError(f"{type(model).__name__} has no classification head (expected a module named "
                       f"{' or '.join(HEAD_NAMES)})")


def check_head(model: PreTrainedModel, checkpoint: str | Path, missing_keys: Sequence[str] = ()) -> None:
    """`PRMLoadError` unless the head has two classes and its weights came from the checkpoint."""
    head, classes = head_classes(model)
    if classes != 2:
        raise PRMLoadError(f"{checkpoint}: the head {head!r} has {classes} classes per token; a process "
                           "reward model needs exactly two (wrong step, right step)")
    untrained = [key for key in missing_keys if key.split(".")[0] == head]
    if untrained:
        raise PRMLoadError(f"{checkpoint}: the checkpoint has no weights for the two-class head {head!r} "
                           f"(missing {', '.join(untrained)}); it is not a process reward model")


def load_tokenizer(checkpoint: str | Path, *, trust_remote_code: bool = False) -> PreTrainedTokenizerBase:
    """The checkpoint's tokenizer, with a padding token (end-of-text when it has none)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(checkpoint), trust_remote_code=trust_remote_code)
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token is None:
            raise PRMLoadError(f"{checkpoint}: the tokenizer has neither a padding nor an end-of-text token")
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_prm(checkpoint: str | Path, *, device: str | None = None, dtype: Any = None,
             trust_remote_code: bool | None = None) -> LoadedPRM:
    """Load and check a PRM checkpoint (a local folder or a Hugging Face model id in the local cache).

    Args:
        checkpoint: The checkpoint folder or model id.
        device: "cuda", "cuda:1", "cpu"…; None picks CUDA when available.
        dtype: torch dtype or its name; None picks bfloat16 on CUDA and float32 on CPU.
        trust_remote_code: None allows the checkpoint's own model code only when its config declares it
            (the released Qwen2.5-Math-PRM layout); False refuses such checkpoints.

    Returns:
        The model in evaluation mode on `device`, its tokenizer and the separator's id.

    Raises:
        PRMLoadError: no separator token, no trained two-class head, or an unreadable checkpoint.
        ValueError: CUDA requested on a machine without it, or an unknown dtype.
    """
    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, torch_device)
    layout = checkpoint_layout(checkpoint)
    if layout == "adapter":
        model, tokenizer = _load_adapter(Path(checkpoint), torch_dtype, trust_remote_code)
    else:
        model, tokenizer = _load_full(checkpoint, layout, torch_dtype, trust_remote_code)
    sep_id = separator_id(tokenizer, checkpoint)
    model.config.pad_token_id = tokenizer.pad_token_id
    model = moved(model, device=torch_device, dtype=torch_dtype).eval()
    logger.info("loaded PRM %s (%s layout) on %s in %s", checkpoint, layout, torch_device, torch_dtype)
    return LoadedPRM(model=model, tokenizer=tokenizer, separator_id=sep_id, device=torch_device,
                     dtype=torch_dtype, layout=layout)


def _load_full(checkpoint: str | Path, layout: str, torch_dtype: torch.dtype,
               trust_remote_code: bool | None) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    from transformers import AutoModel, AutoModelForTokenClassification

    remote = layout == "remote-code"
    if remote and trust_remote_code is False:
        raise PRMLoadError(f"{checkpoint}: this checkpoint ships its own model code "
                           "(Qwen2ForProcessRewardModel layout) and trust_remote_code is False")
    tokenizer = load_tokenizer(checkpoint, trust_remote_code=remote)
    # Check the separator before reading gigabytes of weights.
    separator_id(tokenizer, checkpoint)
    loader = AutoModel if remote else AutoModelForTokenClassification
    try:
        model, info = loader.from_pretrained(str(checkpoint), dtype=torch_dtype, trust_remote_code=remote,
                                             output_loading_info=True)
    except (OSError, ValueError) as exc:
        raise PRMLoadError(f"{checkpoint}: cannot load the model ({exc})") from exc
    check_head(model, checkpoint, list(info.get("missing_keys", [])))
    return model, tokenizer


def _load_adapter(checkpoint: Path, torch_dtype: torch.dtype,
                  trust_remote_code: bool | None) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    from peft import PeftModel

    base = _read_json(checkpoint / "adapter_config.json").get("base_model_name_or_path")
    if not base:
        raise PRMLoadError(f"{checkpoint / 'adapter_config.json'}: no base_model_name_or_path")
    base_layout = checkpoint_layout(base)
    if base_layout == "adapter":
        raise PRMLoadError(f"{checkpoint}: the adapter's base {base} is itself an adapter")
    model, base_tokenizer = _load_full(base, base_layout, torch_dtype, trust_remote_code)
    has_tokenizer = any((checkpoint / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json"))
    tokenizer = load_tokenizer(checkpoint) if has_tokenizer else base_tokenizer
    model = PeftModel.from_pretrained(model, str(checkpoint)).merge_and_unload()
    return model, tokenizer
