"""What a run's metrics say: metrics.jsonl read back (and cut at a checkpoint), the reward plot and the summary.

The callbacks that write them during training are in :mod:`grpo_core.training.callbacks`."""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

from grpo_core.rundir.folder import write_atomic


def record_step(record: dict) -> int:
    """The step a metrics row was logged at: its ``step``, or a session summary's ``after_step``."""
    return record.get("step", record.get("after_step", 0))


def truncate_metrics(path: Path, step: int) -> None:
    """On resume, drop records logged after the checkpoint, so each step appears once."""
    path = Path(path)
    if not path.exists():
        return
    kept = [line for line in path.read_text().splitlines() if line.strip() and record_step(json.loads(line)) <= step]
    write_atomic(path, "".join(line + "\n" for line in kept))


def read_metrics(path: Path) -> list[dict]:
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


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
    partial = Path(path).with_name(f".{Path(path).name}.tmp.png")
    figure.savefig(partial)
    if "matplotlib.pyplot" in sys.modules:  # a figure a caller made with pyplot: let pyplot forget it
        sys.modules["matplotlib.pyplot"].close(figure)
    partial.replace(path)
    return Path(path)


def new_figure(figsize=(8, 4.5), dpi=100):
    """A matplotlib figure drawn by Agg, made without pyplot.

    pyplot is left out on purpose: importing it adds about 30 ms to the end of every run (measured after
    training, with torch loaded), and it would switch the process's backend and keep each figure until closed.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(figure)
    return figure


def reward_figure(records: list[dict], reward_names: list[str]):
    """The figure ``plot_rewards`` saves (None when no step was logged)."""
    steps = [r for r in records if "reward" in r]
    if not steps:
        return None
    from matplotlib.ticker import MaxNLocator

    health = [(label, key, scale) for label, key, scale in health_series(reward_names)
              if any(r.get(key) is not None for r in steps)]
    scales = list(dict.fromkeys(scale for _, _, scale in health))  # one panel per scale drawn, in HEALTH_SCALES' order
    figure = new_figure(figsize=(8, 4.5 + 2 * len(scales)), dpi=100)
    axis, *panels = figure.subplots(1 + len(scales), 1, sharex=True, height_ratios=(2.2, *[1] * len(scales)),
                                    squeeze=False)[:, 0]
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
    (panels[-1] if panels else axis).set_xlabel("step")
    axis.set_ylabel("mean reward")
    axis.set_title("Rewards during training (faint: each step; bold: moving average)")
    axis.grid(alpha=0.3)
    axis.legend()
    for panel, scale in zip(panels, scales):  # the reward-health signals (grpo_core.training.health), by scale
        for label, key, _ in (signal for signal in health if signal[2] == scale):
            points = [(r["step"], r[key]) for r in steps if r.get(key) is not None]
            panel.plot([p[0] for p in points], [p[1] for p in points], marker=".", linewidth=1.2, label=label)
        title, ylabel, limits = HEALTH_SCALES[scale]
        if limits:
            panel.set_ylim(*limits)
        panel.set_title(title, fontsize="medium")
        panel.set_ylabel(ylabel)
        panel.grid(alpha=0.3)
        panel.legend(fontsize="small", ncol=2)
    figure.tight_layout()
    return figure


# Each scale the health signals are read on: its panel's title, its axis label, and its limits (None: the data's).
HEALTH_SCALES = {
    "share": ("Shares of each step (0: none, 1: all)", "share (0 to 1)", (-0.05, 1.05)),
    "correlation": ("Length against advantage within groups (warned from 0.5)", "correlation (-1 to 1)",
                    (-1.05, 1.05)),
    "probe": ("Held-out probe: the policy's greedy mean reward", "mean reward", None),
}


def health_series(reward_names: list[str]) -> list[tuple[str, str, str]]:
    """The health signals drawn under the rewards: label, metrics key and scale (a key of ``HEALTH_SCALES``)."""
    return [("groups that teach nothing", "health/flat_groups", "share"),
            ("paid completions that look degenerate", "health/degenerate_paid", "share"),
            ("correlation of length with advantage", "health/length_corr", "correlation"),
            *[(f"held-out probe: {name}", f"health/probe/{name}", "probe") for name in reward_names[:1]]]


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
    xs, ys = zip(*points)
    mean_x = statistics.fmean(xs)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    if sxx == 0:
        mean_y = statistics.fmean(ys)
        return mean_y, mean_y, None
    slope, intercept = statistics.linear_regression(xs, ys)
    lo, hi = xs[0], xs[-1]
    start, end = intercept + slope * lo, intercept + slope * hi
    if len(points) < 3:
        return start, end, None
    residual = sum((y - (intercept + slope * x)) ** 2 for x, y in points) / (len(points) - 2)
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

