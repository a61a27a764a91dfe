"""benchmarks/seed_gains.py reads back what bench_default_run.py prints, and says so when a file is not that."""

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bench_default_run  # noqa: E402
import seed_gains  # noqa: E402


def row(seed, before, after, wall, rc=0):
    return {"seed": seed, "rc": rc, "before": before, "after": after, "n": 200, "tools": (None, None), "first": 0.25,
            "last": 0.5, "wall": wall, "load": 1.0, "control": []}


def sweep_file(tmp_path, rows, name="default-cpu"):
    path = tmp_path / f"{name}.txt"
    lines = ["$ python benchmarks/bench_default_run.py --seeds 0,1,2 --jobs 1 -- --profile cpu",
             bench_default_run.HEADER, *(bench_default_run.format_row(r, "runs/bench") for r in rows),
             "held-out gain +0.100 to +0.250 over 3 seeds (target at least +0.15 on every seed: NOT met); wall ..."]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_gains_bench_default_run_printed_are_read_back(tmp_path, capsys):
    rows = [row(0, 0.475, 0.725, 281.4), row(1, 0.475, 0.575, 302.0), row(2, 0.475, 0.675, 279.0)]
    path = sweep_file(tmp_path, rows)
    sweep = seed_gains.read_sweep(path)
    assert sweep["command"].startswith("python benchmarks/bench_default_run.py --seeds 0,1,2")
    assert [(r["seed"], r["gain"], r["wall"]) for r in sweep["rows"]] == [(0, 0.25, 281), (1, 0.1, 302),
                                                                          (2, 0.2, 279)]
    png = tmp_path / "gains.png"
    assert seed_gains.main([str(path), "--plot", str(png)]) == 0
    line = capsys.readouterr().out.splitlines()[-1].split()
    assert line == ["default-cpu", "0,1,2", "+0.100", "+0.183", "+0.250", "1", "of", "3", "302", "1"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_failed_seed_counts_as_under_the_target(tmp_path, capsys):
    path = sweep_file(tmp_path, [row(0, 0.475, 0.725, 280), row(1, None, None, 12, rc=2)])
    assert seed_gains.main([str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split()[2:8] == ["+0.250", "+0.250", "+0.250", "1", "of", "2"]


@pytest.mark.parametrize("text, expected", [
    ("seed  held-out ...\n", "the first line must be the command that measured it"),
    ("$ python benchmarks/bench_default_run.py\nnothing measured\n", "no seed's row in it"),
])
def test_a_file_that_is_not_a_sweep_is_one_line_and_exit_2(tmp_path, capsys, text, expected):
    path = tmp_path / "sweep.txt"
    path.write_text(text)
    assert seed_gains.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert expected in err and str(path) in err and len(err.strip().splitlines()) == 1


def test_every_committed_sweep_reads():
    sweeps = [seed_gains.read_sweep(path) for path in sorted((BENCHMARKS / "seeds").rglob("*.txt"))]
    assert sweeps, "benchmarks/seeds/ holds the sweeps the README's plot and tables are drawn from"
    for sweep in sweeps:
        assert sweep["command"].startswith("python benchmarks/bench_default_run.py"), sweep["label"]
        assert ",".join(str(r["seed"]) for r in sweep["rows"]) in sweep["command"], sweep["label"]
    assert max(len(sweep["rows"]) for sweep in sweeps) >= 10, "a claim rests on ten seeds"


def test_a_tool_run_s_held_out_columns_are_read_with_the_environment_s_own():
    printed = "\n".join([
        "held-out comparison, greedy, on 64 distinct test-split questions, none of them in the training rows:",
        "model                                         math    calculator      tool-use",
        "smollm2-135m (before)                        0.000         0.000         1.000",
        "/tmp/calc-sweep/seed3/final (after)           1.000         0.953         1.000",
        "change                                      +1.000        +0.953        +0.000",
    ])
    assert bench_default_run.held_out_columns(printed) == ["math", "calculator", "tool-use"]
    assert bench_default_run.held_out(printed, "calculator") == (0.0, 0.953, 64)
    assert bench_default_run.held_out(printed, "tool-use") == (1.0, 1.0, 64)
    assert bench_default_run.held_out_columns("no comparison here") == []


def test_each_seed_s_row_carries_the_run_s_other_held_out_figures(tmp_path, capsys):
    """`--each` is the per-seed table the README shows for the calculator run: its right-tool share beside math."""
    path = tmp_path / "calculator-cpu-bf16.txt"
    path.write_text("\n".join([
        "$ python benchmarks/bench_default_run.py --seeds 0,1 --jobs 1 -- --config examples/configs/calculator.yaml",
        bench_default_run.HEADER,
        bench_default_run.format_row({**row(0, 0.0, 0.984, 677.2), "n": 64}, "runs/bench"),
        "      held-out tool use 1.000 -> 1.000",
        "      held-out calculator 0.000 -> 0.984",
        bench_default_run.format_row({**row(1, 0.0, 0.0, 155.0, rc=3), "n": 64}, "runs/bench"),
        "      held-out calculator 0.000 -> 0.000",
    ]) + "\n")
    assert seed_gains.main(["--each", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "calculator-cpu-bf16: held-out, greedy, on 64 test-split questions"
    assert lines[1].split() == ["seed", "math", "gain", "tool", "use", "calculator", "wall", "s"]
    assert lines[2].split() == ["0", "0.000", "->", "0.984", "+0.984", "1.000", "->", "1.000", "0.000", "->", "0.984",
                                "677"]
    assert lines[3].split() == ["1", "0.000", "->", "0.000", "+0.000", "-", "0.000", "->", "0.000", "155"]
