"""Reward models built once per session in a temporary folder: the small trained one, two biased on purpose (length,
an injected word), and two that are not reward models (two labels; a causal language model)."""

import pytest

from grpo_core.testing import fresh_registry_fixture, offline_hub

offline_hub()
fresh_registry = fresh_registry_fixture()



@pytest.fixture(scope="session")
def small_model(tmp_path_factory):
    from grpo_reward_model.train import train_reward_model

    # the README's model (200 steps of 32 pairs): 63 s on the idle 2-core machine
    return str(train_reward_model(tmp_path_factory.mktemp("small-reward-model"), steps=200, size=6400,
                                  log=lambda line: None))


@pytest.fixture(scope="session")
def untrained_model(tmp_path_factory):
    """A reward model of the small one's shape, untrained: for what does not depend on its weights (speed, serving,
    training mechanics)."""
    from transformers import AutoTokenizer

    from grpo_core import resolve_model
    from grpo_reward_model.train import tiny_reward_model

    folder = tmp_path_factory.mktemp("untrained-reward-model")
    tokenizer = AutoTokenizer.from_pretrained(resolve_model("tiny-random"))
    tiny_reward_model(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="session")
def biased_model(tmp_path_factory):
    """``biased_model(kind)``: the folder of the ``kind`` (length, injection) biased model, built on first use."""
    from grpo_reward_model.biased import build_biased_model

    built = {}

    def get(kind: str) -> str:
        if kind not in built:
            built[kind] = str(build_biased_model(kind, tmp_path_factory.mktemp(f"{kind}-biased")))
        return built[kind]

    return get


@pytest.fixture(scope="session")
def not_reward_models(tmp_path_factory):
    """{"two labels": folder, "causal LM": folder}: tiny models that are not reward models."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM, LlamaForSequenceClassification

    from grpo_core import resolve_model

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("tiny-random"))
    config = dict(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, num_key_value_heads=1, pad_token_id=tokenizer.pad_token_id)
    folders = {}
    for label, model in (("two labels", LlamaForSequenceClassification(LlamaConfig(**config, num_labels=2))),
                         ("causal LM", LlamaForCausalLM(LlamaConfig(**config)))):
        folder = tmp_path_factory.mktemp(label.replace(" ", "-"))
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        folders[label] = str(folder)
    return folders
