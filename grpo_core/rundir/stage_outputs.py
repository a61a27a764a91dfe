"""A staged run's own outputs: one ``metrics.jsonl`` over all stages (global step, ``stage`` field) and one
reward plot with the stage boundaries marked, made from the stages' folders."""

from __future__ import annotations

import json
from pathlib import Path

from grpo_core.errors import UsageError
from grpo_core.rundir import outputs
from grpo_core.rundir.folder import write_atomic
from grpo_core.rundir.names import METRICS_FILE, PLOT_FILE, STATE_FILE


def read_state(root: Path) -> dict:
    """Stage name -> {"steps": N} for the stages that finished in ``root``."""
    path = Path(root) / STATE_FILE
    try:
        state = json.loads(path.read_text()) if path.is_file() else {}
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"'{path}' is damaged (not JSON); restore it, or start over with --overwrite") from None
    return state.get("finished", {}) if isinstance(state, dict) else {}


def write_state(root: Path, finished: dict) -> None:
    write_atomic(Path(root) / STATE_FILE, json.dumps({"finished": finished}, indent=2) + "\n")


def stage_records(root: Path, stages) -> tuple[list[dict], list[tuple[int, str]]]:
    """Every stage's metrics in order, with ``step`` counted over the whole run, ``stage`` and ``stage_step``;
    and where each stage starts (its first global step minus one, its name)."""
    finished = read_state(root)
    records, starts, offset = [], [], 0
    for stage in stages:
        logged = outputs.read_metrics(Path(root) / stage.name / METRICS_FILE)
        if logged:
            starts.append((offset, stage.name))
            records += [_global(r, offset, stage.name) for r in logged]
        last = max((r["step"] for r in logged if "step" in r), default=0)
        offset += finished.get(stage.name, {}).get("steps", last)
    return records, starts


def _global(record: dict, offset: int, stage: str) -> dict:
    """A stage's metrics row with its step (or a session summary's ``after_step``) counted over the whole run."""
    key = "step" if "step" in record else "after_step"
    if key not in record:
        return {**record, "stage": stage}
    return {**record, key: offset + record[key], "stage": stage, f"stage_{key}": record[key]}


def merge_stage_metrics(root: Path, stages) -> Path | None:
    """Rewrite ``root/metrics.jsonl`` from the stages' folders and draw ``root/reward_curve.png``; the plot's path."""
    records, starts = stage_records(root, stages)
    text = "".join(json.dumps(record, default=float) + "\n" for record in records)
    write_atomic(Path(root) / METRICS_FILE, text)
    names = list(dict.fromkeys(r.__name__ for s in stages if s.run is not None for r in s.run.rewards))
    return plot_stages(records, names, starts, Path(root) / PLOT_FILE)


def plot_stages(records: list[dict], names: list[str], starts: list[tuple[int, str]], path: Path) -> Path | None:
    """The rewards of the whole run, each stage's trend averaged within the stage, a dotted line where each stage
    starts, and (right axis, dotted) the weights that changed."""
    return outputs.save_figure(stage_figure(records, names, starts), path)


def stage_figure(records: list[dict], names: list[str], starts: list[tuple[int, str]]):
    steps = [r for r in records if "reward" in r]
    if not steps:
        return None
    import matplotlib
    from matplotlib.ticker import MaxNLocator

    figure = outputs.new_figure(figsize=(8, 4.5), dpi=100)
    axis = figure.subplots()
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    series = [(name, f"rewards/{name}/mean", colors[i % len(colors)], "-") for i, name in enumerate(names)]
    series.append(("total (weighted)", "reward", "black", "--"))
    weighted = [name for name in names if any(r.get(f"weights/{name}") is not None for r in steps)]
    right = axis.twinx() if weighted else None
    for _, stage in starts:
        part = [r for r in steps if r.get("stage") == stage]
        x = [r["step"] for r in part]
        window = outputs._window(len(part))
        for label, key, color, style in series:
            values = [r.get(key) if r.get(key) is not None else float("nan") for r in part]
            if all(v != v for v in values):
                continue  # the reward is not in this stage
            axis.plot(x, values, color=color, alpha=0.3, linewidth=1, marker=".", linestyle=style)
            axis.plot(x, outputs.smooth(values, window), color=color, linewidth=2.2, linestyle=style, label=label)
        for name in weighted if right is not None else ():
            color = colors[names.index(name) % len(colors)]
            values = [r.get(f"weights/{name}") if r.get(f"weights/{name}") is not None else float("nan") for r in part]
            right.plot(x, values, color=color, linestyle=":", linewidth=1.5, label=f"weight of {name}")
    first = min(r["step"] for r in steps)
    for offset, stage in starts:
        if offset:
            axis.axvline(offset + 0.5, color="grey", linestyle=":", linewidth=1.5)
        axis.annotate(f"stage {stage}", xy=(max(offset + 0.5, first), 1.0), xycoords=("data", "axes fraction"),
                      xytext=(4, -14), textcoords="offset points", fontsize=9, color="dimgrey")
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_xlabel("step (over all stages)")
    axis.set_ylabel("mean reward")
    axis.set_title("Rewards by stage (faint: each step; bold: moving average within the stage)")
    axis.grid(alpha=0.3)
    handles, labels = axis.get_legend_handles_labels()
    if right is not None:
        right.set_ylabel("weight (dotted)")
        more = right.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    unique = dict(zip(labels, handles))
    axis.legend(unique.values(), unique.keys(), fontsize=8, loc="best")
    figure.tight_layout()
    return figure
