"""The rewards' ranges before training, and the warning when summing lets the widest one decide the advantages."""

import textwrap

import grpo_core
from grpo_core.training.aggregation import aggregation_lines

from cli_helpers import invoke

WIDE = '''
def ten(completion):
    """0 to 10 by length."""
    return min(10.0, len(completion) / 10)

ten.bounds = (0, 10)
'''


def wide_reward(tmp_path) -> str:
    path = tmp_path / "wide.py"
    path.write_text(textwrap.dedent(WIDE))
    return f"{path}:ten"


def warnings(lines):
    return [line for line in lines if line.startswith("warning:")]


def test_math_beside_a_reward_ten_times_wider_is_warned_naming_the_setting(tmp_path):
    rewards = grpo_core.load_rewards(["math", wide_reward(tmp_path)])
    lines = aggregation_lines(rewards, {})
    assert lines[0] == "rewards: math [0, 1], wide:ten [0, 10]; multi_objective_aggregation=sum_then_normalize"
    warning, = warnings(lines)
    assert "'wide:ten'" in warning and "dominates" in warning
    assert "--set multi_objective_aggregation=normalize_then_sum" in warning


def test_math_beside_xml_format_is_not_warned():
    lines = aggregation_lines(grpo_core.load_rewards(["math", "xml-format"]), {})
    assert lines == ["rewards: math [0, 1], xml-format [0, 1]; multi_objective_aggregation=sum_then_normalize"]


def test_normalize_then_sum_is_not_warned(tmp_path):
    rewards = grpo_core.load_rewards(["math", wide_reward(tmp_path)])
    assert warnings(aggregation_lines(rewards, {"multi_objective_aggregation": "normalize_then_sum"})) == []


def test_weights_do_not_count_and_ranges_compare_as_the_decimals_written(tmp_path):
    # the weights say what the user wants: math x2 beside xml-format x0.5 is as asked
    assert warnings(aggregation_lines(grpo_core.load_rewards(["math", "xml-format"],
                                                             weights={"math": 2, "xml-format": 0.5}), {})) == []

    def ranged(name, high):
        path = tmp_path / f"{name}.py"
        path.write_text(f"def score(completion):\n    return 0.0\nscore.bounds = (0, {high})\n")
        return f"{path}:score"

    # exactly 3 times is not over 3 times, whichever way the floats round (0.9 > 3 * 0.3 in floats; the binary
    # 2.7 is above 3 times the binary 0.9)
    for wide, narrow in ((0.9, 0.3), (2.7, 0.9)):
        rewards = grpo_core.load_rewards([ranged(f"w{wide}".replace(".", "_"), wide), ranged(f"n{narrow}".replace(".", "_"), narrow)])
        assert warnings(aggregation_lines(rewards, {})) == [], (wide, narrow)
    rewards = grpo_core.load_rewards([ranged("w", 0.91), ranged("n", 0.3)])
    assert warnings(aggregation_lines(rewards, {}))


def test_the_warning_is_shown_before_a_run_and_by_dry_run(tmp_path):
    args = ["--reward", "math", "--reward", wide_reward(tmp_path), "--dataset", "arithmetic", "--model", "tiny-random",
            "--dry-run"]
    code, output = invoke(*args)
    assert code == 0 and "wide:ten' ranges over 10" in output
    code, output = invoke(*args, "--set", "multi_objective_aggregation=normalize_then_sum")
    assert code == 0 and "multi_objective_aggregation=normalize_then_sum" in output and "warning: reward" not in output
