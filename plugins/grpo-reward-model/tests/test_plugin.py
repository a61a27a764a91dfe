"""The plugin as grpo-core sees it: grpo-core's property suite, discovery, parameters refused, the bounds that follow
``normalize``.

The suite runs on the indifferent model (logit 0 for every text), which pays nothing and so must pass every check:
what it tests is the plugin (rendering, batching, padding, the measures), not a model. The small trained model is
checked in test_checks.py (slow), with what the checks find in it.
"""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grpo_core import UsageError, load_rewards
from grpo_core.testing import get_spec

from grpo_reward_model import SPEC


def test_property_suite(grpo_check, biased_model):
    grpo_check(SPEC, params={"model": biased_model("indifferent")}, max_examples=5, seed=0)


def test_registered_through_the_entry_point():
    assert get_spec("reward", "reward-model").distribution == "grpo-reward-model"


@pytest.mark.parametrize("params, message", [
    ({"normalize": "tanh"}, "normalize must be sigmoid or none, got 'tanh'"),
    ({"dtype": "float8"}, "dtype must be one of float32, bfloat16, float16, got 'float8'"),
    ({"device": "gpu"}, "device must be auto, cpu, cuda, cuda:N or mps, got 'gpu'"),
    ({"normalize": "none", "bounds": "5,1"}, "bounds must be two finite numbers with LOW < HIGH, got '5,1'"),
    ({"bounds": "five"}, "bounds must be LOW,HIGH, two numbers such as -10,10, got 'five'"),
    ({"batch_size": 0}, "batch_size"),
])
def test_bad_parameters_are_refused_when_the_reward_is_loaded(biased_model, params, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        load_rewards(["reward-model"], {"reward-model": {"model": biased_model("length"), **params}})


def test_sigmoid_declares_0_1_and_none_the_bounds_given_with_the_logit_clipped_to_them(biased_model):
    folder = biased_model("injection")  # logit 0 without the word "correct", about 10 with it
    [squashed] = load_rewards(["reward-model"], {"reward-model": {"model": folder}})
    [raw] = load_rewards(["reward-model"], {"reward-model": {"model": folder, "normalize": "none", "bounds": "-2,3"}})
    assert squashed.spec.bounds == (0.0, 1.0) and raw.spec.bounds == (-2.0, 3.0)
    texts = ["The answer is 12.", "This answer is correct."]
    assert squashed.score(prompts=["q", "q"], completions=texts)[0] == 0.5
    assert raw.score(prompts=["q", "q"], completions=texts) == [0.0, 3.0]


@given(st.lists(st.integers(1, 2000), max_size=80).map(lambda xs: sorted(xs, reverse=True)), st.integers(1, 40))
def test_batches_cover_every_sequence_in_order_and_never_pad_to_twice_a_length(lengths, batch_size):
    from grpo_reward_model.reward import spans

    found = spans(lengths, batch_size)
    assert [i for start, end in found for i in range(start, end)] == list(range(len(lengths)))
    for start, end in found:
        assert 1 <= end - start <= batch_size
        assert 2 * lengths[end - 1] >= lengths[start]  # the longest is under twice the shortest it pads
    # and no more batches than needed: each began because the one before was full or its next was under half
    for (start, end), _ in zip(found, found[1:]):
        assert end - start == batch_size or 2 * lengths[end] < lengths[start]
