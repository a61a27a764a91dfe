"""The time of a training step with an environment's tools against the same step without them, and what the same tools
cost when they are an OpenEnv server's, reached over the wire on loopback.

    python benchmarks/bench_env_step.py [--model smollm2-135m] [--steps 6] [--repeat 2] [--quick] [--wire]
    python benchmarks/bench_env_step.py --episodes-only [--episodes 200] [--episode-repeat 3]

The default is the training comparison. Both runs are grpo-run on examples/data/products.jsonl with the math reward,
the same model, seed, group size and completion budget; the second adds --env
examples/environments/calculator.py:Calculator. From each run's metrics.jsonl (the first step left out: it warms up)
it prints the mean step time (the best of --repeat runs of each, taken in turns, so that a busy machine slows both
alike), the tokens TRL counts per step (prompts and completions: the tool template's system text describing the tools
lengthens every prompt), the mean completion length, how often the model called a tool, and the seconds spent inside
the tools. The difference that is not the tools' own time is the longer prompts and the extra generation turns after
each tool result.

--wire adds a third run, in the same turns: the same Calculator class served by ``grpo-run serve --env
examples/environments/calculator.py:Calculator`` on 127.0.0.1 and trained with ``--env http://127.0.0.1:PORT``, so the
table gains an "over the wire" column and the wire's overhead per step (and per tool call) beside the in-process
tools' step. Each episode of that run opens a WebSocket session (reset) and closes it (get_reward); each tool call is
one OpenEnv step. The served tools' descriptions are rebuilt by the client, so its prompts differ from the in-process
run's a little (the tokens line shows it).

--episodes-only runs no training and loads no model (seconds): the installed ``calculator`` environment
(plugins/grpo-env-calculator) in-process against the same environment served by ``grpo-run serve --env calculator``,
on the same --episodes ``products`` rows (train split, seed 0, 3x2 digits). Each episode is reset(**row), the gold
episode's calls (multiply the operands), one wrong call (add them) and get_reward(). It prints the milliseconds per
episode, per part and per tool call on both paths (the best of --episode-repeat passes over all episodes, the paths
taken in turns) and their difference, and checks that both paths give every episode the same reward and every call
the same answer: it exits 1 when one differs.

The server this starts is stopped (terminated, and killed if it is still up 10 s later) however the benchmark ends.
"""

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENT = ROOT / "examples" / "environments" / "calculator.py"
DATA = ROOT / "examples" / "data" / "products.jsonl"
GRPO_RUN = str(Path(sys.executable).with_name("grpo-run"))
SERVER_START_S = 120.0  # openenv's import (gradio) alone takes seconds; more on a busy machine
WRONG_CALL = "add"  # a call a right episode does not need: the operands' sum is not the answer


@contextlib.contextmanager
def served(environment: str):
    """``grpo-run serve --env ENVIRONMENT`` on a free loopback port, up (its /health answers 200) for the ``with``
    block: the block gets its URL, and the server is stopped when the block ends, however it ends."""
    from grpo_core.testing import free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen([GRPO_RUN, "serve", "--env", environment, "--port", str(port),
                                   "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        try:
            started = time.perf_counter()
            while not _healthy(url):
                if server.poll() is not None or time.perf_counter() - started > SERVER_START_S:
                    log.seek(0)
                    state = f"exited with {server.returncode}" if server.poll() is not None else \
                        f"no answer from {url}/health in {SERVER_START_S:g} s"
                    sys.exit(f"grpo-run serve --env {environment}: {state}\n{log.read()[-3000:]}")
                time.sleep(0.25)
            print(f"(server for {environment} up at {url} in {time.perf_counter() - started:.1f} s)", file=sys.stderr)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


# --- the training comparison -------------------------------------------------------------------------------------

def run(model: str, steps: int, out: Path, env: str | None) -> tuple[float, list[dict]]:
    """One grpo-run training run, with ``--env env`` when it is given; its wall time and its per-step metrics."""
    args = [GRPO_RUN, "--reward", "math", "--dataset", "local", "--dataset-arg", f"path={DATA}", "--model", model,
            "--profile", "cpu", "--output-dir", str(out), "--max-steps", str(steps), "--no-preflight",
            "--set", "num_generations=4", "--set", "per_device_train_batch_size=4",
            "--set", "max_completion_length=48", "--set", "logging_steps=1", "--set", "save_strategy=no",
            "--set", "seed=0"]
    if env is not None:
        args += ["--env", env]
    started = time.perf_counter()
    result = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"grpo-run failed ({'--env ' + env if env else 'without tools'}):\n{result.stderr[-3000:]}")
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return wall, [r for r in records if "step" in r and "step_time" in r]


def tokens_per_step(records: list[dict]) -> float:
    """TRL's num_tokens counts every prompt and completion token since the start: per step, on average."""
    last = records[-1]
    return float(last.get("num_tokens", 0)) / max(1, int(last["step"]))


def mean(records: list[dict], key: str) -> float:
    values = [float(r[key]) for r in records if isinstance(r.get(key), (int, float))]
    return statistics.fmean(values) if values else 0.0


def tool_totals(records: list[dict]) -> tuple[float, float]:
    """The seconds spent in tools per step, and the tool calls per step (every tool's, averaged over the steps)."""
    keys = {k for r in records for k in r if k.startswith("tools/") and k.count("/") == 2}
    seconds = sum((mean(records, k) for k in keys if k.endswith("/seconds")), 0.0)
    calls = sum((mean(records, k) for k in keys if k.endswith("/calls")), 0.0)
    return seconds, calls


def training(options) -> None:
    model, steps, repeat = ("tiny-random", 2, 1) if options.quick else (options.model, options.steps, options.repeat)
    local = f"{ENVIRONMENT}:Calculator"
    kinds = ["plain", "tools"] + (["wire"] if options.wire else [])
    best: dict[str, tuple[float, float, list[dict]]] = {}
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        envs = {"plain": None, "tools": local, "wire": stack.enter_context(served(local)) if options.wire else None}
        for attempt in range(max(1, repeat)):
            for kind in kinds:
                wall, records = run(model, steps, Path(folder) / f"{kind}-{attempt}", envs[kind])
                step = mean(records[1:] or records, "step_time")  # the first step warms up
                if kind not in best or step < best[kind][0]:
                    best[kind] = (step, wall, records)
    step_of = {kind: best[kind][0] for kind in kinds}
    every = {kind: best[kind][2] for kind in kinds}
    counted = {kind: every[kind][1:] or every[kind] for kind in kinds}  # steps 2.. (the first warms up)
    tools = {kind: tool_totals(counted[kind]) for kind in kinds}
    columns = {"plain": "without tools", "tools": "with calculator", "wire": "over the wire"}

    def row(label: str, values: dict, form: str, note: str = "") -> None:
        cells = "".join(f"{format(values[k], form) if isinstance(values.get(k), float) else values.get(k, '-'):>17}"
                        for k in kinds)
        print(f"{label:28}{cells}{'   ' + note if note else ''}")

    print(f"{model}, {steps} steps of 4 completions, 48 completion tokens, steps 2-{steps} averaged, best of {repeat}")
    print(f"{'':28}" + "".join(f"{columns[k]:>17}" for k in kinds))
    row("step time (s)", step_of, ".2f", f"ratio {step_of['tools'] / step_of['plain']:.2f}"
        + (f", wire/in-process {step_of['wire'] / step_of['tools']:.2f}" if options.wire else ""))
    row("tokens per step (TRL)", {k: tokens_per_step(every[k]) for k in kinds}, ".0f", "(prompts and completions)")
    row("completion length (tokens)", {k: mean(counted[k], "completions/mean_length") for k in kinds}, ".1f")
    row("tool calls per completion", {k: mean(counted[k], "tools/call_frequency") for k in kinds if k != "plain"},
        ".2f")
    row("tool calls per step", {k: tools[k][1] for k in kinds if k != "plain"}, ".1f")
    row("seconds in tools per step", {k: tools[k][0] for k in kinds if k != "plain"}, ".4f",
        f"({100 * tools['tools'][0] / step_of['tools'] if step_of['tools'] else 0:.1f}% of the in-process step)")
    rest = step_of["tools"] - step_of["plain"] - tools["tools"][0]
    print(f"{'rest of the difference (s)':28}{'':17}{rest:17.2f}   longer prompts (the tools' description) and "
          "extra generation turns")
    if options.wire:
        overhead = step_of["wire"] - step_of["tools"]
        print(f"{'wire overhead per step (s)':28}{'':34}{overhead:17.2f}   over the in-process tools' step "
              f"({100 * overhead / step_of['tools'] if step_of['tools'] else 0:+.1f}%): 4 sessions opened and "
              "closed per step, and each call a round trip")
        (local_s, local_calls), (wire_s, wire_calls) = tools["tools"], tools["wire"]
        if local_calls and wire_calls:
            per_call = 1000 * (wire_s / wire_calls - local_s / local_calls)
            print(f"{'wire overhead per call (ms)':28}{'':34}{per_call:17.2f}"
                  "   (time inside a tool call, over the wire minus in-process)")
        else:
            print(f"{'wire overhead per call (ms)':28}{'':34}{'-':>17}   (no tool calls in one of the runs: "
                  "only the sessions' cost is in the step)")
    print("whole process: " + ", ".join(f"{best[k][1]:.1f} s {columns[k]}" for k in kinds))


# --- the episode micro-benchmark ---------------------------------------------------------------------------------

PARTS = ("reset", "calls", "get_reward")


def play(environment, rows: list[dict], episodes: list[list[tuple[str, dict]]]) -> tuple[dict, list, list]:
    """Every episode once on ``environment``: the seconds spent in each part (summed over the episodes), each
    episode's reward and each call's answer."""
    spent = dict.fromkeys(PARTS, 0.0)
    rewards, answers = [], []
    clock = time.perf_counter
    for row, calls in zip(rows, episodes):
        instance = environment.make()
        started = clock()
        instance.reset(**row)
        reset_done = clock()
        said = [getattr(instance, tool)(**arguments) for tool, arguments in calls]
        calls_done = clock()
        reward = instance.get_reward()
        ended = clock()
        spent["reset"] += reset_done - started
        spent["calls"] += calls_done - reset_done
        spent["get_reward"] += ended - calls_done
        rewards.append(reward)
        answers.append(said)
    return spent, rewards, answers


def episode_benchmark(options) -> int:
    from grpo_core.plugins.loading import load_environments
    from grpo_env_calculator import gold_episode
    from grpo_env_calculator.dataset import rows as product_rows

    rows = product_rows("train", size=options.episodes, seed=0, digits="3x2")
    episodes = [(gold := gold_episode(row)) + [(WRONG_CALL, dict(gold[0][1]))] for row in rows]
    calls = sum(len(e) for e in episodes)
    [local] = load_environments(["calculator"])
    with served("calculator") as url:
        [wire] = load_environments([url])
        paths = {"in-process": local, "over the wire": wire}
        warm = min(5, len(rows))
        for environment in paths.values():  # the first episodes pay for imports, the first connection
            play(environment, rows[:warm], episodes[:warm])
        best: dict[str, dict] = {}
        results: dict[str, list] = {name: [] for name in paths}
        for _ in range(max(1, options.episode_repeat)):
            for name, environment in paths.items():
                spent, rewards, answers = play(environment, rows, episodes)
                results[name].append((rewards, answers))
                if name not in best or sum(spent.values()) < sum(best[name].values()):
                    best[name] = spent
    n = len(rows)
    local_ms = {part: 1000 * s / n for part, s in best["in-process"].items()}
    wire_ms = {part: 1000 * s / n for part, s in best["over the wire"].items()}
    tools = " + ".join(tool for tool, _ in episodes[0])
    print(f"calculator, {n} episodes on products rows (train, seed 0, 3x2): reset, {tools} ({calls / n:g} tool calls), "
          f"get_reward; best of {options.episode_repeat} passes, in turns")
    print(f"{'milliseconds':28}{'in-process':>14}{'over the wire':>16}{'difference':>14}")

    def line(label: str, a: float, b: float, note: str = "") -> None:
        print(f"{label:28}{a:14.4f}{b:16.4f}{b - a:14.4f}{'   ' + note if note else ''}")

    line("per episode", sum(local_ms.values()), sum(wire_ms.values()))
    line("  reset", local_ms["reset"], wire_ms["reset"], "(the wire: opens a WebSocket session)")
    line("  tool calls", local_ms["calls"], wire_ms["calls"])
    line("  get_reward", local_ms["get_reward"], wire_ms["get_reward"], "(the wire: closes the session)")
    per_call = (n / calls) * local_ms["calls"], (n / calls) * wire_ms["calls"]
    line("per tool call", *per_call, "(the wire: one OpenEnv step, a round trip)")
    session = (wire_ms["reset"] + wire_ms["get_reward"]) - (local_ms["reset"] + local_ms["get_reward"])
    print(f"wire overhead: {per_call[1] - per_call[0]:.3f} ms per tool call, "
          f"{sum(wire_ms.values()) - sum(local_ms.values()):.3f} ms per episode "
          f"({session:.3f} ms of it the session's open and close)")
    failures = 0
    reference_rewards, reference_answers = results["in-process"][0]
    for name, passes in results.items():
        for index, (rewards, answers) in enumerate(passes):
            for what, given, reference in (("reward", rewards, reference_rewards),
                                           ("answers", answers, reference_answers)):
                for episode, (got, want) in enumerate(zip(given, reference)):
                    if got != want:
                        failures += 1
                        if failures <= 5:
                            print(f"MISMATCH {name}, pass {index + 1}, episode {episode}: {what} {got!r}, "
                                  f"in-process {want!r}")
    paid = sum(1 for r in reference_rewards if r == 1.0)
    if failures:
        print(f"rewards or answers differ: {failures} mismatches")
        return 1
    print(f"rewards and answers: the same on both paths for all {n} episodes in every pass "
          f"({paid} of {n} paid 1.0)")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, taken in turns; the best counts")
    parser.add_argument("--quick", action="store_true", help="the tiny test model, 2 steps, one run of each")
    parser.add_argument("--wire", action="store_true",
                        help="a third run: the same Calculator served by grpo-run serve, trained over the wire")
    parser.add_argument("--episodes-only", action="store_true",
                        help="no training: the calculator's episodes in-process against over the wire (seconds)")
    parser.add_argument("--episodes", type=int, default=200, help="episodes of --episodes-only")
    parser.add_argument("--episode-repeat", type=int, default=3,
                        help="passes of --episodes-only over all episodes, the paths in turns; the best counts")
    options = parser.parse_args()
    if options.episodes_only:
        sys.exit(episode_benchmark(options))
    training(options)


if __name__ == "__main__":
    main()
