"""Reward ``judge``: a model grades each completion on a rubric through any OpenAI-compatible chat server.

With no ``base_url`` the embedded judge (``transformers serve`` with SmolLM2-135M-Instruct on 127.0.0.1) is
started on first use and stopped with the run. How it scores: ``grpo_reward_judge.reward``; the rubrics:
``grpo_reward_judge.rubrics``; the checks that judge the judge: ``grpo_reward_judge.properties``.

Reward ``judge-group``: the judge sees all completions of one prompt at once and gives per-completion scores or a
ranking (``grpo_reward_judge.group``).
"""

from __future__ import annotations

from dataclasses import replace

from grpo_core import Param, RewardSpec, hookimpl

from grpo_reward_judge.properties import CHECKS, GROUP_CHECKS
from grpo_reward_judge.group import VERDICTS, group_columns_for, judge_group_reward, validate_group_params
from grpo_reward_judge.rubrics import GROUP_RUBRICS, RUBRICS, GroupRubric, Rubric, add_group_rubric, add_rubric
from grpo_reward_judge.reward import columns_for, judge_reward, validate_params

__all__ = ["GROUP_RUBRICS", "GROUP_SPEC", "GroupRubric", "RUBRICS", "Rubric", "SPEC", "add_group_rubric", "add_rubric",
           "judge_group_reward", "judge_reward", "register_commands", "register_rewards"]

SPEC = RewardSpec(
    name="judge",
    description="A judge model's verdict on a rubric (correctness against a reference, instruction following, "
                "concision), through any OpenAI-compatible chat server",
    func=judge_reward,
    bounds=(0.0, 1.0),
    columns=columns_for,
    batched=True,
    timeout=60.0,
    params=(
        Param("base_url", "", str, "the OpenAI-compatible server, http://HOST:PORT (empty: start the embedded "
                                   "SmolLM2-135M judge on 127.0.0.1)"),
        Param("model", "", str, "the model name the server serves (empty with the embedded judge)"),
        Param("api_key_env", "OPENAI_API_KEY", str, "the NAME of the environment variable holding the API key "
                                                    "(sent as a bearer token when set; the key is never a parameter)"),
        Param("rubric", "correctness", str, "the rubric: its prompt template and how its verdict is read "
                                            "(correctness, instruction-following, concision, or one a plugin adds)"),
        Param("temperature", 0.0, float, "the judge's sampling temperature"),
        Param("max_tokens", 8, int, "most tokens of the judge's verdict"),
        Param("max_concurrency", 8, int, "requests in flight at once"),
        Param("retries", 3, int, "tries after the first on no connection, a timeout, 429 or 5xx (with backoff)",
              minimum=0, maximum=20),
        Param("max_chars", 4000, int, "characters of the prompt and of the completion shown to the judge"),
        Param("cache", True, bool, "keep verdicts on disk, keyed by server, model, rubric and the filled prompt"),
    ),
    checks=CHECKS,
    validate=validate_params,
)

# A separate reward, not a parameter of ``judge``: group_relative belongs to the spec, and with it the core skips
# the batch-independence check that pointwise ``judge`` must keep passing.
_GROUP_PARAMS = {
    "rubric": Param("rubric", "correctness", str, "the group rubric (correctness, instruction-following, concision, "
                                                  "or one a plugin adds); a group of one uses the rubric of that name"),
    "max_tokens": Param("max_tokens", 64, int, "most tokens of the judge's verdict on a group"),
    "max_chars": Param("max_chars", 4000, int, "characters of the prompt shown to the judge; each of a group's n "
                                               "completions is clipped to max_chars // n"),
}
GROUP_SPEC = replace(
    SPEC,
    name="judge-group",
    description="A judge model's verdict on all completions of a prompt at once (per-completion scores or a "
                "ranking, relative within the group), through any OpenAI-compatible chat server",
    func=judge_group_reward,
    columns=group_columns_for,
    group_relative=True,
    params=tuple(_GROUP_PARAMS.get(p.name, p) for p in SPEC.params if p.name != "timeout") + (
        Param("verdict", "scores", str, "what the judge is asked for: scores (one line NUMBER: SCORE per completion) "
                                        "or ranking (3 > 1 = 2 > 4, best first)", choices=VERDICTS),
        Param("both_orders", False, bool, "ask twice, the group in its order and reversed, and average each "
                                          "completion's two scores (defeats a judge's position bias)"),
    ),
    validate=validate_group_params,
    checks=GROUP_CHECKS,
)


@hookimpl
def register_rewards(register):
    register(SPEC)
    register(GROUP_SPEC)


@hookimpl
def register_commands(cli):
    from grpo_reward_judge.commands import judge_check, judge_server

    cli.add_command(judge_server)
    cli.add_command(judge_check)
