"""The property suite (as grpo-run check runs it) on the code reward, and the declarations it relies on."""

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from grpo_core.testing import call_reward, grpo_run

from grpo_reward_code import SPEC

SETTINGS = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_directions_hold_strictly(isolated):
    params = SPEC.resolve()
    for direction in SPEC.checks.directions:
        @SETTINGS
        @given(direction.pairs(params))
        def check(pair):
            better, worse, columns = pair
            high, low = call_reward(SPEC, [better, worse], tests=[columns["tests"]] * 2)
            assert high > low, (better, worse)

        check()


def test_gold_scores_the_top(isolated):
    params = SPEC.resolve({"tag": "solution", "language": "py"})

    @SETTINGS
    @given(SPEC.checks.column_strategy(params))
    def check(row):
        gold = SPEC.checks.gold_example(row, params)
        assert gold.startswith("<solution>")
        assert call_reward(SPEC, [gold], params=params, tests=[row["tests"]]) == [1.0]

    check()


def test_grpo_run_check_passes(isolated):
    """The whole property suite, as users run it (the grpo_check fixture runs the same)."""
    result = CliRunner().invoke(grpo_run, ["check", "--reward", "code", "--max-examples", "5", "--seed", "0"])
    assert result.exit_code == 0, result.output
    assert "0 failed" in result.output


def test_the_entry_point_registers_the_reward_and_datasets():
    from grpo_core.testing import get_spec

    assert get_spec("reward", "code").distribution == "grpo-reward-code"
    assert get_spec("dataset", "code-tasks") and get_spec("dataset", "code-hub")
