import threading
import time

import pytest

from grpo_core import Param, RewardSpec, Unscored, hookimpl, load_rewards
from grpo_core.errors import RewardError, UsageError
from grpo_core.plugins import registered
from grpo_core.rewards.reward import Reward, completion_text

import reward_fixtures as fx

COUNT_A = RewardSpec(
    "count-a",
    "Share of the letter a",
    fx.count_a,
    columns=("answer",),
    params=(Param("answer_column", "answer", str), Param("strict", False, bool)),
    weight=0.5,
)


class Plugin:
    @hookimpl
    def register_rewards(self, register):
        register(COUNT_A)
        register(RewardSpec("sleepy", "Hangs on 'hang'", fx.sleepy, timeout=0.5))
        register(RewardSpec("fails", "Always raises", fx.always_fails))
        register(RewardSpec("tokens", "Number of tokens", fx.token_count, bounds=(0, 1e9)))
        register(RewardSpec("batch-len", "Same length as the answer", fx.batch_len, columns=("answer",), batched=True))


@pytest.fixture
def plugin():
    with registered(Plugin(), distribution="fixture-dist") as registry:
        yield registry


def chat(text):
    return [{"role": "assistant", "content": text}]


def test_both_completion_shapes_give_the_same_scores(plugin):
    (reward,) = load_rewards(["count-a"])
    texts = ["banana", "", "xyz", "aaaa"]
    plain = reward.score(prompts=["p"] * 4, completions=texts, answer=["1"] * 4)
    chatty = reward.score(prompts=[[{"role": "user", "content": "p"}]] * 4, completions=[chat(t) for t in texts], answer=["1"] * 4)
    assert plain == chatty == [0.5, 0.0, 0.0, 1.0]


def test_completion_text_handles_every_message_form():
    assert completion_text([{"role": "assistant", "content": None}]) == ""
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "!"}]}]) == "hi!"
    assert completion_text([{"role": "assistant", "content": "a"}, {"role": "tool", "content": "x"}, {"role": "assistant", "content": "b"}]) == "ab"
    assert completion_text(None) == ""


def test_callable_is_named_after_the_plugin_and_carries_its_weight(plugin):
    first, second = load_rewards(["count-a", "tokens"], weights={"tokens": 2.0})
    assert (first.__name__, first.weight) == ("count-a", 0.5)
    assert (second.__name__, second.weight) == ("tokens", 2.0)
    from trl.trainer.utils import get_callable_name

    assert get_callable_name(first) == "count-a"


def test_args_are_parsed_and_columns_can_be_remapped(plugin):
    (reward,) = load_rewards(["count-a"], params={"count-a": {"answer_column": "gold", "strict": "true"}})
    assert reward.params == {"answer_column": "gold", "strict": True}
    assert reward.columns == {"answer": "gold"}
    assert reward.score(prompts=["p"], completions=["aa"], gold=[None]) == [None]
    with pytest.raises(RewardError, match="needs the dataset column 'gold'.*answer"):
        reward.score(prompts=["p"], completions=["aa"], answer=["x"])


def test_bad_args_are_usage_errors(plugin):
    with pytest.raises(UsageError, match="reward 'count-a' has no parameter 'strictt' \\(did you mean 'strict'\\?\\)"):
        load_rewards(["count-a"], params={"count-a": {"strictt": True}})
    with pytest.raises(UsageError, match="parameter 'strict' of reward 'count-a' expects bool, got 'maybe'"):
        load_rewards(["count-a"], params={"count-a": {"strict": "maybe"}})
    with pytest.raises(UsageError, match="parameters given for reward 'tokens', which is not selected"):
        load_rewards(["count-a"], params={"tokens": {}})


def test_one_failing_item_gives_none_and_an_error_count(plugin):
    (reward,) = load_rewards(["count-a"])
    logged = {}
    scores = reward.score(
        prompts=["p"] * 3, completions=["aa", "boom", "ab"], answer=["1"] * 3,
        log_metric=lambda name, value: logged.__setitem__(name, value),
    )
    assert scores == [1.0, None, 0.5]
    assert logged == {"rewards/count-a/errors": 1.0, "rewards/count-a/timeouts": 0.0, "rewards/count-a/unscorable": 0.0}


def test_batched_reward_reports_why_items_went_unscored():
    spec = RewardSpec(
        "why", "d", lambda completions: [1.0, None, Unscored("timeout"), Unscored("error", "bad")], batched=True
    )
    logged = {}
    reward = Reward(spec, {})
    scores = reward.score(prompts=["p"] * 4, completions=["a"] * 4, log_metric=lambda k, v: logged.__setitem__(k, v))
    assert scores == [1.0, None, None, None]
    assert logged == {"rewards/why/errors": 1.0, "rewards/why/timeouts": 1.0, "rewards/why/unscorable": 1.0}


def test_a_whole_batch_failing_stops_with_plugin_params_and_input(plugin):
    (reward,) = load_rewards(["fails"])
    with pytest.raises(RewardError) as error:
        reward.score(prompts=["p", "q"], completions=["first text", "second"])
    message = str(error.value)
    assert "reward 'fails' (from fixture-dist)" in message
    assert "KeyError: 'missing key'" in message and "Parameters: {}" in message and "first text" in message


def test_completion_ids_are_passed_when_declared(plugin):
    (reward,) = load_rewards(["tokens"])
    assert reward.score(prompts=["p", "p"], completions=["ab", "c"], completion_ids=[[1, 2, 3], [4]]) == [3.0, 1.0]


def test_batched_reward_gets_lists_and_is_checked_for_length(plugin):
    (reward,) = load_rewards(["batch-len"])
    assert reward.score(prompts=["p"] * 2, completions=["abc", chat("ab")], answer=["xyz", "xyz"]) == [1.0, 0.0]


def test_wrong_count_from_a_batched_reward_stops_the_run():
    spec = RewardSpec("short", "One too few", lambda completions: [0.0] * (len(completions) - 1), batched=True)
    with pytest.raises(RewardError, match="returned 2 scores for 3 completions"):
        Reward(spec, {})(prompts=["p"] * 3, completions=["a", "b", "c"])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_batched_reward_s_plain_floats_pass_through_and_a_non_finite_one_stops_the_run(bad):
    spec = RewardSpec("floats", "Plain floats", lambda completions: [float(len(c)) for c in completions], batched=True)
    assert Reward(spec, {})(prompts=["p"] * 3, completions=["a", "bb", ""]) == [1.0, 2.0, 0.0]
    spec = RewardSpec("bad", "One non-finite", lambda completions: [0.5, bad, 0.5], batched=True)
    with pytest.raises(RewardError, match="non-finite"):
        Reward(spec, {})(prompts=["p"] * 3, completions=["a", "b", "c"])


def test_non_numbers_and_nan_count_as_errors():
    spec = RewardSpec("odd", "Returns odd things", lambda c: {"nan": float("nan"), "s": "1"}.get(c, 0.5))
    logged = {}
    scores = Reward(spec, {})(prompts=["p"] * 3, completions=["nan", "s", "ok"], log_metric=logged.__setitem__)
    assert scores == [None, None, 0.5]
    assert logged["rewards/odd/errors"] == 2.0


def test_hard_timeout_from_a_non_main_thread(plugin):
    (reward,) = load_rewards(["sleepy"])
    results, logged = {}, {}

    def run():
        started = time.monotonic()
        results["scores"] = reward.score(
            prompts=["p"] * 3, completions=["fine", "hang now", "also fine"], log_metric=logged.__setitem__
        )
        results["elapsed"] = time.monotonic() - started

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert not thread.is_alive()
    assert results["scores"] == [1.0, None, 1.0]
    assert results["elapsed"] < 10  # the sleeping worker was killed, not waited for
    assert logged["rewards/sleepy/timeouts"] == 1.0 and logged["rewards/sleepy/errors"] == 0.0
    # the pool recovers: the next batch is scored normally
    assert reward.score(prompts=["p"], completions=["fine"]) == [1.0]


def test_timeout_needs_a_picklable_function():
    spec = RewardSpec("closure", "A lambda", lambda c: 1.0, timeout=1.0)
    with pytest.raises(UsageError, match="must be picklable"):
        Reward(spec, {})


def test_a_reward_that_names_log_metric_logs_its_own_metrics():
    def batched(completions, log_metric=None):
        log_metric("rewards/own/retries", 2.0)
        return [1.0] * len(completions)

    async def item(completion, log_metric=None):
        log_metric("rewards/own/calls", 1.0)
        return 0.5

    logged = []
    log = lambda name, value: logged.append((name, value))  # noqa: E731
    assert Reward(RewardSpec("own", "d", batched, batched=True), {}).score(
        prompts=["p"] * 2, completions=["a", "b"], log_metric=log) == [1.0, 1.0]
    assert ("rewards/own/retries", 2.0) in logged
    logged.clear()
    assert Reward(RewardSpec("own", "d", item), {}).score(prompts=["p"] * 2, completions=["a", "b"],
                                                         log_metric=log) == [0.5, 0.5]
    assert logged.count(("rewards/own/calls", 1.0)) == 2
    # outside training (the checks, sample) there is no TRL callable: the function gets None
    seen = []
    Reward(RewardSpec("own", "d", lambda completions, log_metric=None: seen.append(log_metric) or [1.0],
                      batched=True), {}).score(prompts=["p"], completions=["a"])
    assert seen == [None]


def test_log_metric_is_refused_where_items_run_in_worker_processes():
    with pytest.raises(UsageError, match="declares a timeout.*log_metric"):
        Reward(RewardSpec("own", "d", _item_with_log_metric, timeout=5.0), {})


def _item_with_log_metric(completion, log_metric=None):
    return 1.0


def test_a_batched_reward_that_raises_its_own_reward_error_keeps_its_sentence():
    def gone(completions, **columns):
        raise RewardError("the judge at http://127.0.0.1:9 cannot be reached")

    def broken(completions, **columns):
        raise ValueError("bad index")

    with pytest.raises(RewardError) as own:
        Reward(RewardSpec("gone", "d", gone, batched=True), {}).score(prompts=["p"], completions=["a"])
    assert str(own.value) == "the judge at http://127.0.0.1:9 cannot be reached"
    with pytest.raises(RewardError, match="failed on every completion of a batch of 1: ValueError: bad index"):
        Reward(RewardSpec("broken", "d", broken, batched=True), {}).score(prompts=["p"], completions=["a"])
