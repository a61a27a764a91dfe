"""Tool calling: the chat template a run's model renders tools with, chosen before the model loads, and TRL's
``environment_factory`` for the run's environments."""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections import defaultdict
from pathlib import Path

from grpo_core.checks.executor import Hung, watched
from grpo_core.errors import UsageError
from grpo_core.plugins import get_registry
from grpo_core.plugins.loading import Environment, model_path
from grpo_core.training import trl_contract

CHATML = "<|im_start|>"


def chat_template(model_path: str, model: str, given: str | None) -> tuple[str | None, str]:
    """``(template, where it comes from)`` for a run with tools: the model's own when it can render a tool-calling
    conversation (template None: keep it), else TRL's ChatML tool template for a model that speaks ChatML, else
    ``given`` (``--chat-template FILE``); a UsageError naming that option when none fits."""
    from transformers import AutoTokenizer
    from trl import supports_tool_calling

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    if given is not None:
        path = Path(given)
        if not path.is_file():
            raise UsageError(f"--chat-template '{given}' is not a file; give a Jinja chat template file")
        tokenizer.chat_template = path.read_text(encoding="utf-8")
        if not supports_tool_calling(tokenizer):
            raise UsageError(f"--chat-template '{given}' cannot render a tool-calling conversation (user, assistant "
                             "with tool_calls, tool); give a template that renders tools and tool calls")
        _validate_readable(tokenizer, f"--chat-template '{given}'")
        return tokenizer.chat_template, f"--chat-template {given}"
    if supports_tool_calling(tokenizer):
        _validate_readable(tokenizer, f"model '{model}': its chat template")
        return None, "the model's own (it renders tool calls)"
    own = tokenizer.chat_template if isinstance(tokenizer.chat_template, str) else ""
    if CHATML in own:
        name = trl_contract.CHATML_TOOL_TEMPLATE
        return trl_contract.tool_template(name), f"TRL's {name}.jinja (the model speaks ChatML; its own template " \
                                                 "renders no tools)"
    raise UsageError(f"model '{model}': its chat template cannot render tool calls, and grpo-core knows no tool "
                     "template for its token format; give one with --chat-template FILE")


def _validate_readable(tokenizer, what: str) -> None:
    """TRL reads the model's tool calls back with the response format it knows for the template: a UsageError when
    it knows none (what GRPOTrainer would raise once the model has loaded)."""
    from trl import add_response_schema

    try:
        add_response_schema(tokenizer)
    except ValueError:
        raise UsageError(f"{what} renders tools, but TRL knows no way to read tool calls back from its output; use "
                         "a template TRL ships (trl/chat_templates), or set the tokenizer's response_template") from None


def pick_template(run) -> None:
    """Choose the chat template of a run with environments (``run.chat_template``, and where it comes from), once;
    the model's tokenizer is read, its weights are not."""
    if run.environments and run.chat_template_source is None:
        run.chat_template, run.chat_template_source = chat_template(model_path(run.model), run.model,
                                                                    run.settings.chat_template)


def model_is_folder(name: str) -> bool:
    """``--model`` names a model folder, not an alias or a hub id: its tokenizer is read as it is, with nothing built,
    converted or downloaded (what a dry run may do)."""
    return get_registry().model(name) is None and Path(name).is_dir()


class ToolStats:
    """Each tool's calls, seconds and timeouts since the last logging step, as ``tools/<tool>/<count>`` metrics."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, dict[str, float]] = defaultdict(lambda: {"calls": 0, "seconds": 0.0, "timeouts": 0})

    def record(self, tool: str, seconds: float, timed_out: bool) -> None:
        with self._lock:
            counts = self._counts[tool]
            counts["calls"] += 1
            counts["seconds"] += seconds
            counts["timeouts"] += int(timed_out)

    def take(self) -> dict[str, float]:
        """The metrics since the last call (one logging step), and a fresh start."""
        with self._lock:
            taken, self._counts = self._counts, defaultdict(lambda: {"calls": 0, "seconds": 0.0, "timeouts": 0})
        return {f"tools/{tool}/{name}": value for tool, counts in sorted(taken.items())
                for name, value in counts.items()}


def limited(method, tool: str, seconds: float, stats: ToolStats):
    """``method`` run in a thread of its own for at most ``seconds``: a call past the limit is abandoned (a thread
    cannot be stopped; it ends when the tool returns) and raises TimeoutError, which TRL shows the model as the
    call's error and counts as a failure."""
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        started, timed_out = time.monotonic(), False
        try:
            return watched(lambda: method(self, *args, **kwargs), (), seconds)
        except Hung:
            timed_out = True
            raise TimeoutError(f"tool '{tool}' took longer than {seconds:g} s; call it with other arguments, or "
                               "answer without it") from None
        finally:
            stats.record(tool, time.monotonic() - started, timed_out)

    return call


def environment_factory(environments: list[Environment], seconds: float, stats: ToolStats):
    """TRL's ``environment_factory``: one environment's factory, or several keyed by name (each dataset row names
    its own in the ``environment`` column). Each tool runs under the per-call limit ``seconds``, its calls and
    times counted in ``stats``."""
    factories = {}
    for environment in environments:
        cls = environment.spec.environment_class
        tools = {name: limited(getattr(cls, name), name, seconds, stats) for name in environment.spec.tool_names()
                 if not inspect.iscoroutinefunction(getattr(cls, name))}
        factories[environment.name] = trl_contract.environment_factory(cls, environment.params,
                                                                       environment.has_reward, tools)
    return next(iter(factories.values())) if len(factories) == 1 else factories


def validate_environment_column(dataset, environments: list[Environment], dataset_name: str) -> None:
    """With several environments each row names its own in the ``environment`` column: a UsageError when the
    dataset has no such column or a row names another environment."""
    if len(environments) < 2:
        return
    names = [e.name for e in environments]
    if "environment" not in dataset.column_names:
        raise UsageError(f"dataset '{dataset_name}' has no 'environment' column, which says each row's environment "
                         f"when several are selected ({', '.join(names)}); add the column, or select one --env")
    unknown = sorted({str(v) for v in dataset["environment"] if v not in names})
    if unknown:
        raise UsageError(f"dataset '{dataset_name}' names environments that are not selected in its 'environment' "
                         f"column: {', '.join(unknown[:5])}; selected: {', '.join(names)}")
