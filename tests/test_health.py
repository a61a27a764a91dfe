"""The reward-health signals: each made to fire on purpose from the batches that cause it, and quiet on batches
like the default run's."""

import json
from types import SimpleNamespace

import pytest

from grpo_core.training.callbacks import Alarms, HealthCallback, StopCallback
from grpo_core.testing import blank_texts, copied_prompt, generic_degenerate, number_sprays, padding_to
from grpo_core.training.health import Health, degenerate_family, dominance, observe_batch

from cli_helpers import invoke
from test_faults import refused, run_args

QUESTION = "What is 17 - 6? Put the answer in <answer></answer>."
PROMPT = [{"role": "user", "content": QUESTION}]


def batch(table, weights, completions, group=4):
    return observe_batch(table, weights, group, [PROMPT] * len(completions), completions)


def logged(health, batches_per_step, reward=None):
    """Feed the steps' batches, logging after each; every warning that fired, in order."""
    fired = []
    for step, batches in enumerate(batches_per_step, start=1):
        for b in batches:
            health.observe(b)
        logs = {"reward": reward(step) if reward else 0.5, "reward_std": 0.3}
        fired += health.log(logs, step)
    return fired, logs


# --- the audit's shapes -------------------------------------------------------------------------


@pytest.mark.parametrize("label,text", [*generic_degenerate(QUESTION, size=300), *padding_to(200), *blank_texts(200),
                                        *number_sprays()[:2], *copied_prompt(QUESTION)])
def test_the_generic_attacks_look_degenerate(label, text):
    assert degenerate_family(text, QUESTION) is not None, label


@pytest.mark.parametrize("text", [
    "11", "<answer>11</answer>", "17 - 6 = 11\n<answer>11</answer>", "Putting it all together, I get 11.",
    f"{QUESTION}\nSubtracting 6 from 17 leaves 11, so the answer is 11.",  # the question restated, then answered
    "The primes below 30 are 2, 3, 5, 7, 11, 13, 17, 19, 23 and 29.", "| a | b |\n|---|---|\n| 1 | 2 |",
    '{"name": "Ada", "born": 1815, "fields": ["mathematics", "computing"]}',
])
def test_right_answers_do_not_look_degenerate(text):
    assert degenerate_family(text, QUESTION) is None


# --- each signal fires on purpose ---------------------------------------------------------------


def test_a_light_reward_that_decides_the_ordering_is_named():
    # 'format' (weight 1) scores every completion of a group alike; 'length' (weight 0.1) decides the ordering
    table = [[1.0, i / 4] for i in range(4)] + [[0.0, (3 - i) / 4] for i in range(4)]
    b = batch(table, [1.0, 0.1], ["a"] * 8)
    assert dominance([b]) == pytest.approx([0.0, 1.0])
    health = Health(["format", "length"], [1.0, 0.1], 4)
    fired, logs = logged(health, [[b]] * 3)
    assert logs["health/dominance/length"] == pytest.approx(1.0)
    (key, message), = fired
    assert key == "dominance" and "reward 'length' decides 100%" in message and "9% of the weight" in message


def test_a_heavy_reward_that_decides_the_ordering_is_not_a_warning():
    table = [[i / 4, 1.0] for i in range(4)] * 2
    health = Health(["math", "format"], [1.0, 0.5], 4)
    fired, logs = logged(health, [[batch(table, [1.0, 0.5], ["a"] * 8)]] * 5)
    assert logs["health/dominance/math"] == pytest.approx(1.0) and fired == []


def test_the_shares_add_up_to_one_when_both_rewards_vary():
    table = [[i % 2, (i // 2) % 2] for i in range(4)] + [[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]]
    shares = dominance([batch(table, [1.0, 0.5], ["a"] * 8)])
    assert sum(shares) == pytest.approx(1.0) and all(0 < share < 1 for share in shares)


def test_groups_that_teach_nothing_are_counted_and_warned_of():
    table = [[1.0]] * 4 + [[0.0]] * 4 + [[0.0], [1.0], [0.0], [0.0]]  # two flat groups of three
    health = Health(["math"], [1.0], 4)
    fired, logs = logged(health, [[batch(table, [1.0], ["a"] * 12)]] * 3)
    assert logs["health/flat_groups"] == pytest.approx(2 / 3)
    assert fired == []  # below 75%
    flat = [[1.0]] * 4 + [[0.0]] * 4
    fired, logs = logged(Health(["math"], [1.0], 4), [[batch(flat, [1.0], ["a"] * 8)]] * 3)
    assert [key for key, _ in fired] == ["flat-groups"] and logs["health/flat_groups_trend"] == 0


def test_longer_completions_paid_more_warn_of_length():
    texts = ["x" * n for n in (5, 10, 20, 40)] * 2
    table = [[len(t) / 40] for t in texts]  # a reward that pays length
    health = Health(["pad"], [1.0], 4)
    fired, logs = logged(health, [[batch(table, [1.0], texts)]] * 2)
    assert logs["health/length_corr"] == pytest.approx(1.0) and logs["health/mean_length"] == pytest.approx(18.75)
    assert [key for key, _ in fired] == ["length"]


def test_paid_completions_that_look_degenerate_are_audited():
    texts = ["17 - 6 = 11 <answer>11</answer>", "17 - 6 = 10 <answer>10</answer>", " " * 200, "\n" * 300] * 2
    table = [[0.0], [0.0], [1.0], [1.0]] * 2  # the padding is paid
    health = Health(["pad"], [1.0], 4)
    fired, logs = logged(health, [[batch(table, [1.0], texts)]])
    assert logs["health/degenerate_paid"] == 1.0
    (key, message), = [f for f in fired if f[0] == "degenerate"]
    assert "100% of the completions paid above their group's mean" in message and "empty (4)" in message


def test_a_batch_outside_the_audit_steps_is_not_audited():
    texts = ["<answer>11</answer>", "no", "<answer>11</answer>", "no"]
    health = Health(["math"], [1.0], 4)
    for step in (1, 2, 3):
        health.observe(observe_batch([[1.0], [0.0], [1.0], [0.0]], [1.0], 4, [PROMPT] * 4, texts, audit=step != 2))
        logs = {"reward": 0.5}
        health.log(logs, step)
        assert ("health/degenerate_paid" in logs) == (step != 2)
    assert observe_batch([[1.0]] * 4, [1.0], 4, [PROMPT] * 4, texts, audit=False).families is None


def test_a_training_reward_that_rises_while_the_probe_stays_flat_is_flagged():
    health = Health(["math"], [1.0], 4)
    health.probe({}, 0, {"math": 0.4})
    logged(health, [[batch([[0.0]] * 4, [1.0], ["a"] * 4)]] * 5, reward=lambda step: 0.1 + 0.1 * step)
    assert health.probe({}, 5, {"math": 0.4}) == []  # too early to tell
    logged(health, [[batch([[0.0]] * 4, [1.0], ["a"] * 4)]] * 5, reward=lambda step: 0.6 + 0.1 * step)
    logs = {}
    (key, message), = health.probe(logs, 10, {"math": 0.4})
    assert key == "probe" and "held-out probe's math went from 0.400 to 0.400" in message
    assert logs == {"health/probe/math": 0.4}
    rising = Health(["math"], [1.0], 4)
    rising.probe({}, 0, {"math": 0.4})
    logged(rising, [[batch([[0.0]] * 4, [1.0], ["a"] * 4)]] * 10, reward=lambda step: 0.1 + 0.1 * step)
    assert rising.probe({}, 10, {"math": 0.6}) == []


def test_a_step_like_the_default_runs_raises_nothing():
    right, wrong = "15 + 4 = 19\n<answer>19</answer>", "15 + 4 = 18\n<answer>18</answer>"
    texts = [right, wrong, right, "15 + 4 = 20\n<answer>20</answer>"] * 2 + [wrong, right, wrong, wrong] * 2
    table = [[1.0 if t == right else 0.0, 1.0] for t in texts]
    fired, logs = logged(Health(["math", "xml-format"], [1.0, 0.5], 8), [[batch(table, [1.0, 0.5], texts, 8)]] * 6)
    assert fired == [] and logs["health/degenerate_paid"] == 0.0 and logs["health/flat_groups"] == 0.0


# --- warnings reach the user once, and --stop-on stops the run ----------------------------------


def test_a_warning_named_by_stop_on_saves_and_stops_the_run():
    said = []
    alarms = Alarms(said.append, stop_on=["length"])
    health = Health(["pad"], [1.0], 4)
    texts = ["x" * n for n in (5, 10, 20, 40)]
    callbacks = [HealthCallback(health, alarms), StopCallback(alarms)]
    args, state = SimpleNamespace(world_size=1), SimpleNamespace(is_world_process_zero=True, global_step=0)
    for step in (1, 2, 3):
        state.global_step = step
        health.observe(batch([[len(t) / 40] for t in texts], [1.0], texts))
        control = SimpleNamespace(should_save=False, should_training_stop=False)
        for callback in callbacks:
            callback.on_log(args, state, control, logs={"reward": 0.5, "reward_std": 0.3})
        if control.should_training_stop:
            break
    assert step == 2 and control.should_save and alarms.stopped_by == "length" and len(said) == 1


def test_stop_on_any_stops_on_the_first_warning_and_other_names_do_not():
    alarms = Alarms(lambda message: None, stop_on=["kl"])
    alarms.fire("length", "...")
    assert alarms.stopped_by is None
    alarms = Alarms(lambda message: None, stop_on=["any"])
    alarms.fire("length", "...")
    assert alarms.stopped_by == "length"


def test_an_unknown_stop_on_name_is_refused(data_file, tmp_path):
    refused(run_args(data_file, tmp_path / "out", "--stop-on", "lenght"), ["--stop-on 'lenght'", "length"])


def test_stop_on_probe_needs_a_probe(data_file, tmp_path):
    refused(run_args(data_file, tmp_path / "out", "--stop-on", "probe"), "--stop-on probe needs a held-out probe")


@pytest.mark.parametrize("flag,value", [("--probe", "-1"), ("--probe-every", "0"), ("--audit-every", "0")])
def test_probe_and_audit_counts_have_bounds(data_file, tmp_path, flag, value):
    code, output = invoke(*run_args(data_file, tmp_path / "out", flag, value))
    assert code == 2 and value in output and not (tmp_path / "out").exists()


# --- end to end: real runs --------------------------------------------------------------------


def pays_length(completion):
    """A reward that pays padding: every character earns, whatever it is."""
    return min(1.0, len(completion) / 64)


def always_one(completion):
    return 1.0


def pays_nothing(completion):
    return 0.0


class Rewards:
    @staticmethod
    @__import__("grpo_core").hookimpl
    def register_rewards(register):
        from grpo_core import RewardSpec

        register(RewardSpec("pays-length", "Pays every character", pays_length, bounds=(0.0, 1.0)))
        register(RewardSpec("always-one", "Pays every completion the same", always_one, bounds=(0.0, 1.0)))
        register(RewardSpec("pays-nothing", "Pays no completion anything", pays_nothing, bounds=(0.0, 1.0)))


def tiny_run(data_file, out, *extra):
    return ["--dataset", "local", "--dataset-arg", f"path={data_file}", "--model", "tiny-random", "--output-dir", out,
            "--no-preflight", "--set", "num_generations=4", "--set", "per_device_train_batch_size=8", *extra]


def metrics(folder):
    import json

    return [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_policy_that_pads_under_a_reward_that_pays_padding_is_caught_and_stopped(data_file, tmp_path, cache_dir):
    from grpo_core.plugins import registered

    out = tmp_path / "out"
    # the tiny model biased toward the space token (223), and its end (2) so that lengths vary: a policy that pads,
    # as one gaming a length reward would
    bias = '--set=generation_kwargs={"sequence_bias": [[[223], 6.0], [[2], 3.0]]}'
    with registered(Rewards()):
        code, output = invoke(*tiny_run(data_file, out, "--reward", "pays-length", "--max-steps", "6",
                                        "--set", "max_completion_length=32", bias, "--stop-on", "length"))
    assert code == 3, output
    assert "warning: longer completions are paid more" in output
    assert "look degenerate: blank characters" in output
    assert "by --stop-on length" in output
    steps = [r for r in metrics(out) if "health/length_corr" in r]
    assert steps[-1]["step"] < 6 and steps[-1]["health/length_corr"] > 0.5
    assert max(r["health/degenerate_paid"] for r in steps if r.get("health/degenerate_paid") is not None) >= 0.25
    assert (out / f"checkpoint-{steps[-1]['step']}").is_dir() and not (out / "final").exists()


@pytest.mark.slow
def test_a_reward_weighted_a_tenth_that_decides_the_ordering_is_named(data_file, tmp_path, cache_dir):
    from grpo_core.plugins import registered

    out = tmp_path / "out"
    with registered(Rewards()):
        code, output = invoke(*tiny_run(data_file, out, "--reward", "always-one=1", "--reward", "length=0.1",
                                        "--max-steps", "4", "--set", "max_completion_length=16"))
    assert code == 0, output
    assert "warning: reward 'length' decides 100% of the ordering" in output
    assert [r["health/dominance/length"] for r in metrics(out) if "health/dominance/length" in r][:3] == [1.0] * 3


@pytest.mark.slow
def test_the_default_runs_first_steps_raise_no_health_warning(tmp_path, cache_dir):
    out = tmp_path / "demo"
    code, output = invoke("--output-dir", out, "--max-steps", "5", "--compare", "0", "--probe", "20",
                          "--probe-every", "5", "--stop-on", "any")
    assert code == 0, output
    assert "warning:" not in output
    steps = [r for r in metrics(out) if "health/flat_groups" in r]
    assert len(steps) == 5 and "health/probe/math" in steps[-1]
    assert all(r["health/degenerate_paid"] in (0.0, None) for r in steps)


def test_the_reward_plot_draws_each_health_signal_on_its_own_labelled_scale():
    """A share (0 to 1), a correlation (-1 to 1) and the probe's mean reward each get a panel that says its scale."""
    from grpo_core.rundir.outputs import reward_figure

    plain = [{"step": s, "reward": 0.5, "rewards/math/mean": 0.5} for s in (1, 2, 3)]
    assert len(reward_figure(plain, ["math"]).axes) == 1
    watched = [{**r, "health/flat_groups": 0.5, "health/degenerate_paid": 0.0, "health/length_corr": -0.3}
               for r in plain]
    watched[1]["health/probe/math"] = 0.4
    rewards, shares, correlation, probe = reward_figure(watched, ["math"]).axes
    assert [line.get_label() for line in shares.get_lines()] == ["groups that teach nothing",
                                                                   "paid completions that look degenerate"]
    assert shares.get_ylabel() == "share (0 to 1)" and shares.get_ylim() == (-0.05, 1.05)
    assert [line.get_label() for line in correlation.get_lines()] == ["correlation of length with advantage"]
    assert correlation.get_ylabel() == "correlation (-1 to 1)" and correlation.get_ylim() == (-1.05, 1.05)
    assert [line.get_label() for line in probe.get_lines()] == ["held-out probe: math"]
    assert probe.get_ylabel() == "mean reward"
    assert all(panel.get_title() for panel in (shares, correlation, probe))
    assert probe.get_xlabel() == "step" and not rewards.get_xlabel()
    only_length = [{**r, "health/length_corr": 0.2} for r in plain]
    assert [a.get_ylabel() for a in reward_figure(only_length, ["math"]).axes] == ["mean reward",
                                                                                    "correlation (-1 to 1)"]


# --- a resumed run goes on from the checkpoint's signals ----------------------------------------


def padding_steps(n):
    texts = ["x" * k for k in (5, 10, 20, 40)]
    return [[batch([[len(t) / 40] for t in texts], [1.0], texts)] for _ in range(n)]


def test_a_checkpoint_keeps_the_signals_so_a_resumed_run_goes_on_from_them():
    said = []
    health, alarms = Health(["pad"], [1.0], 4), Alarms(said.append, stop_on=["length"])
    callback = HealthCallback(health, alarms)
    state = SimpleNamespace(is_world_process_zero=True, global_step=3, stateful_callbacks=None)
    callback.on_train_begin(None, state, None)  # a fresh run: nothing to restore
    for step, batches in enumerate(padding_steps(3), start=1):
        for b in batches:
            health.observe(b)
        for key, message in health.log({"reward": 0.5, "reward_std": 0.3}, step):
            alarms.fire(key, message)
    assert alarms.warned == {"length"} and alarms.stopped_by == "length" and len(said) == 1
    # transformers saves state() into trainer_state.json's stateful_callbacks and reads it back on --resume
    saved = json.loads(json.dumps({"HealthCallback": callback.state()}))

    resumed_said = []
    resumed = HealthCallback(Health(["pad"], [1.0], 4), Alarms(resumed_said.append, stop_on=["length"]))
    resumed.on_train_begin(None, SimpleNamespace(is_world_process_zero=True, global_step=3,
                                                 stateful_callbacks=saved), None)
    assert resumed.health.flat_history == health.flat_history and resumed.health.reward_history == [0.5] * 3
    [[b]] = padding_steps(1)
    resumed.health.observe(b)
    logs = {"reward": 0.5, "reward_std": 0.3}
    fired = resumed.health.log(logs, 4)
    assert logs["health/flat_groups_trend"] == 0.0  # fitted over 4 logged steps, 3 of them before the resume
    for key, message in fired:
        resumed.alarms.fire(key, message)
    assert resumed_said == [] and resumed.alarms.stopped_by is None  # said once in the run, and resumed past


def test_a_resumed_run_with_a_probe_keeps_its_first_probe_as_the_starting_point():
    probe = SimpleNamespace(every=5, scores=lambda: {"pad": 0.9})
    health = Health(["pad"], [1.0], 4)
    health.probe({}, 0, {"pad": 0.2})
    saved = {"HealthCallback": {"args": {}, "attributes": {"health": health.state(), "warned": []}}}
    resumed = HealthCallback(Health(["pad"], [1.0], 4), Alarms(lambda message: None), probe)
    resumed.on_train_begin(None, SimpleNamespace(is_world_process_zero=True, global_step=10,
                                                 stateful_callbacks=json.loads(json.dumps(saved))), None)
    assert resumed.health.probes == [(0, {"pad": 0.2}, 0)]  # not probed again at the resumed step


def flat_run(data_file, out, reward: str, steps: int, *extra):
    """A tiny run paid by one of ``Rewards``' rewards that pays every completion alike, a step logged each step."""
    from grpo_core.plugins import registered

    with registered(Rewards()):
        return invoke(*tiny_run(data_file, out, "--reward", reward, "--max-steps", str(steps), "--set",
                                "max_completion_length=8", "--set", "logging_steps=1", *extra))


@pytest.mark.slow
def test_a_run_with_nothing_to_learn_from_says_what_it_saw_and_stops_with_a_checkpoint(data_file, tmp_path, cache_dir):
    """Every completion of every group pays the same (nothing): after 3 logged steps the run says so in plain words,
    suggests a group size that is not its own, saves and stops (exit 3); --stop-on none keeps it going."""
    out = tmp_path / "out"
    code, output = flat_run(data_file, out, "pays-nothing", 6, "--stop-on", "reward-std")
    assert code == 3, output
    assert "every completion of every group has scored the same for 3 logged steps" in output
    assert "GRPO learns only from differences within a group" in output
    assert "--set num_generations=8" in output and "num_generations=4" not in output  # the run's own group is 4
    assert "by --stop-on reward-std" in output
    steps = [r["step"] for r in metrics(out) if "step" in r]
    assert max(steps) == 3 and (out / "checkpoint-3").is_dir() and not (out / "final").exists()
    assert "the top of every reward" not in output
    kept = tmp_path / "kept"
    code, output = flat_run(data_file, kept, "pays-nothing", 4, "--stop-on", "none")
    assert code == 0 and "every completion of every group has scored the same" in output, output
    assert (kept / "final").is_dir()


@pytest.mark.slow
def test_a_run_whose_every_completion_earns_the_top_ends_as_a_finished_run(data_file, tmp_path, cache_dir):
    """Every completion of every group earns the top of its reward: not a run with nothing to learn from but one
    that has learnt all it is paid for. Under --stop-on reward-std it ends after 3 logged steps as a finished run
    (exit 0, the final model, not the reward-std warning); without the stop it says so once and trains every step."""
    out = tmp_path / "out"
    code, output = flat_run(data_file, out, "always-one", 6, "--stop-on", "reward-std")
    assert code == 0, output
    assert ("every completion of every group has earned the top of every reward for 3 logged steps (always-one 1)"
            in output)
    assert "Training ends at step 3 of 6 as a finished run" in output
    assert "GRPO learns only from differences" not in output and "num_generations" not in output, output
    assert "by --stop-on" not in output and "final model saved" in output
    assert max(r["step"] for r in metrics(out) if "step" in r) == 3 and (out / "final").is_dir()
    kept = tmp_path / "kept"
    code, output = flat_run(data_file, kept, "always-one", 4)
    assert code == 0 and "Training goes on to step 4; --stop-on reward-std would end it here" in output, output
    assert max(r["step"] for r in metrics(kept) if "step" in r) == 4


def test_at_the_top_of_some_rewards_only_is_still_nothing_to_learn():
    """The top is every reward's: a run paid the top by one reward and nothing by the other has no signal, as has a
    run paid by a reward with no declared top (its saturation cannot be told)."""
    from grpo_core.training.alarms import MonitorCallback

    args = SimpleNamespace(learning_rate=1e-5, max_completion_length=48, num_generations=8, temperature=1.0)
    for tops, means, saturated in (({"math": 1.0, "calculator": 1.0}, {"math": 1.0, "calculator": 1.0}, True),
                                   ({"math": 1.0, "calculator": 1.0}, {"math": 1.0, "calculator": 0.0}, False),
                                   ({"math": 1.0, "mine": None}, {"math": 1.0, "mine": 5.0}, False),
                                   ({"math": 0.1}, {"math": float(__import__("numpy").float32(0.1))}, True)):
        said = []
        monitor = MonitorCallback(warn=said.append, tops=tops)
        for step in (1, 2, 3):
            logs = {"reward": sum(means.values()), "reward_std": 0.0,
                    **{f"rewards/{name}/mean": mean for name, mean in means.items()}}
            monitor.on_log(args, SimpleNamespace(is_world_process_zero=True, global_step=step, max_steps=10), None,
                           logs=logs)
        (message,) = said
        assert ("earned the top of every reward" in message) is saturated, (tops, means, message)
        assert ("GRPO learns only from differences" in message) is not saturated


def test_the_message_for_no_learning_signal_never_proposes_the_settings_in_use():
    from grpo_core.training.callbacks import MonitorCallback

    for group, temperature in ((4, 1.0), (8, 1.2), (16, 0.7)):
        said = []
        monitor = MonitorCallback(warn=said.append)
        args = SimpleNamespace(learning_rate=1e-5, max_completion_length=48, num_generations=group,
                               temperature=temperature)
        for step in (1, 2, 3):
            logs = {"reward": 0.0, "reward_std": 0.0, "tools/add/calls": 8.0, "tools/add/seconds": 0.1}
            monitor.on_log(args, SimpleNamespace(is_world_process_zero=True, global_step=step), None, logs=logs)
        (message,) = said
        assert f"num_generations={2 * group}" in message and f"num_generations={group})" not in message
        assert f"temperature={temperature:g})" not in message
        assert "Tool calls in those steps: add 24" in message
