"""The gains of a showcase run over seeds, from what `bench_default_run.py` printed: a table, and a plot.

    python benchmarks/seed_gains.py [--plot docs/images/seed_gains.png] [--each] [FILE ...]

Each FILE (default: every `benchmarks/seeds/*.txt`) is one sweep as measured: its first line is the command, after
`$ `, and the rest is what that command printed, unedited. Per sweep it prints the seeds, the held-out gain (lowest,
mean, highest), how many seeds gained less than the target (+0.15) and the longest wall time; `--plot` draws each
seed's gain, one row per sweep, with the target as a line. `--each` prints every seed's row instead: held-out math
before -> after, the gain, every other held-out figure the run printed (with an environment: its own reward and the
share of episodes that called a tool), and the wall time.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_default_run import TARGET_GAIN  # noqa: E402

FIVE_MINUTES = 300
# One seed's row as bench_default_run.py prints it: seed, before -> after (n), gain, train first -> last fifth, wall,
# load, then an exit status when the run failed.
ROW = re.compile(r"^\s*(?P<seed>\d+)\s+(?P<before>[-\d.]+) -> (?P<after>[-\d.]+) \(n=(?P<n>\w+)\)\s+"
                 r"(?P<gain>[-+\d.]+)\s+\S+ -> \S+\s+(?P<wall>\d+)\s+(?P<load>[\d.]+)(?P<rest>.*)$")
# Under a seed's row, each other held-out figure of that run: "      held-out tool use 1.000 -> 1.000".
OTHER = re.compile(r"^\s+held-out (?P<name>.+?) (?P<before>[-\d.]+) -> (?P<after>[-\d.]+)$")


class SweepError(ValueError):
    """A sweep file that is not what bench_default_run.py printed."""


def read_sweep(path: Path) -> dict:
    """The sweep in ``path``: its label (the file's name), command and per-seed rows."""
    lines = path.read_text().splitlines()
    if not lines or not lines[0].startswith("$ "):
        raise SweepError(f"{path}: the first line must be the command that measured it, after '$ '")
    rows = []
    for line in lines[1:]:
        match = ROW.match(line)
        other = OTHER.match(line) if match is None and rows else None
        if other is not None:
            rows[-1]["others"][other["name"]] = f"{other['before']} -> {other['after']}"
        if match is None:
            continue
        gain = None if match["gain"] == "-" else float(match["gain"])  # "-": the run failed before its comparison
        rows.append({"seed": int(match["seed"]), "gain": gain, "wall": int(match["wall"]), "n": match["n"],
                     "math": f"{match['before']} -> {match['after']}", "others": {}})
    if not rows:
        raise SweepError(f"{path}: no seed's row in it (is it what bench_default_run.py printed?)")
    return {"label": path.stem, "command": lines[0][2:], "rows": rows}


def summary(sweep: dict) -> str:
    gains = [r["gain"] for r in sweep["rows"] if r["gain"] is not None]
    seeds = ",".join(str(r["seed"]) for r in sweep["rows"])
    under = sum(1 for r in sweep["rows"] if r["gain"] is None or r["gain"] < TARGET_GAIN)
    over = sum(1 for r in sweep["rows"] if r["wall"] > FIVE_MINUTES)
    low, mean, high = (f"{min(gains):+.3f}", f"{sum(gains) / len(gains):+.3f}", f"{max(gains):+.3f}") if gains \
        else ("-", "-", "-")
    count = f"{under} of {len(sweep['rows'])}"
    return (f"{sweep['label']:<24}{seeds:<22}{low:>8}{mean:>8}{high:>8}{count:>10}"
            f"{max(r['wall'] for r in sweep['rows']):>8}{over:>12}")


def each(sweep: dict) -> list[str]:
    """Every seed's row of ``sweep``: held-out math, gain, the run's other held-out figures, wall time."""
    names = list(dict.fromkeys(name for row in sweep["rows"] for name in row["others"]))
    ns = sorted({row["n"] for row in sweep["rows"]})
    lines = [f"{sweep['label']}: held-out, greedy, on {' or '.join(ns)} test-split questions",
             f"{'seed':>4}  {'math':<16}{'gain':>7}" + "".join(f"  {name:<16}" for name in names) + f"{'wall s':>8}"]
    for row in sweep["rows"]:
        gain = "-" if row["gain"] is None else f"{row['gain']:+.3f}"
        lines.append(f"{row['seed']:>4}  {row['math']:<16}{gain:>7}"
                     + "".join(f"  {row['others'].get(name, '-'):<16}" for name in names) + f"{row['wall']:>8}")
    return lines


def plot(sweeps: list[dict], path: Path) -> None:
    from grpo_core.rundir.outputs import new_figure, save_figure

    figure = new_figure(figsize=(7, 1.2 + 0.6 * len(sweeps)))
    axis = figure.subplots()
    for index, sweep in enumerate(reversed(sweeps)):
        gains = [r["gain"] for r in sweep["rows"] if r["gain"] is not None]
        colors = ["tab:red" if g < TARGET_GAIN else "tab:blue" for g in gains]
        heights = [index + 0.15 * gains[:i].count(g) for i, g in enumerate(gains)]  # equal gains stacked, not hidden
        axis.scatter(gains, heights, c=colors, alpha=0.7, s=40, zorder=3)
    axis.axvline(TARGET_GAIN, color="grey", linestyle="--", label=f"target +{TARGET_GAIN}")
    axis.set_yticks(range(len(sweeps)), [s["label"] for s in reversed(sweeps)])
    axis.set_ylim(-0.6, len(sweeps) - 0.4)
    axis.set_xlabel("held-out math gain after training, one dot per seed")
    axis.legend(loc="lower right", fontsize="small")
    axis.grid(axis="x", alpha=0.3)
    figure.tight_layout()
    save_figure(figure, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="sweeps (default: benchmarks/seeds/*.txt)")
    parser.add_argument("--plot", type=Path, help="draw each seed's gain into this PNG")
    parser.add_argument("--each", action="store_true", help="every seed's row, with the run's other held-out figures")
    args = parser.parse_args(argv)
    files = args.files or sorted((HERE / "seeds").glob("*.txt"), key=lambda path: path.stem)
    if not files:
        print("no sweep to read: give FILEs, or put what bench_default_run.py printed in benchmarks/seeds/",
              file=sys.stderr)
        return 2
    try:
        sweeps = [read_sweep(path) for path in files]
    except (OSError, SweepError) as error:
        print(error, file=sys.stderr)
        return 2
    if args.each:
        print("\n\n".join("\n".join(each(sweep)) for sweep in sweeps))
        return 0
    print(f"held-out math gain over seeds (target: at least +{TARGET_GAIN} on every seed, within five minutes)")
    print(f"{'sweep':<24}{'seeds':<22}{'lowest':>8}{'mean':>8}{'highest':>8}{'under':>10}{'wall s':>8}{'over 5 min':>12}")
    for sweep in sweeps:
        print(summary(sweep))
    if args.plot:
        plot(sweeps, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
