"""What is not a reward model is refused before anything trains: a folder that is not there, a model with two
labels, a causal language model. Each is exit status 2 with one line naming the model and what to pass, no traceback,
from ``grpo-run check`` and from training (where it stops before the policy loads)."""

import pytest
from click.testing import CliRunner

from grpo_core.testing import grpo_run

CASES = {
    "missing folder": ("/nonexistent/reward-model", "model folder '/nonexistent/reward-model' does not exist"),
    "two labels": (None, "has 2 labels; a reward model has exactly one output"),
    "causal LM": (None, "is a LlamaForCausalLM, not a reward model"),
    "no model": ("", "no reward model given; pass a sequence-classification model folder"),
}


def _run(*args: str):
    return CliRunner().invoke(grpo_run, list(args), catch_exceptions=False)


@pytest.mark.parametrize("command", ["check", "train"])
@pytest.mark.parametrize("case", list(CASES))
def test_what_is_not_a_reward_model_is_one_line_and_exit_2(not_reward_models, tmp_path, case, command):
    folder, message = CASES[case]
    folder = not_reward_models[case] if folder is None else folder
    args = ["--reward", "reward-model", "--reward-arg", f"reward-model.model={folder}"]
    if command == "check":
        result = _run("check", *args, "--max-examples", "1")
    else:
        result = _run("train", *args, "--dataset", "arithmetic", "--model", "tiny-random", "--max-steps", "1",
                      "--output-dir", str(tmp_path / "out"))
    # a plugin another test installed broken is named in a warning line of its own, before the error
    lines = [line for line in result.stderr.splitlines()
             if line.strip() and not line.startswith("grpo-run: warning: plugin ")]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
