"""Reward ``math`` (is the final answer right?) and the datasets ``gsm8k`` and ``arithmetic``.

Importing this module is cheap: math-verify, sympy, datasets and hypothesis are imported
only inside the functions that use them.
"""

from __future__ import annotations

from grpo_core import DatasetSpec, Param, RewardSpec, dataset_param, hookimpl

from grpo_reward_math.dataset import ARITHMETIC_SYSTEM_PROMPT, DIFFICULTIES, GSM8K_SYSTEM_PROMPT, SPLITS
from grpo_reward_math.properties import CHECKS
from grpo_reward_math.reward import EXTRACT_MODES, math_reward, validate_params

__all__ = ["SPEC", "math_reward", "register_datasets", "register_rewards"]


SPEC = RewardSpec(
    name="math",
    description="1 if the final answer equals the gold answer (exact numbers, or math-verify for LaTeX), else 0; "
    "None if the gold answer cannot be read",
    func=math_reward,
    bounds=(0.0, 1.0),
    columns=("answer",),
    batched=True,
    timeout=5.0,  # the per-item limit for judging symbolically, and the default of the `timeout` parameter
    params=(
        Param("answer_column", "answer", str, "the dataset column holding the gold answer"),
        Param(
            "extract",
            "auto",
            str,
            "where the final answer is: auto takes the tag, else the later of the last \\boxed{} and a closing "
            "'the answer is' line, else a completion that is only an answer, else the one value the last "
            "sentence states, else the last math block; last-number takes the last number anywhere",
            EXTRACT_MODES,
        ),
        Param("tag", "answer", str, "the tag holding the answer, as in <answer>42</answer>"),
        Param(
            "rel_tol",
            0.0,
            float,
            "relative tolerance for plain numbers: 0 compares exactly; 1e-3 accepts 3.14 for 3.14159",
        ),
        Param(
            "allow_expressions",
            True,
            bool,
            "pay a formula equal to a plain-number gold ((9+1) or 2/4) unless it copies the prompt's expression; "
            "off: only a number written as a number, for datasets that teach evaluation",
        ),
    ),
    checks=CHECKS,
    validate=validate_params,
)


GSM8K = DatasetSpec(
    "gsm8k",
    "Grade-school math word problems (openai/gsm8k, or a local file in its format); gold = the #### line",
    load="grpo_reward_math.dataset:load_gsm8k",
    columns=("prompt", "answer"),
    params=(
        dataset_param("split", choices=("train", "test")),
        Param("config", "main", str, "gsm8k configuration", ("main", "socratic")),
        dataset_param("size"),
        dataset_param("seed"),
        dataset_param("shuffle"),
        dataset_param("system_prompt", GSM8K_SYSTEM_PROMPT),
        Param("path", None, str, "a local parquet/jsonl/csv file with question and answer columns instead of the hub"),
    ),
)

ARITHMETIC = DatasetSpec(
    "arithmetic",
    "Generated arithmetic questions and word problems with exact integer answers (offline, seeded)",
    load="grpo_reward_math.dataset:load_arithmetic",
    columns=("prompt", "answer"),
    params=(
        dataset_param("split", choices=SPLITS),
        dataset_param("size", 1000, minimum=1, maximum=100_000),
        dataset_param("seed"),
        Param("difficulty", "easy", str, "easy: one + or - up to 20; medium: + - x / up to 100; hard: multi-step", DIFFICULTIES),
        dataset_param("system_prompt", ARITHMETIC_SYSTEM_PROMPT),
        Param("few_shot", 2, int, "solved examples put before each question as earlier chat turns", minimum=0, maximum=32),
        Param("worked", False, bool, "the examples write the calculation (15 + 4 = 19) on a line before the tagged answer"),
    ),
    # The questions teach evaluation: `4 + 18` for "What is 4 + 18?" is the work left undone, whatever the prompt.
    reward_params={"math": {"allow_expressions": False}},
)


@hookimpl
def register_rewards(register):
    register(SPEC)


@hookimpl
def register_datasets(register):
    register(GSM8K)
    register(ARITHMETIC)
