"""The callbacks a run adds to TRL's trainer, and the order they must run in: progress, warnings, metrics.jsonl,
completions.jsonl, Ctrl-C and the model card."""

from __future__ import annotations

import json
import math
import signal
import sys
import time
from pathlib import Path

from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState

from grpo_core.rundir.folder import write_atomic
from grpo_core.rundir.names import COMPLETIONS_FILE, FINAL_DIR, METRICS_FILE, MODEL_CARD
from grpo_core.training import progress
from grpo_core.training.alarms import Alarms, MonitorCallback, StopCallback, stopped_by  # noqa: F401 (their home)
from grpo_core.training.trl_contract import last_batch, name_base_model, save_checkpoint, stored_attributes


def run_callbacks(trainer, output_dir: Path, max_steps: int, warn, loggers=(), progress: bool = False,
                  alarms: Alarms | None = None, tops: dict | None = None) -> list:
    """grpo-core's callbacks for ``trainer``, in the order they must be added (the trainer calls them in order).

    ``on_log`` hands every callback the same ``logs`` dict, so a callback that adds to the logs must come before
    :class:`MetricsCallback`, which writes them to metrics.jsonl: first ``loggers`` (a dataset's own callbacks,
    such as a curriculum's level, then the reward weights' schedule, ``weights/<reward>``), then
    :class:`MonitorCallback` (``unscored_steps``), then MetricsCallback, then :class:`StopCallback`, which stops the
    run once the step's metrics are written when a warning of ``alarms`` named by --stop-on fired. The rest add
    nothing to the logs. ``tops``: each reward's upper bound, for MonitorCallback.
    """
    every = max(1, (max_steps if max_steps > 0 else 100) // 10)
    alarms = alarms or Alarms(warn)
    return [
        *loggers,
        MonitorCallback(alarms=alarms, tops=tops),
        MetricsCallback(Path(output_dir) / METRICS_FILE),
        StopCallback(alarms),
        CompletionsCallback(trainer, Path(output_dir) / COMPLETIONS_FILE, every),
        InterruptCallback(),
        *([ProgressCallback()] if progress else []),
    ]


def _json_safe(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def is_session_summary(logs: dict) -> bool:
    """True for the trainer's end-of-training log (train_runtime, train_loss, ...), which is no training step."""
    return "train_loss" in logs and "total_flos" in logs  # a step logs "loss"; only the summary has these


class MetricsCallback(TrainerCallback):
    """Append every log (step, rewards, KL, error counts) to ``metrics.jsonl`` on the main process; the summary
    logged as a session ends is marked ``"summary": true`` with ``after_step``, so a resumed run repeats no step."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        summary = is_session_summary(logs)
        where = {"summary": True, "after_step": state.global_step} if summary else {"step": state.global_step}
        record = {**where, **{k: _json_safe(v) for k, v in logs.items()}}
        with self.path.open("a") as handle:
            handle.write(json.dumps(record, default=float) + "\n")


class CompletionsCallback(TrainerCallback):
    """Every ``every`` steps, append the last batch's prompts, completions and per-reward scores."""

    def __init__(self, trainer, path: Path, every: int, limit: int = 8) -> None:
        self.trainer = trainer
        self.path = Path(path)
        self.every = max(1, every)
        self.limit = limit

    def on_step_end(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        if state.global_step % self.every and state.global_step != state.max_steps:
            return
        batch = last_batch(self.trainer)
        if batch is None:
            return
        prompts, completions, rewards = batch
        with self.path.open("a") as handle:
            for i in range(min(self.limit, len(completions))):
                record = {
                    "step": state.global_step,
                    "prompt": prompts[i],
                    "completion": completions[i],
                    "rewards": {name: _json_safe(values[i]) for name, values in rewards.items() if i < len(values)},
                }
                handle.write(json.dumps(record, default=str) + "\n")


class HealthCallback(TrainerCallback, ExportableState):
    """Adds the reward-health signals (grpo_core.training.health) to each log and fires their warnings; with a
    probe, scores the policy on held-out prompts before training and every ``probe.every`` steps. Each checkpoint
    keeps the signals' histories and the warnings given, so a resumed run goes on from them: its trends and the
    probe's starting point are the run's, and a warning given before is not given again (nor stops the run)."""

    def __init__(self, health, alarms: Alarms, probe=None) -> None:
        self.health = health
        self.alarms = alarms
        self.probe = probe  # scores(step) -> {reward: mean}, and .every
        self.pending: dict | None = None

    def state(self) -> dict:
        return {"args": {}, "attributes": {"health": self.health.state(), "warned": sorted(self.alarms.warned)}}

    def on_train_begin(self, args, state, control, **kwargs):
        stored = stored_attributes(state, type(self).__name__)
        if stored:  # resuming
            self.health.restore(stored.get("health", {}))
            self.alarms.warned |= set(stored.get("warned", []))
        if self.probe is not None and state.is_world_process_zero and not self.health.probes:
            self.health.probe({}, state.global_step, self.probe.scores())  # the starting point

    def on_step_end(self, args, state, control, **kwargs):
        if self.probe is not None and state.is_world_process_zero and state.global_step % self.probe.every == 0:
            self.pending = self.probe.scores()

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs or "reward" not in logs:
            return
        fired = self.health.log(logs, state.global_step)
        if self.pending is not None:
            fired += self.health.probe(logs, state.global_step, self.pending)
            self.pending = None
        for key, message in fired:
            self.alarms.fire(key, message)


class ProgressCallback(TrainerCallback):
    """Where training is: on a terminal a one-line progress bar (step, reward, reward_std, KL and time left); elsewhere
    (a pipe, a CI log, a notebook) a plain line per logged step with the time since training started and the time
    left. Both say how long training took at its end."""

    def __init__(self, terminal: bool | None = None, out=None) -> None:
        self.terminal = progress.is_terminal() if terminal is None else terminal
        self.out = out
        self.progress = None
        self.started = None

    def _say(self, line: str) -> None:
        print(line, file=self.out or sys.stdout, flush=True)

    def on_train_begin(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        self.started, self.first_step = time.monotonic(), state.global_step
        if not self.terminal:
            self._say(f"training: {state.max_steps - state.global_step} steps, to step {state.max_steps}")
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("step"), MofNCompleteColumn(), BarColumn(), TextColumn("{task.fields[stats]}"),
            TextColumn("left"), TimeRemainingColumn(), transient=False,
        )
        self.progress.start()
        self.task = self.progress.add_task("train", total=state.max_steps, completed=state.global_step, stats="")

    def on_step_end(self, args, state, control, **kwargs):
        if self.progress is not None:
            self.progress.update(self.task, completed=state.global_step)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.started is None or not logs or "reward" not in logs:
            return
        if self.progress is not None:
            self.progress.update(self.task, stats=progress.stats(logs))
        elif not self.terminal:
            elapsed = time.monotonic() - self.started
            self._say(progress.step_line(state.global_step, state.max_steps, logs, elapsed,
                                         state.global_step - self.first_step))

    def on_train_end(self, args, state, control, **kwargs):
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
        if self.started is not None:
            steps = state.global_step - self.first_step
            self._say(f"trained {steps} step{'s' if steps != 1 else ''} in "
                      f"{progress.duration(time.monotonic() - self.started)}")
            self.started = None


class InterruptCallback(TrainerCallback):
    """The first Ctrl-C saves a checkpoint at the end of the current step and stops cleanly."""

    def __init__(self) -> None:
        self.interrupted = False
        self._previous = None

    def on_train_begin(self, args, state, control, **kwargs):
        try:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        except ValueError:  # not the main thread: leave Ctrl-C alone
            self._previous = None

    def _handle(self, signum, frame):
        if self.interrupted:  # a second Ctrl-C stops at once
            raise KeyboardInterrupt
        self.interrupted = True
        print("\nstopping after this step and saving a checkpoint (Ctrl-C again to stop at once)", file=sys.stderr)

    def on_step_end(self, args, state, control, **kwargs):
        if self.interrupted:
            control.should_save = True
            control.should_training_stop = True

    def on_train_end(self, args, state, control, **kwargs):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def interrupted(trainer) -> bool:
    """True when Ctrl-C stopped ``trainer``'s run (after saving a checkpoint)."""
    return any(isinstance(c, InterruptCallback) and c.interrupted for c in trainer.callback_handler.callbacks)


def save_after_failure(trainer, output_dir: Path, resume: str) -> str:
    """After a reward stopped the run mid-step, save the steps finished so far as a checkpoint (what a Ctrl-C
    saves); the sentence that says what was saved. The weights are those of the last finished step: a step's
    optimizer update comes after its scoring."""
    step = trainer.state.global_step
    target = output_dir / f"checkpoint-{step}"
    if step == 0:
        return ("no step had finished, so there is no checkpoint; the same command, once fixed, starts again in this "
                "folder")
    if target.is_dir():
        return f"the checkpoint of step {step} is in {target}. {resume}"
    if trainer.args.world_size > 1:  # saving gathers from every process, and the others are not all here
        return (f"no checkpoint was saved ({trainer.args.world_size} processes; steps since the last save_steps "
                f"checkpoint are lost)")
    save_checkpoint(trainer)
    trainer.callback_handler.on_save(trainer.args, trainer.state, trainer.control)  # what the training loop calls next
    return f"checkpoint of step {step} saved in {target}. {resume}"


class ModelCardCallback(TrainerCallback):
    """TRL writes its model card into the output folder with each checkpoint and names a base model loaded from a
    local folder ``None``: after each save, the card names the model the run used (``named``) and its quick start
    loads the run's final folder."""

    def __init__(self, named: str) -> None:
        self.named = named

    def on_save(self, args, state, control, **kwargs):
        card = Path(args.output_dir) / MODEL_CARD
        if state.is_world_process_zero and card.is_file():
            write_atomic(card, name_base_model(card.read_text(), self.named, str(Path(args.output_dir) / FINAL_DIR)))


class ToolStatsCallback(TrainerCallback):
    """Adds each tool's calls, seconds and timeouts since the last logged step to the logs (``tools/<tool>/*``)."""

    def __init__(self, stats) -> None:
        self.stats = stats

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is not None and "reward" in logs:
            logs.update(self.stats.take())
