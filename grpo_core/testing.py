"""The kit for reward authors: ``check_reward``, ``call_reward``, the hypothesis strategies the checks draw
from (``grpo_core.checks.texts``) and the degenerate-completion helpers (``grpo_core.checks.degenerate``); for
environment authors, ``check_environment``.

A plugin's own tests get the whole suite in one line::

    from grpo_core.testing import check_reward

    def test_properties():
        check_reward(SPEC)

builds the completions its ``RewardChecks(degenerate=...)`` declares (ones that skip the task) from the kit::

    def degenerate(prompt, columns, params):
        from grpo_core.testing import copied_prompt, placeholders, prompt_numbers

        return [*copied_prompt(prompt, "<answer>{}</answer>"), *prompt_numbers(prompt, "<answer>{}</answer>"),
                *placeholders(("reasoning", "answer"))]

and can write their own properties with the same inputs the suite uses::

    from hypothesis import given
    from grpo_core.testing import call_reward, completions, hostile_texts

    @given(completions())
    def test_never_negative(completion):
        assert all(s is None or s >= 0 for s in call_reward(SPEC, [completion]))

What every plugin's tests share is one call each: ``check_readme`` keeps a README's examples true, and
a ``tests/conftest.py`` of two lines keeps the hub offline and the registry fresh::

    from grpo_core.testing import fresh_registry_fixture, offline_hub

    offline_hub()
    fresh_registry = fresh_registry_fixture()
"""

from __future__ import annotations

import difflib
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from grpo_core.checks.env_properties import check_environment as check_episodes
from grpo_core.checks.report import format_report
from grpo_core.checks.results import CheckReport

from grpo_core.checks.run import DEFAULT_MAX_EXAMPLES, dataset_rows, run_checks
from grpo_core.cli import cli as grpo_run  # the command line, to invoke in a test with click's CliRunner
from grpo_core.checks.texts import (  # the strategies and texts the checks draw from, public here
    FRAGMENTS,
    HOSTILE_TEXTS,
    as_chat,
    completions,
    edited_pairs,
    hostile_texts,
    json_texts,
    json_values,
    ranked_pairs,
    texts,
    token_ids,
)
from grpo_core.checks.degenerate import (  # the kit for RewardChecks(degenerate=...), public here
    FILLER_SENTENCE,
    HANGUL_FILLERS,
    ZERO_WIDTH_SPACE,
    blank_texts,
    buried_gold,
    copied_prompt,
    empty_completions,
    generic_attacks,
    generic_degenerate,
    near_repeats,
    number_sprays,
    padded,
    padding_to,
    placeholders,
    prompt_expressions,
    prompt_numbers,
    repeated,
    tag_fillers,
)
from grpo_core.plugins import get_registry, get_spec, registered, reload_plugins  # plugins registered for one test
from grpo_core.plugins.loading import Environment, load_environments, validate_environment
from grpo_core.rewards.reward import Reward, completion_text
from grpo_core.specs import EnvironmentSpec, RewardSpec

__all__ = [
    "FILLER_SENTENCE", "FRAGMENTS", "HANGUL_FILLERS", "HOSTILE_TEXTS", "ZERO_WIDTH_SPACE", "as_chat", "blank_texts",
    "buried_gold", "call_reward", "check_reward", "completions", "copied_prompt", "edited_pairs", "empty_completions",
    "generic_attacks", "generic_degenerate", "hostile_texts", "json_texts", "json_values", "near_repeats",
    "number_sprays", "padded", "padding_to", "placeholders", "prompt_expressions", "prompt_numbers", "ranked_pairs",
    "repeated", "tag_fillers", "texts", "token_ids", "get_spec", "grpo_run", "registered", "reload_plugins",
    "check_readme", "fresh_registry_fixture", "offline_hub", "free_port", "check_environment",
]


def call_reward(reward, completions: list, prompts: list | None = None, params: dict | None = None, **columns) -> list:
    """Score ``completions`` as TRL would call the reward (``prompts=..., completions=..., completion_ids=...,
    **columns``), through ``Reward.score``, the path training takes.

    ``reward`` is a RewardSpec, an installed reward's name, or a Reward. Columns are lists, one value
    per completion, or single values that are repeated. Token ids are the texts' UTF-8 bytes.
    """
    bound = _as_reward(reward, params)
    n = len(completions)
    texts = [completion_text(c) for c in completions]
    lists = {key: value if isinstance(value, list) and len(value) == n else [value] * n for key, value in columns.items()}
    return bound.score(
        prompts=prompts if prompts is not None else [""] * n,
        completions=list(completions),
        completion_ids=[token_ids(t) for t in texts],
        trainer_state=None,
        **lists,
    )


def _as_reward(reward, params: dict | None):
    if isinstance(reward, Reward):
        if params:
            return Reward(reward.spec, reward.spec.resolve({**reward.params, **params}), reward.weight)
        return reward
    if isinstance(reward, str):
        reward = get_registry().reward(reward)
    if not isinstance(reward, RewardSpec):
        raise TypeError(f"expected a RewardSpec, a Reward or an installed reward's name, got {reward!r}")
    return Reward(reward, reward.resolve(params))


def check_reward(
    reward,
    params: dict | None = None,
    max_examples: int | None = None,
    seed: int | None = None,
    rows: list[dict] | None = None,
    vary_params: bool = True,
    item_timeout_s: float | None = None,
):
    """Run every property check on one reward; raise AssertionError with the report if any fails.

    ``reward`` is a RewardSpec, an installed reward's name, or a Reward; ``params`` overrides its
    defaults. The checks include the degenerate audit: completions that skip the task (the generic
    ones and those ``RewardSpec.degenerate`` declares) must not be paid. The message lists each
    failure with its counterexample, then what was not checked and why. Returns the CheckReport
    when nothing fails; ``report.unchecked()`` says what it could not check.
    """
    bound = _as_reward(reward, params)
    options = {"max_examples": max_examples or DEFAULT_MAX_EXAMPLES, "seed": seed, "rows": rows,
               "vary_params": vary_params}
    if item_timeout_s is not None:
        options["item_timeout_s"] = item_timeout_s
    report = run_checks([bound], **options)
    if not report.ok:
        raise AssertionError("reward property checks failed\n" + format_report(report, color=False))
    return report


def check_environment(environment, rows, *, params: dict | None = None, seed: int = 0, max_examples: int = 20):
    """Run every property check of ``grpo-run check --env`` on one environment's episodes; return the CheckReport.

    ``environment`` is an installed environment's name or an EnvironmentSpec (one not registered is checked as it
    is); ``params`` overrides its parameters (the class's keyword arguments, as ``--env-arg`` gives them). Each
    episode starts from one of ``rows``: dataset rows as dicts, or a ``datasets.Dataset`` (e.g. from
    ``grpo_core.load_dataset``), of which the first 200 are read, as the command reads them. The properties are
    reset isolation, deterministic, gold episode (when the spec declares ``gold_episode``), do-nothing, no leak,
    hostile arguments, bounds and time. Nothing is raised when a property fails: ``report.ok`` says whether all
    held, ``report.failed(name)`` which did not, and each failure's ``example`` is the episode that shows it::

        report = check_environment("calculator", load_dataset("products", {"size": 20}), seed=0)
        assert report.ok, [failure.to_dict() for failure in report.failures]
    """
    if isinstance(environment, str):
        (bound,) = load_environments([environment], {environment: params} if params else None)
    elif isinstance(environment, EnvironmentSpec):
        bound = Environment(environment, environment.resolve(params), environment.name)
        validate_environment(bound)
    else:
        raise TypeError(f"expected an EnvironmentSpec or an installed environment's name, got {environment!r}")
    rows = [dict(row) for row in rows] if isinstance(rows, list) else dataset_rows(rows)
    if not rows:
        raise ValueError("check_environment needs at least one row to start episodes from")
    started = time.monotonic()
    report = CheckReport(seed=seed, params={bound.name: dict(bound.params)})
    report.results.extend(check_episodes(bound, rows, seed, max_examples))
    report.seconds = time.monotonic() - started
    return report


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, for a test to start a real server on (a reward server,
    a judge, a Ray head). Another process may take it before the server binds it; tests start the server at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def offline_hub() -> None:
    """Keep the Hugging Face hub offline for this test session: a test that would download fails at once.

    Call it at the top of ``tests/conftest.py``, before anything imports ``datasets`` or ``huggingface_hub``.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"


def fresh_registry_fixture():
    """An autouse pytest fixture that loads the installed plugins afresh before and after each test.

    Assign it to a name in ``tests/conftest.py``: ``fresh_registry = fresh_registry_fixture()``; a test
    that registers or unloads a plugin then cannot leak it into the next one.
    """
    import pytest  # here: grpo_core.testing is imported outside pytest too (scripts, docs)

    @pytest.fixture(autouse=True, name="fresh_registry")
    def fresh_registry():
        reload_plugins()
        yield
        reload_plugins()

    return fresh_registry


_FENCE = re.compile(r"\s*(`{3,})\s*([\w-]*)")
_OUTPUT_INFO = ("", "text", "output")


def _fenced_blocks(text: str) -> list[tuple[int, str, str, int]]:
    """(line, info string, body, section number) for each fenced block of a Markdown text."""
    lines = text.splitlines(keepends=True)
    blocks, section, index = [], 0, 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            section += lines[index].startswith("#")
            index += 1
            continue
        fence, info = match.groups()
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        blocks.append((index + 1, info, "".join(lines[index + 1:end]), section))
        index = end + 1
    return blocks


def _readme_examples(text: str) -> list[tuple[int, str, str]]:
    blocks = _fenced_blocks(text)
    return [(line, code, output) for (line, info, code, section), (_, next_info, output, next_section)
            in zip(blocks, blocks[1:]) if info == "python" and next_info in _OUTPUT_INFO and section == next_section]


def check_readme(path, examples: int | None = None) -> None:
    """Run each example of a Markdown file in a fresh interpreter; raise AssertionError where one prints
    other than the output block shown under it.

    An example is a ```` ```python ```` block whose next block, before the next heading, is a
    ```` ```text ````, ```` ```output ```` or bare ```` ``` ```` block: what it must print, exactly. Other
    python blocks are not run. ``examples`` is how many the file must hold, so an example whose output
    block was lost fails too. The examples run at once, each in the file's folder.
    """
    path = Path(path)
    found = _readme_examples(path.read_text(encoding="utf-8"))
    if not found or (examples is not None and len(found) != examples):
        raise AssertionError(f"{path}: {len(found)} python examples with an output block under them, expected "
                             f"{examples or 'at least 1'}; put a ```text block with the output under each example")
    runs = [subprocess.Popen([sys.executable, "-c", code], cwd=path.parent, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _, code, _ in found]
    failures = []
    for (line, _, expected), run in zip(found, runs):
        printed, errors = run.communicate()
        if run.returncode:
            failures.append(f"{path}:{line}: the example exits with {run.returncode}:\n{errors}")
        elif printed != expected:
            diff = difflib.unified_diff(expected.splitlines(True), printed.splitlines(True), "shown", "printed")
            failures.append(f"{path}:{line}: the example prints other than the block under it shows:\n{''.join(diff)}")
    if failures:
        raise AssertionError("\n".join(failures))
