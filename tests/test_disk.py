"""What a finished run leaves on disk: the default run keeps one checkpoint while it trains and none once
final/ is saved; other runs keep TRL's checkpoints; the model card names the base model."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from grpo_core.rundir import folder
from grpo_core.errors import UsageError
from grpo_core.rundir.record import base_model_words
from grpo_core.training.callbacks import ModelCardCallback
from grpo_core.settings.layers import settings_from_options


def test_the_default_run_keeps_one_checkpoint_and_removes_it_when_finished(data_file):
    default = settings_from_options()
    assert default.keep_checkpoints is False and default.grpo["save_total_limit"] == 1
    custom = settings_from_options(rewards=("length",), dataset="local", dataset_args=(f"path={data_file}",),
                                   model="tiny-random")
    assert custom.keep_checkpoints is True and "save_total_limit" not in custom.base_grpo


def test_removing_a_finished_runs_checkpoints_keeps_the_rest_and_says_so(tmp_path):
    for name in ("checkpoint-10", "checkpoint-20", "final"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.safetensors").write_bytes(b"x")
    (tmp_path / "metrics.jsonl").write_text("{}\n")
    message = folder.remove_checkpoints(tmp_path)
    assert "checkpoint-10, checkpoint-20" in message and "keep_checkpoints: true" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final", "metrics.jsonl"]
    with pytest.raises(UsageError, match="finished and its checkpoints were removed"):
        folder.validate_output_dir(tmp_path, resume=True, overwrite=False)


def test_the_model_card_names_the_base_model_trl_cannot(tmp_path):
    # what TRL writes with each checkpoint for a model loaded from a local folder
    (tmp_path / "README.md").write_text("---\ntags:\n- generated_from_trainer\n---\nThis model is a fine-tuned "
                                        "version of [None](https://huggingface.co/None).\n"
                                        'generator = pipeline("text-generation", model="None")\n')
    args, state = SimpleNamespace(output_dir=str(tmp_path)), SimpleNamespace(is_world_process_zero=True)
    ModelCardCallback(base_model_words("smollm2-135m")).on_save(args, state, None)
    card = (tmp_path / "README.md").read_text()
    assert "None" not in card
    assert "fine-tuned version of `smollm2-135m` (a grpo-run model alias: SmolLM2-135M-Instruct" in card
    assert f'model="{Path(tmp_path) / "final"}"' in card