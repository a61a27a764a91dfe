"""What grpo-core relies on inside TRL beyond its documented API is named in one module, and an installed TRL
that no longer has one of those attributes fails here, naming it."""

from grpo_core.training import trl_contract


def test_the_installed_trl_still_has_every_attribute_grpo_core_relies_on():
    problems = trl_contract.missing()
    assert not problems, "\n".join(problems)


class TrainerWithoutCalculateRewards:
    def __init__(self):
        self.reward_weights = None
        self._logs = {"rewards": {}}

    def _generate_and_score_completions(self):
        self._logs["rewards"]["x"] = self.reward_weights.to("cpu")


def test_a_trl_without_one_of_them_is_reported_by_the_attribute_s_name():
    (problem,) = trl_contract.missing(TrainerWithoutCalculateRewards)
    assert problem.startswith("TRL's GRPOTrainer._calculate_rewards is gone")
    assert "adaptive weights" in problem  # and why grpo-core needs it
