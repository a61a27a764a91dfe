"""Start-up time of `grpo-run --help`, `grpo-run plugins` and `grpo-run rewards` against `trl --help`, and the time
a typo takes to its one-line error, measured in the same run.

    python benchmarks/bench_startup.py [--repeat 9] [--terminal]

The listings and the anchor (`trl --help`) run interleaved: each round runs every command once, in an order that
turns from round to round, so load from other processes falls on all of them alike. Each command's ratio is the
median over rounds of its time divided by the anchor's time in the same round, for wall time and for CPU time
(user + system of the process, to the microsecond: less sensitive to other load on the machine). Output is
captured, as when piped, so the listings print plain tables; with --terminal every command (the anchor too) writes
to a pseudo-terminal, as at a user's prompt, so the listings print their header bold. Sources are measured
compiled, as after an install: the first round of each command runs without PYTHONDONTWRITEBYTECODE, so Python
writes its bytecode caches, and is not counted. The load average is printed before and after.
Targets: listings at most 1.0 x the anchor; each typo's error within 0.5 s.
"""

import argparse
import os
import pty
import statistics
import subprocess
import tempfile
import time

from bench_default_run import console_script  # one copy for the benchmarks that run grpo-run

LISTINGS = (["--help"], ["plugins"], ["rewards"])
# Each a mistake a user makes, reported in one line with exit status 2.
TYPOS = (
    ("reward", ["--reward", "mth"]),
    ("dataset", ["--reward", "math", "--dataset", "arithmetc"]),
    ("model", ["--reward", "math", "--dataset", "arithmetic", "--model", "smollm2-13m"]),
    ("--reward-arg", ["--reward", "math", "--reward-arg", "math.extrct=answer-tag", "--dataset", "arithmetic"]),
    ("--set key", ["--set", "learning_rat=1e-5"]),
    ("--set value", ["--set", "max_steps=-5"]),
)
TYPO_LIMIT_S = 0.5
# Compiled sources, as after an install; offline, as every listing is.
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "HF_HUB_OFFLINE": "1"}


def children_cpu() -> float:
    """CPU seconds (user + system) of the ended child processes: to the microsecond from getrusage where there is
    one, else os.times, which counts in clock ticks (10 ms, about 5 % of one listing)."""
    try:
        import resource
    except ImportError:
        times = os.times()
        return times.children_user + times.children_system
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def once(command: list[str], status: int = 0, terminal: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``command``, which must exit with ``status``; its output captured, or read
    from a pseudo-terminal with ``terminal``."""
    before, start = children_cpu(), time.perf_counter()
    if terminal:
        returncode, stderr = at_terminal(command)
    else:
        done = subprocess.run(command, capture_output=True, text=True, env=ENV)
        returncode, stderr = done.returncode, done.stderr
    wall, after = time.perf_counter() - start, children_cpu()
    if returncode != status:
        raise SystemExit(f"{' '.join(command)} exited {returncode}, not {status}: {stderr[-500:]}")
    return wall, after - before


def at_terminal(command: list[str]) -> tuple[int, str]:
    """Run ``command`` with its standard output a pseudo-terminal 120 columns wide, read to its end."""
    main, side = pty.openpty()
    env = {**ENV, "TERM": os.environ.get("TERM", "xterm-256color"), "COLUMNS": "120"}
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe no one reads until the end, which could fill
        try:
            process = subprocess.Popen(command, stdout=side, stderr=errors, stdin=subprocess.DEVNULL, env=env)
            os.close(side)
            while True:
                try:
                    if not os.read(main, 65536):
                        break
                except OSError:  # the terminal closed as the command ended
                    break
            status = process.wait()
        finally:
            os.close(main)
        errors.seek(0)
        return status, errors.read().decode()


def interleaved(commands: dict[str, list[str]], repeat: int,
                terminal: bool = False) -> dict[str, list[tuple[float, float]]]:
    """``repeat`` rounds of every command once, the order turned by one each round, after one uncounted round
    (bytecode written, file cache warm, grpo-core's cache of GRPOConfig's fields filled)."""
    names = list(commands)
    for name in names:
        once(commands[name], terminal=terminal)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for round_ in range(repeat):
        turn = round_ % len(names)
        for name in names[turn:] + names[:turn]:
            times[name].append(once(commands[name], terminal=terminal))
    return times


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="one round of each command: checks the benchmark runs")
    parser.add_argument("--terminal", action="store_true", help="every command writes to a pseudo-terminal")
    options = parser.parse_args()
    repeat = 1 if options.quick else options.repeat
    grpo_run, trl = console_script("grpo-run"), console_script("trl")
    where = "to a pseudo-terminal" if options.terminal else "captured"
    print(f"load average before: {load()} ({os.cpu_count()} cores); {repeat} interleaved rounds, output {where}")
    anchor = "trl --help (anchor)"
    commands = {anchor: [trl, "--help"], **{"grpo-run " + " ".join(args): [grpo_run, *args] for args in LISTINGS}}
    times = interleaved(commands, repeat, options.terminal)
    print(f"{'command':<28}{'median s':>10}{'cpu s':>8}{'ratio':>8}{'cpu ratio':>11}")
    for name, runs in times.items():
        ratio = statistics.median(w / a for (w, _), (a, _) in zip(runs, times[anchor]))
        cpu_ratio = statistics.median(c / max(a, 1e-9) for (_, c), (_, a) in zip(runs, times[anchor]))
        print(f"{name:<28}{statistics.median(w for w, _ in runs):>10.3f}{statistics.median(c for _, c in runs):>8.3f}"
              f"{ratio:>8.2f}{cpu_ratio:>11.2f}")
    print(f"\n{'typo (exit 2)':<28}{'median s':>10}{'cpu s':>8}  within {TYPO_LIMIT_S} s")
    for label, args in TYPOS:
        once([grpo_run, *args], status=2)
        runs = [once([grpo_run, *args], status=2) for _ in range(repeat)]
        seconds, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        print(f"{label:<28}{seconds:>10.3f}{cpu:>8.3f}  {'yes' if seconds <= TYPO_LIMIT_S else 'NO'}")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
