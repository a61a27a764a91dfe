"""Environment ``calculator`` (exact arithmetic tools; an episode is paid when a call gives the row's answer) and
dataset ``products`` (multi-digit multiplication problems to use it on).

How the tools compute and the episode is paid: ``grpo_env_calculator.environment``; the rows:
``grpo_env_calculator.dataset``. Importing this module is cheap: ``datasets`` is imported only when the rows load.
"""

from __future__ import annotations

from grpo_core import DatasetSpec, EnvironmentSpec, Param, dataset_param, hookimpl

from grpo_env_calculator.dataset import EXAMPLE_PAIRS, SPLITS, SYSTEM_PROMPT, WORKED_TOOLS
from grpo_env_calculator.environment import Calculator, gold_episode

__all__ = ["Calculator", "DATASET", "ENVIRONMENT", "gold_episode", "register_datasets", "register_environments"]

ENVIRONMENT = EnvironmentSpec(
    name="calculator",
    description="Exact arithmetic on numbers and fractions; 1 when a call's result is the row's answer",
    factory=Calculator,
    params=(Param("max_calls", 8, int, "tool calls an episode may make; later calls are answered with an error",
                  minimum=1, maximum=1000),),
    columns=("answer",),
    bounds=(0.0, 1.0),
    gold_episode=gold_episode,
)

DATASET = DatasetSpec(
    name="products",
    description="Generated multiplication problems of multi-digit numbers for the calculator (offline, seeded); "
    "answer = the exact product",
    load="grpo_env_calculator.dataset:load",
    columns=("prompt", "answer", "operands"),
    params=(
        dataset_param("split", choices=SPLITS),
        dataset_param("size", 1000, minimum=1, maximum=100_000),
        dataset_param("seed"),
        Param("digits", "3x2", str, "digits of the two numbers multiplied, written AxB: 3x2 asks for 123 × 45"),
        dataset_param("system_prompt", SYSTEM_PROMPT),
        Param("worked_examples", 0, int, "worked episodes before the question, each calling multiply and answering "
              "with its result: SmolLM2-135M calls the tool only with 2", minimum=0, maximum=len(EXAMPLE_PAIRS)),
        Param("test_worked_examples", None, int, "worked episodes in the test split's prompts (unset: as "
              "worked_examples); fewer than training had measure calling the tool without copying the examples",
              minimum=0, maximum=len(EXAMPLE_PAIRS)),
        Param("worked_tool", "multiply", str, f"the tool the worked episodes call ({', '.join(WORKED_TOOLS)}), on "
              "questions of its own sign, or several in turn (multiply,add): add alone shows how to call a tool but "
              "not that a product needs multiply; choices separated by | go to the rows in turn (add|add,subtract)"),
        Param("test_worked_tool", None, str, "the test split's worked_tool (unset: as worked_tool): held-out prompts "
              "whose examples call only add ask whether the model picks multiply by itself"),
        Param("worked_words", None, str, "the words of each worked turn before its call (unset: the tool's own, "
              "\"I add with the calculator.\"); words that name no tool leave the choice to the question's sign"),
    ),
    # The answer is a number in the tag; "964 × 59" there is the question copied, not the work done.
    reward_params={"math": {"extract": "answer-tag", "allow_expressions": False}},
)


@hookimpl
def register_environments(register):
    register(ENVIRONMENT)


@hookimpl
def register_datasets(register):
    register(DATASET)
