"""Episodes outside training, for `grpo-run sample`, the comparison after a run and the held-out probe: the model
answers, its tool calls are run on the row's environment, their answers are appended, and it goes on, as TRL's tool
loop does in training.

The token stream is built the way GRPOTrainer builds it: the prompt rendered with the environment's tools, each
generated turn kept as generated (cut after its end-of-turn token), and the tool answers appended as the chat template
renders a tool message. ``max_new_tokens`` bounds the whole completion, generated and tool tokens together, as
``max_completion_length`` does in training; a tool answer that would cross it ends the episode without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from grpo_core.plugins.loading import Environment
from grpo_core.settings.declared import DEFAULT_TOOL_TIMEOUT_S, DEFAULT_TOOL_TURNS
from grpo_core.training import trl_contract
from grpo_core.training.generation import generate_ids, sampling_args
from grpo_core.training.tools import ToolStats, environment_factory


@dataclass
class EpisodeSettings:
    """How episodes outside training run: the environments, the tool-calling turns an episode may make, each call's
    time limit, and the chat template that renders tools (None: the tokenizer's own)."""

    environments: list[Environment]
    turns: int = DEFAULT_TOOL_TURNS
    seconds: float = DEFAULT_TOOL_TIMEOUT_S
    chat_template: str | None = None

    @classmethod
    def of_run(cls, run) -> EpisodeSettings | None:
        """A run's episode settings (None for a run without environments)."""
        if not run.environments:
            return None
        return cls(run.environments, int(run.grpo.get("max_tool_calling_iterations") or DEFAULT_TOOL_TURNS),
                   run.settings.tool_timeout, run.chat_template)


@dataclass
class Rollout:
    """One episode in progress: its environment instance, the tools it offers, its token ids so far and its
    messages after the prompt."""

    instance: object
    tools: list
    prompt_ids: list
    ids: list  # the completion's tokens: generated turns and tool answers
    messages: list
    turns: int = 0
    done: bool = False


def tool_calls_made(messages: list) -> int:
    """The tool calls an episode made."""
    return sum(len(m.get("tool_calls") or ()) for m in messages if isinstance(m, dict))


def run_episodes(model, tokenizer, rows, settings: EpisodeSettings, max_new_tokens: int, temperature: float = 0.0,
                 batch_size: int = 64, top_k: int = 0) -> tuple[list[list[dict]], list]:
    """One episode per row of ``rows`` (a dataset with a conversational ``prompt`` column): each episode's messages
    after the prompt (assistant turns, with their ``tool_calls``, and tool answers) and its environment instance,
    which a reward reads as TRL's ``environments`` argument."""
    import torch

    if settings.chat_template is not None:
        tokenizer.chat_template = settings.chat_template
    tokenizer = trl_contract.with_response_schema(tokenizer)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    factories = environment_factory(settings.environments, settings.seconds, ToolStats())
    rollouts = [_start(tokenizer, factories, settings.environments, dict(row)) for row in rows]
    ends = _end_ids(model, tokenizer)
    while True:
        active = [r for r in rollouts if not r.done]
        if not active:
            break
        for start in range(0, len(active), batch_size):
            batch = active[start:start + batch_size]
            budget = max(max_new_tokens - min(len(r.ids) for r in batch), 1)
            with torch.inference_mode():
                output, width = generate_ids(model, tokenizer.pad_token_id, [r.prompt_ids + r.ids for r in batch],
                                             max_new_tokens=budget, **sampling_args(temperature, top_k))
            for rollout, row in zip(batch, output[:, width:].tolist()):
                _take_turn(tokenizer, rollout, _until_end(row, ends)[:max_new_tokens - len(rollout.ids)],
                           settings.turns, max_new_tokens)
    return [r.messages for r in rollouts], [r.instance for r in rollouts]


def _start(tokenizer, factories, environments: list[Environment], row: dict) -> Rollout:
    several = isinstance(factories, dict)  # each row names its environment, as validate_environment_column checked
    name = (row.get("environment") if several else None) or environments[0].name
    environment = {e.name: e for e in environments}[name]
    factory = factories[name] if several else factories
    instance = factory()
    reset_row = {k: v for k, v in row.items() if k != "environment"} if several else row
    observation = instance.reset(**reset_row)
    prompt = [dict(m) for m in row["prompt"]]
    if isinstance(observation, str) and observation and isinstance(prompt[-1].get("content"), str):
        prompt[-1]["content"] += observation
    tools = [getattr(instance, name) for name in environment.spec.tool_names()]
    prompt_ids = tokenizer.apply_chat_template(prompt, tools=tools or None, add_generation_prompt=True,
                                               tokenize=True, return_dict=True)["input_ids"]
    return Rollout(instance, tools, list(prompt_ids), [], [])


def _end_ids(model, tokenizer) -> set:
    ends = model.generation_config.eos_token_id
    ends = set(ends if isinstance(ends, (list, tuple)) else [ends] if ends is not None else [])
    return ends | ({tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set())


def _until_end(ids: list, ends: set) -> list:
    """A generated turn up to and with its first end-of-turn token (the padding after it dropped)."""
    for index, token in enumerate(ids):
        if token in ends:
            return ids[:index + 1]
    return ids


def _take_turn(tokenizer, rollout: Rollout, generated: list, turns: int, max_new_tokens: int) -> None:
    """Read the turn just generated; run the tools it asks for, unless its turns or its token budget are used up."""
    message = trl_contract.parse_reply(tokenizer, generated, rollout.prompt_ids + rollout.ids, rollout.tools)
    rollout.ids += generated
    rollout.messages.append(message)
    calls = message.get("tool_calls") or []
    if not calls or rollout.turns >= turns or len(rollout.ids) >= max_new_tokens:
        rollout.done = True
        return
    rollout.turns += 1
    answers = [_call(rollout.tools, call) for call in calls]
    suffix = trl_contract.tool_suffix_ids(tokenizer, answers)
    if len(rollout.ids) + len(suffix) >= max_new_tokens:  # as in training: the answers would cross the budget
        rollout.done = True
        return
    rollout.ids += suffix
    rollout.messages += answers


def _call(tools: list, call: dict) -> dict:
    """A tool call's answer as a tool message; what TRL answers for a call that fails (an error the model reads)."""
    function = call.get("function") or {}
    name = function.get("name", "unknown")
    found = {tool.__name__: tool for tool in tools}.get(name)
    try:
        if call.get("type", "function") != "function":
            raise ValueError(f"Unsupported tool call type: {call.get('type')}")
        if found is None:
            raise ValueError(f"Tool {name} not found.")
        arguments = function.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise ValueError(f"the arguments of {name} are not an object of named values")
        result = found(**arguments)
    except Exception as error:  # noqa: BLE001 - any failure of a tool is the model's to read, as in training
        result = {"error": str(error)}
    return {"role": "tool", "name": name, "content": result if isinstance(result, list) else str(result)}
