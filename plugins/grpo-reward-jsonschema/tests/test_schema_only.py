"""A dataset with only a schema column: the reward scores validity, and the checks say content is not compared."""

import json
import re

import pytest

from grpo_core import RewardError, load_rewards
from grpo_core.testing import check_reward

SCHEMA = json.dumps({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})


def test_a_batch_with_only_a_schema_column_scores_validity():
    (reward,) = load_rewards(["json-schema"])
    scores = reward.score(prompts=["p"] * 3, completions=['{"name": "Ada"}', '{"name": 3}', "no JSON"], schema=[SCHEMA] * 3)
    assert scores == [1.0, 0.5, 0.0]


def test_the_expected_column_is_still_compared_when_the_batch_has_it():
    (reward,) = load_rewards(["json-schema"])
    scores = reward.score(prompts=["p"] * 2, completions=['{"name": "Ada"}'] * 2, schema=[SCHEMA] * 2,
                    expected=['{"name": "Ada"}', '{"name": "Grace"}'])
    assert scores == [1.0, 0.0]


def test_a_renamed_expected_column_that_is_missing_is_an_error_naming_the_fix():
    (reward,) = load_rewards(["json-schema"], {"json-schema": {"expected_column": "gold"}})
    with pytest.raises(RewardError, match="needs the dataset column 'gold'.*expected_column=COLUMN"):
        reward.score(prompts=["p"], completions=['{"name": "Ada"}'], schema=[SCHEMA])


def test_the_checks_on_schema_only_rows_say_once_that_content_is_not_compared():
    rows = [{"prompt": f"person {i}", "schema": SCHEMA} for i in range(6)]
    report = check_reward("json-schema", rows=rows, max_examples=4, seed=0, vary_params=False)
    notes = [line for line in report.warnings() if "content is not compared" in line]
    assert len(notes) == 1 and re.search(r"in (\d+) of \1 rows", notes[0]) and "expected_column=" in notes[0]


def test_no_note_when_validity_only_is_asked_for():
    rows = [{"prompt": f"person {i}", "schema": SCHEMA} for i in range(4)]
    report = check_reward("json-schema", {"expected_column": ""}, rows=rows, max_examples=4, seed=0,
                          vary_params=False)
    assert not [line for line in report.warnings() if "content is not compared" in line]
