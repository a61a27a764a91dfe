"""Episodes outside training (grpo-run sample, the comparison, the probe): the model's tool calls are run on the row's
environment, their answers reach the model's next turn as the chat template renders them, and the episode is scored
with its environment as in training.

The model here is scripted: it reads its whole input (the prompt the chat template rendered with the tools, and any tool
answers) and writes what a model that learned the tool would, so the loop around it is what is tested."""

import json
import re

import pytest
import torch

from grpo_core import load_dataset
from grpo_core.plugins.loading import episode_rewards, load_environments, load_rewards, model_path
from grpo_core.training import trl_contract
from grpo_core.training.rollouts import EpisodeSettings, run_episodes, tool_calls_made
from grpo_core.training.sample import format_comparison, generate_and_score

from cli_helpers import invoke


class Scripted:
    """A causal LM stand-in (one row a batch: it runs no forward pass for a shared prompt head): before any tool answer it asks ``multiply`` for the question's two numbers (``calls``
    times in one turn, or as ``arguments`` says), after one it answers with the number the tool gave."""

    def __init__(self, tokenizer, calls=1, arguments=None, answer_first=False):
        self.tokenizer, self.calls, self.arguments, self.answer_first = tokenizer, calls, arguments, answer_first
        self.generation_config = type("Config", (), {"eos_token_id": tokenizer.eos_token_id})()
        self.inputs = []

    def generate(self, input_ids, attention_mask=None, max_new_tokens=64, pad_token_id=None, **_):
        replies = []
        for ids in input_ids.tolist():
            text = self.tokenizer.decode(ids)
            self.inputs.append(text)
            replies.append(self.tokenizer.encode(self.reply(text), add_special_tokens=False)[:max_new_tokens])
        width = max(len(r) for r in replies)
        padded = [r + [pad_token_id] * (width - len(r)) for r in replies]
        return torch.cat([input_ids, torch.tensor(padded, dtype=input_ids.dtype)], dim=1)

    def reply(self, text: str) -> str:
        answers = re.findall(r"<tool_response>\s*(.*?)\s*</tool_response>", text, re.DOTALL)
        if answers or self.answer_first:
            return f"<answer>{answers[-1] if answers else 0}</answer><|im_end|>"
        a, b = re.findall(r"What is (\d+) × (\d+)", text)[-1]
        arguments = self.arguments or {"a": a, "b": b}
        call = json.dumps({"name": "multiply", "arguments": arguments})
        return "".join(f"<tool_call>\n{call}\n</tool_call>" for _ in range(self.calls)) + "<|im_end|>"


@pytest.fixture(scope="module")
def tokenizer(cache_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path("tiny-random"))


@pytest.fixture(scope="module")
def rows():
    return load_dataset("products", {"size": 6})


def settings(**changes):
    return EpisodeSettings(load_environments(["calculator"]), chat_template=trl_contract.tool_template(), **changes)


def test_a_tool_call_is_run_and_its_answer_reaches_the_next_turn(tokenizer, rows):
    model = Scripted(tokenizer)
    episodes, instances = run_episodes(model, tokenizer, rows, settings(), max_new_tokens=200, batch_size=1)
    for row, messages, instance in zip(rows, episodes, instances):
        assert [m["role"] for m in messages] == ["assistant", "tool", "assistant"]
        assert messages[0]["tool_calls"][0]["function"]["name"] == "multiply"
        assert messages[1] == {"role": "tool", "name": "multiply", "content": row["answer"]}
        assert messages[2]["content"] == f"<answer>{row['answer']}</answer>"
        assert instance.get_reward() == 1.0
    first = model.inputs[0]
    assert "<tools>" in first and '"name": "multiply"' in first  # the prompt was rendered with the tools
    assert first.count("<|im_start|>assistant") == 1


def test_the_episode_is_scored_by_the_rewards_and_the_environment_as_in_training(tokenizer, rows):
    rewards = load_rewards(["math"], params={"math": {"extract": "answer-tag"}}, dataset="products")
    rewards += episode_rewards(load_environments(["calculator"]))
    result = generate_and_score(Scripted(tokenizer), tokenizer, rows, rewards, 200, batch_size=1, episodes=settings())
    assert result["means"] == {"math": 1.0, "calculator": 1.0}
    assert result["tool_share"] == 1.0
    assert all(sample["tool_calls"] == 1 for sample in result["samples"])
    answered = Scripted(tokenizer, answer_first=True)  # answers 0 without the tool: paid nothing by either
    result = generate_and_score(answered, tokenizer, rows, rewards, 200, batch_size=1, episodes=settings())
    assert result["means"] == {"math": 0.0, "calculator": 0.0} and result["tool_share"] == 0.0
    assert "tool-use" in format_comparison([{**result, "model": "scripted"}])


def test_tool_turns_stop_at_the_limit(tokenizer, rows):
    model = Scripted(tokenizer, arguments={"a": "1", "b": "1"})  # a model that never answers, only calls
    model.reply = lambda text: ('<tool_call>\n{"name": "multiply", "arguments": {"a": "1", "b": "1"}}\n</tool_call>'
                                "<|im_end|>")
    episodes, _ = run_episodes(model, tokenizer, rows.select(range(2)), settings(turns=2), 400, batch_size=1)
    for messages in episodes:
        assert tool_calls_made(messages) == 3  # two turns ran their call; the third asked and was not run
        assert [m["role"] for m in messages] == ["assistant", "tool", "assistant", "tool", "assistant"]


def test_the_token_budget_bounds_the_whole_episode(tokenizer, rows):
    model = Scripted(tokenizer)
    first = len(tokenizer.encode(model.reply("What is 12 × 34"), add_special_tokens=False))
    episodes, _ = run_episodes(model, tokenizer, rows.select(range(1)), settings(), max_new_tokens=first + 5)
    assert [m["role"] for m in episodes[0]] == ["assistant"]  # the tool's answer would cross the budget


def test_bad_calls_are_answered_with_errors_the_model_reads(tokenizer, rows):
    model = Scripted(tokenizer, arguments={"a": None, "b": [1, 2]})
    episodes, instances = run_episodes(model, tokenizer, rows.select(range(1)), settings(), 300)
    assert episodes[0][1]["content"].startswith("error: not a number: None")
    assert instances[0].get_reward() == 0.0
    unknown = Scripted(tokenizer)
    unknown.reply = lambda text: ("<answer>1</answer><|im_end|>" if "<tool_response>" in text else
                                  '<tool_call>\n{"name": "rm", "arguments": {"path": "/"}}\n</tool_call><|im_end|>')
    episodes, _ = run_episodes(unknown, tokenizer, rows.select(range(1)), settings(), 300)
    assert episodes[0][1] == {"role": "tool", "name": "rm", "content": "{'error': 'Tool rm not found.'}"}


def test_a_hanging_tool_is_cut_off_and_the_episode_goes_on(tokenizer, rows, monkeypatch):
    from grpo_env_calculator import Calculator

    monkeypatch.setattr(Calculator, "multiply", _sleepy(Calculator.multiply))
    episodes, _ = run_episodes(Scripted(tokenizer), tokenizer, rows.select(range(1)), settings(seconds=0.2), 300)
    assert "took longer than 0.2 s" in episodes[0][1]["content"]
    assert episodes[0][2]["role"] == "assistant"


def _sleepy(multiply):
    import functools
    import time

    @functools.wraps(multiply)
    def slow(self, a: str, b: str) -> str:
        time.sleep(3)
        return multiply(self, a, b)

    return slow


def test_sample_with_an_environment_writes_the_episodes(cache_dir, tmp_path):
    out = tmp_path / "samples.jsonl"
    code, output = invoke("sample", "--model", "tiny-random", "--dataset", "products", "--dataset-arg", "size=10",
                          "--reward", "math", "--env", "calculator", "-n", "2", "--max-new-tokens", "8",
                          "--output", str(out), "--json")
    assert code == 0, output
    means, _ = json.JSONDecoder().raw_decode(output[output.index("[\n"):])  # a broken plugin's warning may follow
    assert means[0]["tool_share"] == 0.0 and set(means[0]["means"]) == {"math", "calculator"}
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 2 and all(r["completion"][0]["role"] == "assistant" for r in records)
    assert all(r["tool_calls"] == 0 and r["calculator"] == 0.0 for r in records)


def test_sample_refuses_an_unknown_environment_before_loading_a_model(tmp_path):
    code, output = invoke("sample", "--model", "tiny-random", "--dataset", "products", "--reward", "math",
                          "--env", "abacus", "-n", "2")
    assert code == 2, output
    assert "abacus" in output and "Traceback" not in output
