"""Continuing a LoRA adapter: a stage after the first trains the adapter the stage before it ended with."""

from __future__ import annotations


def starting_model(model: str, adapter: str | None, args, peft_config):
    """``(model, tokenizer, peft_config)`` for GRPOTrainer: the model name as it is (TRL loads it, and wraps it in
    ``peft_config``), or with ``adapter`` the base model with that LoRA adapter loaded trainable, and its tokenizer."""
    if adapter is None:
        return model, None, peft_config
    from peft import PeftModel
    from transformers import AutoTokenizer
    from trl.trainer.utils import create_model_from_path

    base = create_model_from_path(model, **dict(args.model_init_kwargs or {}))
    return PeftModel.from_pretrained(base, adapter, is_trainable=True), AutoTokenizer.from_pretrained(adapter), None
