"""What a run shows and writes besides checkpoints: progress, warnings, metrics, completions, plot, summary."""

from __future__ import annotations

import json
import math
import signal
import sys
from pathlib import Path

from transformers import TrainerCallback

METRICS_FILE = "metrics.jsonl"
COMPLETIONS_FILE = "completions.jsonl"
PLOT_FILE = "reward_curve.png"


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


def record_step(record: dict) -> int:
    """The step a metrics row was logged at: its ``step``, or a session summary's ``after_step``."""
    return record.get("step", record.get("after_step", 0))


def truncate_metrics(path: Path, step: int) -> None:
    """On resume, drop records logged after the checkpoint, so each step appears once."""
    path = Path(path)
    if not path.exists():
        return
    from grpo_core.rundir.folder import write_atomic

    kept = [line for line in path.read_text().splitlines() if line.strip() and record_step(json.loads(line)) <= step]
    write_atomic(path, "".join(line + "\n" for line in kept))


def read_metrics(path: Path) -> list[dict]:
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


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
        logs = getattr(self.trainer, "_logs", None)  # TRL keeps the last generation batch here
        if not logs or not logs.get("completion"):
            return
        prompts, completions = list(logs["prompt"]), list(logs["completion"])
        rewards = {name: list(values) for name, values in logs["rewards"].items()}
        with self.path.open("a") as handle:
            for i in range(min(self.limit, len(completions))):
                record = {
                    "step": state.global_step,
                    "prompt": prompts[i],
                    "completion": completions[i],
                    "rewards": {name: _json_safe(values[i]) for name, values in rewards.items() if i < len(values)},
                }
                handle.write(json.dumps(record, default=str) + "\n")


class MonitorCallback(TrainerCallback):
    """Plain-word warnings, with the fix, when a run stops learning or goes wrong."""

    def __init__(self, warn, patience: int = 3, kl_limit: float = 10.0, clipped_limit: float = 0.5) -> None:
        self.warn = warn
        self.patience = patience
        self.kl_limit = kl_limit
        self.clipped_limit = clipped_limit
        self.flat = self.clipped = self.unscored = 0
        self.warned: set[str] = set()

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs or "reward_std" not in logs:
            return
        means = [value for key, value in logs.items() if key.startswith("rewards/") and key.endswith("/mean")]
        if means and all(not isinstance(v, (int, float)) or not math.isfinite(v) for v in means):
            self.unscored += 1
            self._once(
                "unscored",
                f"no completion of step {state.global_step} could be scored: every reward returned None (for example "
                "a dataset whose gold answers are empty or unreadable), so the rewards taught nothing that step. "
                "Training goes on; such steps are counted in metrics.jsonl as unscored_steps. Check the dataset "
                "with `grpo-run check` and the answer column.",
            )
        logs["unscored_steps"] = self.unscored  # read by MetricsCallback, which runs after this one
        self.flat = self.flat + 1 if logs.get("reward_std", 1.0) == 0.0 else 0
        clipped = logs.get("completions/clipped_ratio", 0.0)
        self.clipped = self.clipped + 1 if clipped > self.clipped_limit else 0
        if self.flat >= self.patience:
            self._once(
                "flat",
                f"reward_std has been 0 for {self.flat} steps: every completion in a group scores the same, so "
                "there is no learning signal. Use a larger group (--set num_generations=8), add a reward that gives "
                "partial credit, or check the reward's direction with `grpo-run check`.",
            )
        kl = logs.get("kl")
        if kl is not None and math.isfinite(kl) and kl > self.kl_limit:
            self._once(
                "kl",
                f"KL to the reference model is {kl:.3g} at step {state.global_step} and exploding: lower the "
                f"learning rate (now {args.learning_rate:g}; try --set learning_rate={args.learning_rate / 4:g}).",
            )
        if self.clipped >= self.patience:
            self._once(
                "clipped",
                f"{clipped:.0%} of completions hit max_completion_length ({args.max_completion_length} tokens) for "
                f"{self.clipped} steps: they are cut before their answer. Raise it (--set max_completion_length="
                f"{2 * args.max_completion_length}) or reward shorter answers.",
            )

    def _once(self, key: str, message: str) -> None:
        if key not in self.warned:
            self.warned.add(key)
            self.warn(message)


class ProgressCallback(TrainerCallback):
    """A one-line progress bar: step, reward, reward_std, KL and time left."""

    def __init__(self) -> None:
        self.progress = None

    def on_train_begin(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
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
        if self.progress is None or not logs or "reward" not in logs:
            return
        stats = f"reward {_number(logs['reward'], '.3f')}  std {_number(logs.get('reward_std'), '.3f')}"
        if "kl" in logs:
            stats += f"  kl {_number(logs['kl'], '.3g')}"
        self.progress.update(self.task, stats=stats)

    def on_train_end(self, args, state, control, **kwargs):
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


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


def _number(value, spec: str) -> str:
    """A logged value for the progress bar: a step where nothing was scored logs None or NaN."""
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    return format(value, spec)


def smooth(values: list[float | None], window: int) -> list[float]:
    """Centred moving average over up to ``window`` steps, skipping missing values (nan where none)."""
    half = max(0, window // 2)
    out = []
    for i in range(len(values)):
        near = [v for v in values[max(0, i - half):i + half + 1] if v is not None and math.isfinite(v)]
        out.append(sum(near) / len(near) if near else float("nan"))
    return out


def _window(count: int) -> int:
    return max(3, count // 6) | 1  # odd, about a sixth of the run: wide enough to average out a step's few prompts


def plot_rewards(records: list[dict], reward_names: list[str], path: Path) -> Path | None:
    """``reward_curve.png``: each reward's per-step mean (faint) and smoothed trend, and the weighted total."""
    return save_figure(reward_figure(records, reward_names), path)


def save_figure(figure, path: Path) -> Path | None:
    """Write a matplotlib figure whole (to a temporary name, then renamed) and close it; None for no figure."""
    if figure is None:
        return None
    import matplotlib.pyplot as plt

    partial = Path(path).with_name(f".{Path(path).name}.tmp.png")
    figure.savefig(partial)
    plt.close(figure)
    partial.replace(path)
    return Path(path)


def reward_figure(records: list[dict], reward_names: list[str]):
    """The figure ``plot_rewards`` saves (None when no step was logged)."""
    steps = [r for r in records if "reward" in r]
    if not steps:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, axis = plt.subplots(figsize=(8, 4.5), dpi=100)
    x = [r["step"] for r in steps]
    window = _window(len(steps))
    series = [(name, f"rewards/{name}/mean", {}) for name in reward_names]
    if len(reward_names) > 1:  # with one reward the total is that reward again, drawn on top of it
        series.append(("total (weighted)", "reward", {"color": "black", "linestyle": "--"}))
    for label, key, style in series:
        values = [r.get(key) if r.get(key) is not None else float("nan") for r in steps]
        (raw,) = axis.plot(x, values, alpha=0.3, linewidth=1, marker=".", **style)
        axis.plot(x, smooth(values, window), color=raw.get_color(), linewidth=2.2,
                  linestyle=style.get("linestyle", "-"), label=f"{label} ({window}-step average)")
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_xlabel("step")
    axis.set_ylabel("mean reward")
    axis.set_title("Rewards during training (faint: each step; bold: moving average)")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    return figure


def summarize(records: list[dict], reward_names: list[str], fraction: float = 0.2,
              bounds: dict | None = None) -> list[dict]:
    """Per reward (and the total): the least-squares trend over all logged steps, and the first/last ``fraction``.

    The trend's start and end use every step, so a few noisy steps at either end cannot flip it;
    ``error`` is one standard error of its change, to say whether the change is more than noise.
    ``bounds`` (label -> (low, high), see :func:`reward_bounds`) keeps the trend's ends inside what the
    reward can score: a line fitted to a reward that saturates passes its bound, and is shown at it
    (``clipped``).
    """
    steps = [r for r in records if "reward" in r]
    if not steps:
        return []
    size = max(1, round(len(steps) * fraction))
    first, last = steps[:size], steps[-size:]
    rows = []
    for label, key in [*((name, f"rewards/{name}/mean") for name in reward_names), ("total", "reward")]:
        start, end, error = _trend(steps, key)
        low, high = (bounds or {}).get(label, (-math.inf, math.inf))
        clipped = [v is not None and not low <= v <= high for v in (start, end)]
        start, end = (None if v is None else min(max(v, low), high) for v in (start, end))
        rows.append({"reward": label, "first": _mean(first, key), "last": _mean(last, key), "steps": size,
                     "logged": len(steps), "trend_start": start, "trend_end": end, "trend_error": error,
                     "clipped": clipped, "bounds": (low, high)})
    return rows


def reward_bounds(rewards, schedules=None) -> dict[str, tuple[float, float]]:
    """Each reward's declared bounds, and the weighted total's while the weights stay fixed (no schedule).

    TRL sums the weighted rewards a completion has, skipping one that gave None, so the total lies
    between the weighted sums of each low (or 0) and each high (or 0).
    """
    bounds = {r.__name__: tuple(float(b) for b in r.spec.bounds) for r in rewards if hasattr(r, "spec")}
    if not schedules and bounds and len(bounds) == len(rewards):
        def part(weight, bound):
            return weight * bound if weight else 0.0  # a reward weighted 0 adds nothing, even an unbounded one

        bounds["total"] = (sum(part(r.weight, min(bounds[r.__name__][0], 0.0)) for r in rewards),
                           sum(part(r.weight, max(bounds[r.__name__][1], 0.0)) for r in rewards))
    return bounds


def run_summary(records: list[dict], rewards, schedules=None) -> str:
    """The end-of-run summary of a run's rewards, its trends kept inside each reward's bounds."""
    names = [r.__name__ for r in rewards]
    return format_summary(summarize(records, names, bounds=reward_bounds(rewards, schedules)))


def _mean(records: list[dict], key: str) -> float | None:
    values = [r[key] for r in records if r.get(key) is not None]
    return sum(values) / len(values) if values else None


def _trend(records: list[dict], key: str) -> tuple[float | None, float | None, float | None]:
    """The fitted line's value at the first and last step, and the standard error of their difference."""
    points = [(r["step"], r[key]) for r in records if r.get(key) is not None and math.isfinite(r[key])]
    if len(points) < 2:
        return (points[0][1], points[0][1], None) if points else (None, None, None)
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx == 0:
        return mean_y, mean_y, None
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    lo, hi = points[0][0], points[-1][0]
    start, end = mean_y + slope * (lo - mean_x), mean_y + slope * (hi - mean_x)
    if n < 3:
        return start, end, None
    residual = sum((y - (mean_y + slope * (x - mean_x))) ** 2 for x, y in points) / (n - 2)
    return start, end, math.sqrt(residual / sxx) * (hi - lo)


def format_summary(rows: list[dict]) -> str:
    if not rows:
        return "no training steps were logged"
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    lines = [f"training rewards, trend fitted over all {rows[0]['logged']} logged steps "
             f"(each step scores only a few prompts, so single steps are noisy):",
             f"{'reward':<16}{'trend start':>12}{'trend end':>12}{'change':>10}{'+/- 1 s.e.':>12}"]
    notes = []
    for row in rows:
        start, end, error = row["trend_start"], row["trend_end"], row["trend_error"]
        change = "" if start is None or end is None else f"{end - start:+.3f}"
        marks = ["*" if clipped else "" for clipped in row.get("clipped", (False, False))]
        lines.append(f"{row['reward']:<16}{fmt(start) + marks[0]:>12}{fmt(end) + marks[1]:>12}{change:>10}"
                     f"{'' if error is None else fmt(error):>12}")
        if any(marks):
            notes.append(f"{row['reward']} [{row['bounds'][0]:g}, {row['bounds'][1]:g}]")
    if notes:
        lines.append(f"* the fitted line passes the reward's bounds there ({'; '.join(notes)}): shown at the bound")
    return "\n".join(lines)

