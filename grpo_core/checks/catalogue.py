"""The property catalogue: what each property promises, in the order reports list them, and how a reward
declares what a property needs."""

from __future__ import annotations

# Generic properties, in the order they run, with the sentence each one promises.
PROPERTIES = {
    "output": "returns one float or None per completion",
    "bounds": "every score is finite and inside the declared bounds {bounds}",
    "gold": "a gold completion formatted from a row scores the top bound",
    "direction": "{description}",
    "deterministic": "the same input gives the same score",
    "batch-independent": "a completion's score does not depend on the other completions in its batch",
    "shapes": "plain strings and chat messages give the same score",
    "hostile": "hostile text (empty, 1 MB, control characters, surrogates, unbalanced tags, deep JSON, LaTeX bombs) never crashes it or scores outside the bounds",
    "time": "each completion is scored within {seconds:g} s",
}
# The generic completions that skip the task, tried on every reward (grpo_core.checks.degenerate).
GENERIC_ATTACKS = ("empty, whitespace, the prompt copied back, padding, repetition, number sprays, the gold among "
                   "other numbers, blank-rendering characters, near-repeats, content-free text in tags")
PROPERTIES["degenerate"] = (f"no completion that skips the task ({GENERIC_ATTACKS}, and the ones the reward declares) "
                            "scores more than {threshold}")
PROPERTIES["rows"] = "the reward's row_problems finds nothing that makes a row unfit for it"


# How to declare what a property needs, said where the report says the property was not checked.
DECLARE = {
    "direction": ('declare one like this: checks=RewardChecks(directions=(Direction("a completion closer to the '
                  'target scores at least as high", pairs),)), where pairs(params) returns a hypothesis strategy of (better, worse, '
                  "columns), e.g. grpo_core.testing.ranked_pairs(...)"),
    "gold": ("declare one like this: checks=RewardChecks(gold_example=lambda columns, params: "
             "f\"<answer>{columns['answer']}</answer>\"), a completion that must score the high bound"),
    "rows": ('declare one like this: checks=RewardChecks(column_strategy=lambda params: '
             'st.fixed_dictionaries({"answer": st.integers().map(str)})), a hypothesis strategy of valid rows (a "prompt" key '
             "gives the row's prompt)"),
    "row_problems": ('declare one like this: checks=RewardChecks(row_problems=lambda columns, params: '
                     '[("gold answer cannot be read", columns["answer"])] if ... else []), what makes one dataset row unfit for the reward'),
    "degenerate": ("declare them like this: checks=RewardChecks(degenerate=lambda prompt, columns, params: "
                   "[(label, completion), ...]), built with grpo_core.testing's copied_prompt, prompt_numbers, placeholders, padded and repeated"),
}


# The lines of the report table, in order.
PROPERTY_ORDER = ("columns", "output", "bounds", "gold", "direction", "deterministic", "batch-independent", "shapes",
                  "hostile", "degenerate", "rows", "time")


# What a passed degenerate result says when only the generic completions were tried.
GENERIC_ONLY = "declares none of its own"
