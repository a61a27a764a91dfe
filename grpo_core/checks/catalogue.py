"""The property catalogue: every property the checks run, one record each, in the order reports list them.

Adding a property is one record here and one function (in ``properties``, or ``audit`` for what a reward must not
pay); the plan, the report's order and its "not checked" lines follow from the record.
"""

from __future__ import annotations

from grpo_core.checks import audit, format_state, json_answers, properties, right_answers as right
from grpo_core.checks.degenerate import GENERIC_ATTACKS
from grpo_core.checks.registry import Property, Registry
from grpo_core.checks.texts import HOSTILE_TEXTS

# The right-answer properties: for a reward that reads an answer column and pays above 0; comparing its scores needs
# deterministic ones.
_RIGHT = {"when": right.reads_gold, "skip": properties.needs_determinism}

REGISTRY = Registry(
    Property("columns", "the dataset has every column the reward reads", audit.columns, stage="first", cost=0),
    Property("output", "returns one float or None per completion", properties.output),
    Property("bounds", "every score is finite and inside the declared bounds {bounds}", properties.bounds),
    Property(
        "gold", "a gold completion formatted from a row scores the top bound", properties.gold, cost=1,
        declare=("declare one like this: checks=RewardChecks(gold_example=lambda columns, params: "
                 "f\"<answer>{columns['answer']}</answer>\"), a completion that must score the high bound"),
        declared=lambda spec: spec.checks.gold_example is not None,
        undeclared="the reward declares no gold completion",
    ),
    Property(
        "direction", "{description}", properties.direction,
        declare=('declare one like this: checks=RewardChecks(directions=(Direction("a completion closer to the '
                 'target scores at least as high", pairs),)), where pairs(params) returns a hypothesis strategy of '
                 "(better, worse, columns), e.g. grpo_core.testing.ranked_pairs(...)"),
        declared=lambda spec: bool(spec.checks.directions),
        undeclared="the reward declares no directions",
        targets=lambda subject: [(d.description, d) for d in subject.spec.checks.directions],
    ),
    Property(
        "measured", "the checks the reward's plugin measures itself pass, each with its figure", properties.measured,
        cost=0,  # each measure's own items count instead
        when=lambda subject: bool(subject.spec.checks.measures),
        targets=lambda subject: [(m.name, m) for m in subject.spec.checks.measures],
    ),
    Property("deterministic", "the same input gives the same score", properties.deterministic, cost=4),
    Property("batch-independent", "a completion's score does not depend on the other completions in its batch",
             properties.batch_independent, skip=properties.batch_skip, cost=8),
    Property("shapes", "plain strings and chat messages give the same score", properties.shapes,
             skip=properties.needs_determinism, cost=4),
    Property("hostile", "hostile text (empty, as long as a run generates, control characters, surrogates, unbalanced tags, deep JSON, LaTeX "
             "bombs) never crashes it or scores outside the bounds", properties.hostile, cost=1,
             fixed=len(HOSTILE_TEXTS)),
    Property(
        "degenerate", f"no completion that skips the task ({GENERIC_ATTACKS}, and the ones the reward declares) "
        "scores more than {threshold}", audit.degenerate,
        declare=("declare them like this: checks=RewardChecks(degenerate=lambda prompt, columns, params: "
                 "[(label, completion), ...]), built with grpo_core.testing's copied_prompt, prompt_numbers, "
                 "placeholders, padded and repeated"),
        runs_before="deterministic",  # early: hostile's slow texts can spend the time budget
        cost=20,  # the attacks on one row
    ),
    Property("pays-gold", "some form of the right answer, built from the row's answer column, earns the top on "
             "most rows, and stays inside the bounds", right.pays_gold, **_RIGHT, cost=10),
    Property("equivalent-forms", "a right answer written with other whitespace, a trailing .0 or a + scores the same",
             right.equivalent_forms, **_RIGHT, cost=5),
    Property("near-miss", "the answer off by one, times ten, with its sign flipped or a digit dropped, in the form "
             "that was paid, scores below it", right.near_miss, **_RIGHT, cost=5),
    Property("one-answer", "two different answers in one completion are not paid", right.one_answer, **_RIGHT, cost=4),
    Property("json-constants", "for an answer that is a JSON object: constants and the right keys with wrong values "
             "score below the right object", json_answers.json_constants, **_RIGHT, cost=7),
    Property("empty-tags", "tags with nothing in them, or the prompt's instruction copied back, score below filled "
             "tags", format_state.empty_tags, skip=properties.needs_determinism, cost=5),
    Property("state", "a completion scores the same alone, twice, and after other calls", format_state.state, **_RIGHT,
             cost=8),
    Property("penalty", "a penalty-only reward fires on long or repetitive completions and never on short ones",
             format_state.penalty, when=lambda subject: subject.hi <= 0, cost=5),
    Property(
        "rows", "the reward's row_problems finds nothing that makes a row unfit for it", audit.rows,
        declare=('declare one like this: checks=RewardChecks(column_strategy=lambda params: '
                 'st.fixed_dictionaries({"answer": st.integers().map(str)})), a hypothesis strategy of valid rows '
                 '(a "prompt" key gives the row\'s prompt)'),
        when=lambda subject: bool(subject.reward.columns), cost=0,  # row_problems reads rows, it scores none
    ),
    Property("time", "each completion is scored within {seconds:g} s", properties.time_limit, stage="last", cost=0),
)
