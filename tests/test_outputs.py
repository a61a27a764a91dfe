"""Run outputs: metrics, warnings, summary, plot and the reproducible run_config.yaml."""

import json
from types import SimpleNamespace

import numpy
import pytest

from grpo_core.rundir import record
from grpo_core.training import callbacks
from grpo_core.rundir import outputs


def records(values, key="rewards/math/mean"):
    return [{"step": i + 1, "reward": v, "reward_std": 0.1, key: v} for i, v in enumerate(values)]


def test_summary_reports_the_trend_over_all_steps():
    values = [0.0, 0.1, 0.1, 0.2, 0.2, 0.3, 0.3, 0.4, 0.4, 0.5]
    rows = outputs.summarize(records(values), ["math"])
    math_row = rows[0]
    assert math_row["reward"] == "math" and math_row["steps"] == 2 and math_row["logged"] == 10
    assert math_row["first"] == pytest.approx(0.05) and math_row["last"] == pytest.approx(0.45)
    slope, intercept = numpy.polyfit(range(1, 11), values, 1)
    assert math_row["trend_start"] == pytest.approx(intercept + slope)
    assert math_row["trend_end"] == pytest.approx(intercept + 10 * slope)
    text = outputs.format_summary(rows)
    assert "all 10 logged steps" in text and f"{9 * slope:+.3f}" in text


def test_trend_error_says_how_far_a_noisy_change_can_be_trusted():
    """Over many noisy runs of the same true rise, about two in three fitted changes lie within one error of it."""
    import random

    rng = random.Random(0)
    true_change, inside = 0.005 * 29, 0
    for _ in range(400):
        values = [0.4 + 0.005 * step + rng.gauss(0, 0.1) for step in range(30)]
        row = outputs.summarize(records(values), ["math"])[0]
        inside += abs(row["trend_end"] - row["trend_start"] - true_change) <= row["trend_error"]
    assert 0.6 < inside / 400 < 0.76


def test_the_trend_of_a_saturating_reward_stays_inside_its_bounds():
    """A reward bounded by 1 that rises fast then saturates: the fitted line passes 1, the summary shows 1."""
    from grpo_core import RewardSpec
    from grpo_core.rewards.reward import Reward

    values = [0.3, 0.5, 0.8, 0.95, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    slope, intercept = numpy.polyfit(range(1, 14), values, 1)
    assert intercept + 13 * slope > 1  # the unclipped line ends above the bound
    reward = Reward(RewardSpec(name="math", description="d", func=lambda c: 1.0, bounds=(0.0, 1.0)), {}, 0.5)
    text = outputs.run_summary(records(values), [reward])
    row = outputs.summarize(records(values), ["math"], bounds=outputs.reward_bounds([reward]))[0]
    assert row["trend_end"] == 1.0 and row["clipped"] == [False, True]
    math_line = next(line for line in text.splitlines() if line.startswith("math"))
    assert "1.000*" in math_line and f"{intercept + 13 * slope:.3f}" not in text
    assert "math [0, 1]" in text and "shown at the bound" in text
    assert outputs.reward_bounds([reward])["total"] == (0.0, 0.5)


def test_summary_handles_missing_values_and_no_steps():
    assert outputs.summarize([{"step": 1, "loss": 0.1}], ["math"]) == []
    rows = outputs.summarize([{"step": 1, "reward": 0.0, "rewards/math/mean": None}], ["math"])
    assert rows[0]["first"] is None and rows[0]["trend_start"] is None
    assert "-" in outputs.format_summary(rows)


def test_smooth_averages_neighbours_and_skips_missing_values():
    assert outputs.smooth([0.0, 1.0, None, 1.0, 0.0], 3) == [0.5, 0.5, 1.0, 0.5, 0.5]


def monitor_run(logs_per_step, **limits):
    warnings = []
    monitor = callbacks.MonitorCallback(warn=warnings.append, **limits)
    args = SimpleNamespace(learning_rate=1e-5, max_completion_length=48)
    for step, logs in enumerate(logs_per_step, start=1):
        monitor.on_log(args, SimpleNamespace(is_world_process_zero=True, global_step=step), None, logs=logs)
    return warnings


def test_warns_once_when_reward_std_stays_zero():
    warnings = monitor_run([{"reward": 0.0, "reward_std": 0.0}] * 5)
    assert len(warnings) == 1
    assert "reward_std has been 0 for 3 steps" in warnings[0] and "num_generations" in warnings[0]


def test_no_warning_when_signal_returns():
    flat, signal = {"reward": 0.0, "reward_std": 0.0}, {"reward": 0.5, "reward_std": 0.2}
    assert monitor_run([flat, flat, signal, flat, flat]) == []


def test_warns_when_kl_explodes_and_names_a_lower_learning_rate():
    warnings = monitor_run([{"reward": 0.1, "reward_std": 0.1, "kl": 0.01}, {"reward": 0.1, "reward_std": 0.1, "kl": 50.0}])
    assert len(warnings) == 1 and "KL" in warnings[0] and "learning_rate=2.5e-06" in warnings[0]


def test_warns_when_most_completions_are_truncated():
    logs = {"reward": 0.1, "reward_std": 0.1, "completions/clipped_ratio": 0.9}
    warnings = monitor_run([logs] * 3)
    assert len(warnings) == 1 and "max_completion_length (48 tokens)" in warnings[0] and "=96" in warnings[0]


def test_a_resumed_run_goes_on_counting_unscored_steps_and_streaks_from_its_checkpoint():
    args = SimpleNamespace(learning_rate=1e-5, max_completion_length=48)
    unscored = {"reward": 0.0, "reward_std": 0.0, "rewards/math/mean": None}
    monitor = callbacks.MonitorCallback(warn=lambda message: None)
    for step in (1, 2):
        monitor.on_log(args, SimpleNamespace(is_world_process_zero=True, global_step=step), None, logs=dict(unscored))
    saved = json.loads(json.dumps({"MonitorCallback": monitor.state()}))  # as trainer_state.json keeps it

    warnings = []
    resumed = callbacks.MonitorCallback(warn=warnings.append)
    resumed.on_train_begin(args, SimpleNamespace(stateful_callbacks=saved), None)
    logs = dict(unscored)
    resumed.on_log(args, SimpleNamespace(is_world_process_zero=True, global_step=3), None, logs=logs)
    assert logs["unscored_steps"] == 3  # a count over the run: it does not fall back to 1 after a resume
    assert any("reward_std has been 0 for 3 steps" in w for w in warnings)  # the streak went on across it
    fresh = callbacks.MonitorCallback(warn=warnings.append)
    fresh.on_train_begin(args, SimpleNamespace(stateful_callbacks={}), None)
    assert (fresh.flat, fresh.clipped, fresh.unscored) == (0, 0, 0)


def test_truncate_metrics_keeps_steps_up_to_the_checkpoint(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": s, "reward": 0.1}) + "\n" for s in (1, 2, 3, 4)))
    outputs.truncate_metrics(path, 2)
    assert [r["step"] for r in outputs.read_metrics(path)] == [1, 2]


def _log_session(path, steps, summary):
    """What a session's trainer hands MetricsCallback.on_log: one log per step, then its end-of-training summary
    (the keys transformers' Trainer logs there), at the step it stopped."""
    callback = callbacks.MetricsCallback(path)
    for step in steps:
        state = SimpleNamespace(is_world_process_zero=True, global_step=step)
        callback.on_log(None, state, None, logs={"loss": 0.0, "reward": 0.5, "epoch": step / 8})
    callback.on_log(None, state, None, logs={"train_runtime": 0.2, "train_samples_per_second": 30.0,
                                             "train_steps_per_second": 15.0, "total_flos": 0.0,
                                             "train_loss": summary, "epoch": step / 8})


def test_a_resumed_run_logs_each_step_once_and_marks_each_session_summary(tmp_path):
    path = tmp_path / "metrics.jsonl"
    _log_session(path, [1, 2, 3, 4], summary=-0.1)  # interrupted after step 4, checkpoint-4 saved
    outputs.truncate_metrics(path, 4)  # --resume from checkpoint-4
    _log_session(path, [5, 6], summary=-0.2)
    rows = outputs.read_metrics(path)
    assert [r["step"] for r in rows if "step" in r] == [1, 2, 3, 4, 5, 6]  # no step number used twice
    summaries = [r for r in rows if r.get("summary")]
    assert [(r["after_step"], r["train_loss"]) for r in summaries] == [(4, -0.1), (6, -0.2)]
    assert all("step" not in r and "reward" not in r for r in summaries)


def test_truncate_metrics_drops_a_session_summary_logged_after_the_checkpoint(tmp_path):
    path = tmp_path / "metrics.jsonl"
    _log_session(path, [1, 2, 3], summary=-0.1)
    outputs.truncate_metrics(path, 2)
    assert [r.get("step", r.get("after_step")) for r in outputs.read_metrics(path)] == [1, 2]


def test_a_staged_run_counts_session_summaries_over_the_whole_run(tmp_path):
    from grpo_core.rundir.stage_outputs import stage_records

    _log_session(tmp_path / "one" / "metrics.jsonl", [1, 2], summary=-0.1)
    _log_session(tmp_path / "two" / "metrics.jsonl", [1, 2, 3], summary=-0.2)
    stages = [SimpleNamespace(name="one"), SimpleNamespace(name="two")]
    rows, starts = stage_records(tmp_path, stages)
    assert [(r["step"], r["stage"]) for r in rows if "step" in r] == [
        (1, "one"), (2, "one"), (3, "two"), (4, "two"), (5, "two")]
    assert [(r["after_step"], r["stage_after_step"], r["stage"]) for r in rows if r.get("summary")] == [
        (2, 2, "one"), (5, 3, "two")]
    assert starts == [(0, "one"), (2, "two")]


def test_plot_has_one_line_per_reward_and_the_total(tmp_path):
    data = [{"step": i, "reward": i / 10, "rewards/math/mean": i / 20, "rewards/xml-format/mean": 0.5} for i in range(1, 6)]
    path = outputs.plot_rewards(data, ["math", "xml-format"], tmp_path / "curve.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert outputs.plot_rewards([{"step": 1, "loss": 0.2}], ["math"], tmp_path / "none.png") is None
    labels = [line.get_label() for line in outputs.reward_figure(data, ["math", "xml-format"]).axes[0].get_lines()]
    assert [label.split(" (")[0] for label in labels if not label.startswith("_")] == ["math", "xml-format", "total"]


def test_plot_of_a_single_reward_shows_that_reward_on_integer_steps():
    data = [{"step": i, "reward": i / 7, "rewards/math/mean": i / 7} for i in range(1, 8)]
    axis = outputs.reward_figure(data, ["math"]).axes[0]
    labels = [line.get_label() for line in axis.get_lines() if not line.get_label().startswith("_")]
    assert labels == ["math (3-step average)"]  # the total would only hide it
    axis.figure.canvas.draw()
    assert all(float(tick).is_integer() for tick in axis.get_xticks())
    raw, smoothed = axis.get_lines()
    assert list(smoothed.get_ydata()) == pytest.approx(outputs.smooth(list(raw.get_ydata()), 3))


def test_run_config_reproduces_the_resolved_run(data_file, tmp_path, cache_dir):
    from grpo_core.training.resolve import resolve
    from grpo_core.settings.layers import settings_from_options

    settings = settings_from_options(
        rewards=("length=0.5",), reward_args=("length.target=30",), dataset="local",
        dataset_args=(f"path={data_file}",), model="tiny-random", max_steps=5, output_dir=str(tmp_path / "out"),
        overrides=("learning_rate=3e-5",),
    )
    run = resolve(settings, log=lambda m: None)
    record.write_run_config(run, tmp_path / "run_config.yaml")
    again = resolve(settings_from_options(config_file=str(tmp_path / "run_config.yaml")), log=lambda m: None)
    assert again.grpo == run.grpo
    assert [(r.__name__, r.weight, r.params) for r in again.rewards] == [(r.__name__, r.weight, r.params) for r in run.rewards]
    assert again.dataset_params == run.dataset_params and again.model == run.model
