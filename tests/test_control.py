"""The control run (--control shuffled|random): TRL trains on scores cut loose from their completions, in a folder
beside the run, checked before the run trains; the comparison shows base, trained, control and the gain over it."""

import json
import math

import pytest
import torch
import yaml

from grpo_core.rundir.folder import owned_outputs
from grpo_core.training import control, trl_contract

from cli_helpers import folder_hash, invoke
from test_faults import earlier, refused, run_args  # noqa: F401  (earlier: a fixture)


class FakeTrainer:
    """What ``trl_contract.change_rewards`` touches: ``_calculate_rewards`` and ``model.training``."""

    def __init__(self, table):
        self.table = table
        self.model = type("Model", (), {"training": True})()

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        return self.table.clone()


def scored(trainer):
    return trainer._calculate_rewards([], [], [], [])


def table(rows=64):
    values = torch.arange(rows * 2, dtype=torch.float32).view(rows, 2)
    values[3, 1] = float("nan")  # a reward that could not score one completion
    return values


def test_shuffled_permutes_whole_rows_the_same_way_in_every_process():
    original = table()
    first, second = FakeTrainer(original), FakeTrainer(original)
    trl_contract.change_rewards(first, [control.table_change("shuffled", seed=7)])
    trl_contract.change_rewards(second, [control.table_change("shuffled", seed=7)])
    for _ in range(3):  # one draw per batch, the same sequence in each process
        a, b = scored(first), scored(second)
        assert torch.equal(a.nan_to_num(-1), b.nan_to_num(-1))
        rows = sorted(tuple(row) for row in original.nan_to_num(-1).tolist())
        assert sorted(tuple(row) for row in a.nan_to_num(-1).tolist()) == rows  # each completion's row, moved whole
        assert not torch.equal(a.nan_to_num(-1), original.nan_to_num(-1))
    other = FakeTrainer(original)
    trl_contract.change_rewards(other, [control.table_change("shuffled", seed=8)])
    assert not torch.equal(scored(other).nan_to_num(-1), scored(FakeTrainer(original)).nan_to_num(-1))


def test_random_draws_each_reward_with_its_mean_and_spread_and_keeps_unscored_items():
    original = torch.cat([torch.zeros(2000, 1), torch.ones(2000, 1)]).repeat(1, 2)
    original[:, 1] *= 10
    original[5, 0] = float("nan")
    trainer = FakeTrainer(original)
    trl_contract.change_rewards(trainer, [control.table_change("random", seed=0)])
    drawn = scored(trainer)
    assert torch.isnan(drawn[5, 0]) and torch.isnan(drawn).sum() == 1
    for column, (mean, spread) in enumerate([(0.5, 0.5), (5.0, 5.0)]):
        values = drawn[:, column][torch.isfinite(drawn[:, column])]
        assert abs(values.mean().item() - mean) < 0.05 * spread * 2
        assert abs(values.std().item() - spread) < 0.05 * spread
        assert len(set(values.tolist())) > 3000  # drawn, not the 0/1 scores moved about


def test_the_health_signals_see_the_scores_a_control_run_trains_on():
    from types import SimpleNamespace

    from grpo_core.training.build import reward_table_changes

    seen = []
    run = SimpleNamespace(settings=SimpleNamespace(control="shuffled", control_of="/runs/x"), rewards=[], schedules={})
    changes = reward_table_changes(run, SimpleNamespace(seed=3), lambda values, *batch: seen.append(values) or values)
    original = table()
    trainer = FakeTrainer(original)
    trl_contract.change_rewards(trainer, changes)
    trained_on = scored(trainer)
    assert torch.equal(seen[0].nan_to_num(-1), trained_on.nan_to_num(-1))  # the control's scores, not the rewards'
    assert not torch.equal(trained_on.nan_to_num(-1), original.nan_to_num(-1))


def test_evaluation_batches_keep_their_scores():
    original = table()
    trainer = FakeTrainer(original)
    trl_contract.change_rewards(trainer, [control.table_change("shuffled", seed=0)])
    trainer.model.training = False
    assert torch.equal(scored(trainer).nan_to_num(-1), original.nan_to_num(-1))


def test_gain_lines_give_the_paired_gain_and_its_standard_error():
    def result(values):
        samples = [{"math": v} for v in values]
        finite = [v for v in values if v is not None]
        return {"means": {"math": sum(finite) / len(finite)}, "samples": samples}

    base, trained, rival = result([0, 0, 1, 0]), result([1, 1, 1, None]), result([0, 1, 1, 1])
    (line,) = control.gain_lines([base, trained, rival], ["math"], "4 questions")
    # paired over the 3 prompts both scored: differences 1, 0, 0 -> mean 1/3, s.e. sqrt(1/3 / 3)
    assert line == (f"held-out math, 4 questions:  base 0.250   trained 1.000   control 0.750   gain over control "
                    f"+0.333 (+/- {math.sqrt(1 / 9):.3f})")
    (line,) = control.gain_lines([base, trained, rival], ["math"], "4 rows", held_out=False)
    assert line.startswith("math, 4 rows:")


def test_control_folder_is_beside_the_run(tmp_path):
    assert control.control_folder(tmp_path / "runs" / "demo") == tmp_path / "runs" / "demo-control"


# --- user mistakes: one line, exit 2, nothing written ------------------------------------------


def test_an_unknown_kind_of_control_is_refused(data_file, tmp_path):
    out = tmp_path / "out"
    refused(run_args(data_file, out, "--control", "shufled"), ["--control 'shufled'", "shuffled, random"])
    assert not out.exists() and not (tmp_path / "out-control").exists()


def test_control_of_without_a_kind_is_refused(data_file, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"control_of": str(tmp_path / "run")}))
    refused(run_args(data_file, tmp_path / "out", "--config", config), ["control_of:", "control: shuffled or random"])


def test_a_control_folder_holding_another_run_is_refused_before_training(data_file, earlier, tmp_path):
    out = tmp_path / "fresh"
    control_folder = control.control_folder(out)
    earlier.rename(control_folder)
    before = folder_hash(control_folder)
    line = refused(run_args(data_file, out, "--control", "shuffled"), ["holds another run's outputs", "--overwrite"])
    assert str(control_folder) in line
    assert folder_hash(control_folder) == before
    assert not (out / "run_config.yaml").exists()  # nothing trained


def test_control_of_a_run_launched_in_several_processes_is_refused(data_file, tmp_path):
    refused(run_args(data_file, tmp_path / "out", "--control", "shuffled", "--num-processes", "2"),
            "--control trains the control in this process after the run")


def test_dry_run_shows_the_control_setting(data_file, tmp_path):
    code, output = invoke(*run_args(data_file, tmp_path / "out", "--control", "random", "--dry-run"))
    assert code == 0, output
    described = json.loads(output[output.index("{"):])
    assert described["settings"]["control"] == "random"
    assert not (tmp_path / "out-control").exists()


def test_a_control_without_compare_compares_on_the_default_number_and_says_so(data_file, tmp_path):
    code, output = invoke(*run_args(data_file, tmp_path / "out", "--control", "shuffled", "--dry-run"))
    assert code == 0, output
    said = [line for line in output.splitlines() if line.startswith("--control:")]
    assert said == [f"--control: the comparison after training scores base, trained and control on "
                    f"{control.COMPARE_WITH_CONTROL} held-out prompts (--compare N for another number)"]
    assert json.loads(output[output.index("{"):])["settings"]["compare"] == control.COMPARE_WITH_CONTROL
    code, output = invoke(*run_args(data_file, tmp_path / "out", "--control", "shuffled", "--compare", "7",
                                    "--dry-run"))
    assert code == 0 and "--control:" not in output  # a number given is kept, and nothing is said
    assert json.loads(output[output.index("{"):])["settings"]["compare"] == 7


# --- end to end ---------------------------------------------------------------------------------


def completion_scores_match(folder, reward):
    """For each logged completion, whether its logged score is the reward's own score of its text (TRL keeps the
    scores as float32)."""
    records = [json.loads(line) for line in (folder / "completions.jsonl").read_text().splitlines()]
    return [math.isclose(record["rewards"][reward.__name__], reward.score(prompts=[record["prompt"]],
                                                                         completions=[record["completion"]])[0],
                         rel_tol=1e-6) for record in records]


@pytest.mark.slow
def test_a_run_with_a_shuffled_control_trains_both_and_compares_three_ways(data_file, tmp_path, cache_dir):
    from grpo_core import load_rewards

    out = tmp_path / "run"
    code, output = invoke("--reward", "length", "--reward-arg", "length.target=12", "--dataset", "local",
                          "--dataset-arg", f"path={data_file}", "--model", "tiny-random", "--output-dir", out,
                          "--no-preflight", "--set", "num_generations=4", "--set", "per_device_train_batch_size=8",
                          "--set", "max_completion_length=16", "--max-steps", "2", "--compare", "4",
                          "--control", "shuffled")
    assert code == 0, output
    folder = control.control_folder(out)
    saved = yaml.safe_load((folder / "run_config.yaml").read_text())
    assert saved["control"] == "shuffled" and saved["control_of"] == str(out)
    assert "control_of" not in yaml.safe_load((out / "run_config.yaml").read_text())
    assert (folder / "final" / "config.json").is_file()
    assert "control run (each step's rows of reward scores permuted" in output
    assert f"{folder / 'final'} (control)" in output
    assert "comparison: generating greedily with 3 models on the dataset's last 4 rows" in output
    assert f"comparison: scoring {folder / 'final'} (control), model 3 of 3, on 4 prompts" in output
    (line,) = [line for line in output.splitlines() if "gain over control" in line]
    assert line.startswith("length, 4 rows:  base ") and " trained " in line and " control " in line
    card = (out / "README.md").read_text()  # the run's model card says what it trained, and its comparison
    assert "time machine" not in card and "README.md" in owned_outputs(out)
    assert f"grpo-run --config {out / 'run_config.yaml'}" in card
    assert "| `length` | 1 | `target=12`" in card and f"`local`: `path={data_file}`" in card
    assert "## Comparison" in card and f"| {folder / 'final'} (control) |" in card and line.strip() in card
    assert "## Reward curve" in card and "\n| 2 | " in card
    assert "This is a control run (`shuffled`)" in (folder / "README.md").read_text()
    assert "This is a control run" not in card and "A control run (`shuffled`) trained beside it" in card
    # the run trained on the length reward's own scores; its control on scores moved to other completions
    (length,) = load_rewards(["length"], params={"length": {"target": 12}})
    assert all(completion_scores_match(out, length))
    assert not all(completion_scores_match(folder, length))


@pytest.mark.slow
def test_a_staged_run_trains_its_control_stages_beside_it(tmp_path, cache_dir):
    config = tmp_path / "staged.yaml"
    out = tmp_path / "run"
    config.write_text(yaml.safe_dump({
        "model": "tiny-random", "profile": "cpu", "dataset": "arithmetic", "dataset_args": {"size": 40},
        "rewards": ["math=1.0", "xml-format=0.5"], "output_dir": str(out), "num_generations": 2,
        "per_device_train_batch_size": 2, "max_completion_length": 8, "preflight": False,
        "stages": [{"name": "format", "rewards": ["xml-format=1.0"], "max_steps": 1}, {"name": "solve", "max_steps": 1}],
    }))
    code, output = invoke("--config", config, "--control", "random")
    assert code == 0, output
    folder = control.control_folder(out)
    for stage in ("format", "solve"):
        saved = yaml.safe_load((folder / stage / "run_config.yaml").read_text())
        assert saved["control"] == "random" and saved["control_of"] == str(out)
        assert (folder / stage / "final" / "config.json").is_file()
        assert "control_of" not in yaml.safe_load((out / stage / "run_config.yaml").read_text())
    assert f"--model {out / 'solve' / 'final'} --model {folder / 'solve' / 'final'}" in output
