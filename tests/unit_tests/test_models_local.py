"""local:<path> models: a tiny random transformers checkpoint built here, with and without a chat template."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from langchain_core.messages import HumanMessage, SystemMessage
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from reso.agents.adapters.loader import load_chat_model
from reso.agents.adapters.local import LocalChatModel
from reso.agents.profiles import ModelSpec

SENTENCES = [
    "System : You are an expert in Algebra .",
    "User : What is two plus three ?",
    "Assistant : The answer is five .",
    "<|system|> <|user|> <|assistant|> numbers add up to a sum",
]
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
MESSAGES = [SystemMessage("You are an expert in Algebra."), HumanMessage("What is two plus three?")]


def _checkpoint(folder: Path, chat_template: str | None) -> Path:
    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    specials = ["[UNK]", "[PAD]", "[BOS]", "[EOS]"]
    tokenizer.train_from_iterator(SENTENCES, trainers.WordLevelTrainer(special_tokens=specials))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]",
                                                pad_token="[PAD]", bos_token="[BOS]", eos_token="[EOS]")
    if chat_template:
        fast.chat_template = chat_template
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=fast.vocab_size, hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                                      max_position_embeddings=128, bos_token_id=fast.bos_token_id,
                                      eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def plain_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _checkpoint(tmp_path_factory.mktemp("plain"), None)


@pytest.fixture(scope="module")
def templated_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _checkpoint(tmp_path_factory.mktemp("templated"), TEMPLATE)


def _reference_generation(folder: Path, prompt: str, add_special_tokens: bool, max_new_tokens: int) -> list[int]:
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    encoded = tokenizer(prompt, return_tensors="pt", add_special_tokens=add_special_tokens)
    output = model.generate(input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"],
                            max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id)
    return output[0, encoded["input_ids"].shape[1]:].tolist()


def test_plain_prompt_without_a_chat_template(plain_checkpoint: Path) -> None:
    model = load_chat_model(ModelSpec(spec=f"local:{plain_checkpoint}", params={"max_new_tokens": 6}))
    assert isinstance(model, LocalChatModel) and not model.has_chat_template
    prompt = model.render_prompt(MESSAGES)
    assert prompt == "System: You are an expert in Algebra.\n\nUser: What is two plus three?\n\nAssistant:"
    reply = model.invoke(MESSAGES)
    tokenizer = transformers.AutoTokenizer.from_pretrained(plain_checkpoint)
    assert reply.usage_metadata["input_tokens"] == len(tokenizer(prompt)["input_ids"])
    generated = _reference_generation(plain_checkpoint, prompt, True, 6)
    eos = tokenizer.eos_token_id
    expected = generated[: generated.index(eos) + 1] if eos in generated else generated
    assert reply.usage_metadata["output_tokens"] == len(expected) > 0
    decoded = tokenizer.decode(expected, skip_special_tokens=True)
    for label in ("System", "User", "Assistant"):
        decoded = decoded.split(f"\n\n{label}:")[0]
    assert reply.text == decoded.strip()
    assert model.device == "cpu"


def test_chat_template_is_used_when_the_tokenizer_has_one(templated_checkpoint: Path) -> None:
    model = LocalChatModel(model_path=str(templated_checkpoint), max_new_tokens=4)
    assert model.has_chat_template
    prompt = model.render_prompt(MESSAGES)
    assert prompt == ("<|system|> You are an expert in Algebra. <|user|> What is two plus three? "
                      "<|assistant|>")
    reply = model.invoke(MESSAGES)
    tokenizer = transformers.AutoTokenizer.from_pretrained(templated_checkpoint)
    assert reply.usage_metadata["input_tokens"] == len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    assert 0 < reply.usage_metadata["output_tokens"] <= 4


def test_greedy_generation_is_deterministic(templated_checkpoint: Path) -> None:
    model = LocalChatModel(model_path=str(templated_checkpoint), max_new_tokens=4)
    assert model.invoke(MESSAGES).text == model.invoke(MESSAGES).text


def test_gguf_chat_template_is_read_from_the_file_metadata(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    from reso.agents.adapters.local import gguf_chat_template

    def write(path: Path, template: str | None) -> Path:
        writer = gguf.GGUFWriter(str(path), arch="llama")
        if template is not None:
            writer.add_chat_template(template)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        return path

    assert gguf_chat_template(write(tmp_path / "with.gguf", TEMPLATE)) == TEMPLATE
    assert gguf_chat_template(write(tmp_path / "without.gguf", None)) is None
