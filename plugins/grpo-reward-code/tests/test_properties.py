"""The declarations the property suite relies on (the suite itself: test_plugin.py) hold for the code reward."""

from hypothesis import HealthCheck, given, settings

from grpo_core.testing import call_reward

from grpo_reward_code import SPEC

SETTINGS = settings(max_examples=5, suppress_health_check=[HealthCheck.too_slow])


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
