"""What grpo-core relies on inside TRL beyond its documented API, each named with why, in one place.

TRL has no public hook for a generation batch's gathered per-reward scores, nor for its last batch of completions
without turning on ``log_completions`` (which prints tables and writes parquet files into the output folder), nor
for saving a checkpoint outside its training loop; its model card and its log lines are text grpo-core reads. Every
such name and text is used here and nowhere else. ``missing()`` checks an installed TRL still has each;
tests/test_trl.py fails, naming the reliance, when one goes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from grpo_core.errors import UsageError

# Each reliance: the attribute, why grpo-core needs it, and source text of GRPOTrainer that shows it is still used so.
RELIED_ON = {
    "GRPOTrainer.reward_weights": (
        "the weight schedules set this tensor before each step; TRL must read it again for every batch's weighted sum",
        "self.reward_weights.to(",
    ),
    "GRPOTrainer._calculate_rewards": (
        "adaptive weights and the health signals observe each reward's scores of a generation batch, gathered over "
        "all processes, in the (completions x rewards) table it returns, and a control run replaces them",
        "rewards_per_func = self._calculate_rewards(",
    ),
    "GRPOTrainer._logs": (
        "completions.jsonl samples the last generation batch's prompts, completions and per-reward scores it keeps "
        "(keys prompt, completion, rewards)",
        'self._logs["rewards"][',
    ),
    "GRPOTrainer._get_per_token_logps_and_entropies": (
        "completions of one prompt share its forward pass (shared_prompts): the function is replaced on the trainer "
        "by one that calls the model as TRL does, through TRL's fused head, with the prompt's cache",
        "outputs = model(**model_inputs, labels=labels, fused_lm_head=True)",
    ),
    "GRPOTrainer._save_checkpoint": (
        "a run that a reward stopped mid-step saves its finished steps as the checkpoint a Ctrl-C saves (model, "
        "optimizer and trainer state, and TRL's model card), so --resume continues it",
        "self.create_model_card(",
    ),
}
# Module-level functions of TRL relied on: the dotted name -> why.
FUNCTIONS = {
    "trl.trainer.utils.create_model_from_path": (
        "a stage that continues a LoRA adapter loads its base model as GRPOTrainer loads a model from "
        "model_init_kwargs (dtype names, device placement, the architecture from the config)"
    ),
    "trl.chat_template_utils.parse_response": (
        "episodes outside training (sample, the comparison, the probe) read a generated turn's tool calls as "
        "GRPOTrainer reads them in training (parse_reply)"
    ),
}
# Text TRL writes that grpo-core reads: the name -> (why, the module whose source holds it, the text).
TEXTS = {
    "the unnamed base model in the model card": (
        "TRL names a base model loaded from a local folder None in its card; the card is rewritten to name the model "
        "the run used (name_base_model)",
        "trl.templates/lm_model_card.md",
        "[{{ base_model }}](https://huggingface.co/{{ base_model }})",
    ),
    "the model card's pipeline line": (
        "the card's quick start loads model=\"None\" for a run without a hub id; it is rewritten to the final folder",
        "trl.templates/lm_model_card.md",
        'model="{{ hub_model_id }}"',
    ),
    "how an environment's tools and reward are found": (
        "GRPOTrainer lists the functions of an environment's class: public ones become tools and get_reward becomes "
        "a reward of its own; grpo-core hides get_reward from that list (environment_factory) and scores the "
        "episode through its own Reward, with declared bounds and unscored episodes counted",
        "trl.trainer.grpo_trainer",
        'inspect.getmembers(type(instance), predicate=inspect.isfunction)',
    ),
    "the ChatML tool-calling chat template": (
        "a model whose own template cannot render tool calls but that speaks ChatML (SmolLM2, Qwen) is given this "
        "template of TRL's (tool_template)",
        "trl/chat_templates/qwen2_5.jinja",
        "<tool_call>",
    ),
    "the log line of rows no reward scored": (
        "TRL logs it for every such row, each step; MonitorCallback says it once, in plain words, so it is filtered",
        "trl.trainer.grpo_trainer",
        "All reward functions returned None",
    ),
}
UNSCORED_ROWS_LOG = TEXTS["the log line of rows no reward scored"][2]


def missing(trainer_class=None, functions: dict | None = None, texts: dict | None = None) -> list[str]:
    """Each reliance the installed TRL's GRPOTrainer (or ``trainer_class``), its functions and its texts (or
    ``functions`` and ``texts``, shaped like FUNCTIONS and TEXTS) no longer meet, in words naming it."""
    if trainer_class is None:
        from trl import GRPOTrainer as trainer_class
    source = inspect.getsource(trainer_class)
    problems = []
    for name, (why, used) in RELIED_ON.items():
        attribute = name.split(".", 1)[1]
        defined = hasattr(trainer_class, attribute) or f"self.{attribute} =" in source
        if not defined or used not in source:
            problems.append(f"TRL's {name} is gone or no longer used as grpo-core expects ({used!r} not found): "
                            f"grpo-core needs it because {why}")
    for name, why in (FUNCTIONS if functions is None else functions).items():
        if not callable(_function(name)):
            problems.append(f"TRL's {name} is gone: grpo-core needs it because {why}")
    for name, (why, where, text) in (TEXTS if texts is None else texts).items():
        if text not in _source_text(where):
            problems.append(f"TRL no longer writes {name} ({text!r} not found in {where}): grpo-core reads it "
                            f"because {why}")
    return problems


def _function(dotted: str):
    import importlib

    module, _, name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def _source_text(where: str) -> str:
    """The text of a module's source (``package.module``) or of a data file in a package (``package/file``)."""
    import importlib
    from importlib import resources

    try:
        if "/" in where:
            package, _, path = where.partition("/")
            return resources.files(package).joinpath(path).read_text(encoding="utf-8")
        return inspect.getsource(importlib.import_module(where))
    except (ImportError, OSError):
        return ""


def save_checkpoint(trainer) -> None:
    """Save ``trainer``'s checkpoint of the current step as its training loop does (see RELIED_ON)."""
    trainer._save_checkpoint(trainer.model, trial=None)


def load_base_model(path: str, model_init_kwargs: dict):
    """The model at ``path``, loaded as GRPOTrainer loads one from ``model_init_kwargs`` (see FUNCTIONS)."""
    from trl.trainer.utils import create_model_from_path

    return create_model_from_path(path, **dict(model_init_kwargs or {}))


def name_base_model(card: str, named: str, final: str) -> str:
    """TRL's model card ``card`` with the base model it could not name (a local folder: ``None``) named ``named``,
    and its quick start loading ``final`` (see TEXTS)."""
    return (card.replace("[None](https://huggingface.co/None)", named)
            .replace('model="None"', f'model="{final}"'))


CHATML_TOOL_TEMPLATE = "qwen2_5"  # TRL's template for the ChatML tokens: <|im_start|>role ... <|im_end|>


def tool_template(name: str = CHATML_TOOL_TEMPLATE) -> str:
    """The text of the chat template TRL ships as ``chat_templates/<name>.jinja`` (see TEXTS)."""
    from importlib import resources

    return resources.files("trl").joinpath(f"chat_templates/{name}.jinja").read_text(encoding="utf-8")


class _HiddenMethod:
    """A method that TRL's listing of an environment class's functions does not see, still a method of each
    instance."""

    def __init__(self, function) -> None:
        self.function = function

    def __get__(self, instance, owner=None):
        return self if instance is None else self.function.__get__(instance, owner)


def environment_factory(cls: type, params: dict, hide_reward: bool, methods: dict | None = None):
    """What ``GRPOTrainer(environment_factory=...)`` takes for ``cls``: instances of a subclass with ``methods``
    in place of the class's own, made with ``params``; with ``hide_reward``, its ``get_reward`` is not TRL's reward
    too (grpo-core scores it; see TEXTS)."""
    import functools

    replaced = dict(methods or {})
    if hide_reward:
        replaced["get_reward"] = _HiddenMethod(cls.get_reward)
    made = type(cls.__name__, (cls,), {**replaced, "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                       "__doc__": cls.__doc__}) if replaced else cls
    return functools.partial(made, **params)


def per_token_logps(trainer) -> Callable:
    """The trainer's function of a batch's per-token log-probabilities (and entropies), TRL's own or a replacement."""
    return trainer._get_per_token_logps_and_entropies


def replace_per_token_logps(trainer, function: Callable) -> None:
    """Make ``function`` (called as TRL calls its own) give the trainer's per-token log-probabilities."""
    trainer._get_per_token_logps_and_entropies = function


def set_reward_weights(trainer, weights: list[float]) -> None:
    """Make TRL weigh the rewards by ``weights`` from the next batch on (see RELIED_ON)."""
    import torch

    trainer.reward_weights = torch.tensor(weights, dtype=torch.float32)


def change_rewards(trainer, changes: list[Callable]) -> None:
    """From the next training batch on, TRL uses the batch's scores passed through ``changes`` in order, each called
    as ``change(table, prompts, completions, completion_ids)`` with what the one before returned: ``table`` is the
    (completions x rewards) tensor gathered over all processes, the others this process's part of the batch as TRL
    passes them to the rewards. Evaluation batches are left as they are. Called once per trainer."""
    calculate = getattr(trainer, "_calculate_rewards", None)
    if calculate is None:
        raise UsageError("grpo-core needs TRL's GRPOTrainer._calculate_rewards, which this TRL version lacks; use the "
                         "TRL version grpo-core requires")

    def calculate_and_change(inputs, prompts, completions, completion_ids_list):
        table = calculate(inputs, prompts, completions, completion_ids_list)
        if not trainer.model.training:
            return table
        for change in changes:
            table = change(table, prompts, completions, completion_ids_list)
        return table

    trainer._calculate_rewards = calculate_and_change


def last_batch(trainer) -> tuple[list, list, dict[str, list]] | None:
    """The last generation batch as ``(prompts, completions, {reward: scores})``; None before the first one."""
    logs = getattr(trainer, "_logs", None)
    if not logs or not logs.get("completion"):
        return None
    return list(logs["prompt"]), list(logs["completion"]), {name: list(v) for name, v in logs["rewards"].items()}


def stored_attributes(state, callback_name: str) -> dict:
    """The attributes a callback's ``state()`` saved in the checkpoint a run resumes from, {} without one.

    transformers keeps them in ``TrainerState.stateful_callbacks``, keyed by class name, as a dict or, for several
    callbacks of one class, a list of them; the first is this run's.
    """
    stored = (state.stateful_callbacks or {}).get(callback_name)
    if isinstance(stored, list):
        stored = stored[0] if stored else None
    return (stored or {}).get("attributes") or {}


def with_response_schema(tokenizer):
    """``tokenizer`` able to read tool calls back from its chat template's output, as GRPOTrainer makes it."""
    from trl import add_response_schema

    if getattr(tokenizer, "response_template", None) is None and getattr(tokenizer, "response_schema", None) is None:
        tokenizer = add_response_schema(tokenizer)
    return tokenizer


def parse_reply(tokenizer, ids: list[int], prefix: list[int], tools: list) -> dict:
    """A generated turn ``ids`` (after the tokens ``prefix``) as the assistant message GRPOTrainer reads from it, with
    its ``tool_calls`` (see FUNCTIONS)."""
    from trl.chat_template_utils import parse_response

    message = parse_response(tokenizer, ids, prefix=prefix, tools=tools or None)
    return {"role": "assistant", **message}


def tool_suffix_ids(tokenizer, tool_messages: list[dict]) -> list[int]:
    """The tokens the chat template puts after an assistant turn that asked for tools: the tool answers and the next
    assistant header. Made as GRPOTrainer makes them in training: a minimal conversation rendered without and with
    the tool messages, the first cut after its last end-of-turn token."""
    dummy = [{"role": "user", "content": "dummy"},
             {"role": "assistant", "content": "",
              "tool_calls": [{"type": "function", "function": {"name": tool_messages[0]["name"], "arguments": {}}}]}]
    prefix = tokenizer.apply_chat_template(dummy, add_generation_prompt=False, tokenize=True, return_dict=False)
    full = tokenizer.apply_chat_template(dummy + tool_messages, add_generation_prompt=True, tokenize=True,
                                         return_dict=False)
    ends = [i for i, token in enumerate(prefix) if token == tokenizer.eos_token_id]
    if ends:
        prefix = prefix[:ends[-1] + 1]
    if full[:len(prefix)] != prefix:
        raise ValueError("the chat template renders an assistant turn differently once tool answers follow it; "
                         "episodes cannot be continued with it")
    return list(full[len(prefix):])
