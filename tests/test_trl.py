"""What grpo-core relies on inside TRL beyond its documented API is named in one module, and an installed TRL
that no longer has one of those attributes fails here, naming it."""

from pathlib import Path

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

    def _save_checkpoint(self, model, trial):
        self.create_model_card(model_name="x")

    def _get_per_token_logps_and_entropies(self, model, model_inputs, labels):
        outputs = model(**model_inputs, labels=labels, fused_lm_head=True)
        return outputs


def test_a_trl_without_one_of_them_is_reported_by_the_attribute_s_name():
    (problem,) = trl_contract.missing(TrainerWithoutCalculateRewards)
    assert problem.startswith("TRL's GRPOTrainer._calculate_rewards is gone")
    assert "adaptive weights" in problem  # and why grpo-core needs it


def test_a_gone_function_or_text_is_reported_by_its_name():
    functions = {"trl.trainer.utils.no_such_loader": "a stage loads its base model with it"}
    texts = {"a line TRL no longer logs": ("it is filtered", "trl.trainer.grpo_trainer", "no such text in TRL")}
    problems = trl_contract.missing(functions=functions, texts=texts)
    assert problems == [
        "TRL's trl.trainer.utils.no_such_loader is gone: grpo-core needs it because a stage loads its base model with it",
        "TRL no longer writes a line TRL no longer logs ('no such text in TRL' not found in trl.trainer.grpo_trainer): "
        "grpo-core reads it because it is filtered"]


def test_every_private_name_of_trl_is_used_only_in_the_contract():
    """The names and texts the contract lists appear nowhere else in the core, so a TRL upgrade breaks a test here,
    not a user's run."""
    root = Path(trl_contract.__file__).parents[1]
    words = ["trainer._", "._save_checkpoint", "create_model_from_path", "_calculate_rewards", "._logs",
             *(text for _, _, text in trl_contract.TEXTS.values())]
    found = [f"{path.relative_to(root)}: {word}" for path in root.rglob("*.py") if path.name != "trl_contract.py"
             for word in words if word in path.read_text(encoding="utf-8")]
    assert not found, found


def test_the_model_card_names_the_base_model_trl_cannot():
    card = ("This model is a fine-tuned version of [None](https://huggingface.co/None).\n"
            'generator = pipeline("text-generation", model="None", device_map="auto")\n')
    named = trl_contract.name_base_model(card, "`smollm2-135m`", "/runs/x/final")
    assert named == ("This model is a fine-tuned version of `smollm2-135m`.\n"
                     'generator = pipeline("text-generation", model="/runs/x/final", device_map="auto")\n')
