"""Three reward checkers side by side on a corpus of buggy and sound reward functions (benchmarks/reward_bugs/).

    .venv/bin/python benchmarks/bench_reward_bugs.py [--quick] [--jobs N] [--json PATH] [--only NAME ...]

For each reward of the corpus (a top-level function with TRL's signature; its META entry says its category, the
planted bug or None for a sound one, where the pattern comes from, and the grpo-run check property that should
catch it), on the rows of the dataset META names:

1. ``grpo-run check --reward FILE:FUNC --dataset ... --json --seed 0``: the properties that failed;
2. rewardprobe 0.1.0's quick check (``Probe().test_fn(fn, rows)``, what ``rewardprobe test FILE::FUNC --dataset
   rows.jsonl`` runs): its critical and warning findings (info ones are not shown by its report either);
3. rewardlint 0.1.0's audit (``rewardlint.audit(fn)``, what ``rewardlint audit FILE:FUNC`` runs) on its own fixed
   corpus of math cases, for the rewards that check an answer against a gold one (META ``verifier``); it takes no
   rows of ours. As its report tells a user to: a reward with partial credit is audited again with the threshold
   at mid-bounds, and a "format-strict" one (it refuses most right answers, here because its corpus has no
   <answer> tags) again on the exploit cases alone. A reward whose gold arrives through **kwargs gets the one-line
   wrapper a user writes, fn(prompts=..., completions=..., answer=...), as TRL calls it.

The peers are installed from the package index into their own venv, benchmarks/.peers-venv, made on first use
(nothing is added to grpo-core's dependencies). They run under that venv's Python; the reward's own imports
(numpy, torch, sympy, math_verify) come from this Python's site-packages, appended after the peers' own.

Printed per category and overall, for each tool: buggy rewards whose planted bug it caught (grpo-run: a failed
property equal to the expected one or one of META's ``also``; peers: a finding that names that kind of bug, by the
mapping RP_KINDS / RL_KINDS below), buggy rewards with any failure at all, sound rewards it flagged (false
alarms), and the median seconds per reward. ``--quick`` runs three rewards (a buggy one with a gold answer, a
buggy one without, a sound one) with fewer examples, to see that it runs; ``--json PATH`` writes every per-reward
result.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "reward_bugs")
DATA = os.path.join(CORPUS, "data")
PEERS_VENV = os.path.join(HERE, ".peers-venv")
PEERS = ("rewardprobe==0.1.0", "rewardlint==0.1.0")
TOOLS = ("grpo-run", "rewardprobe", "rewardlint")

# name -> (grpo-run check flags, (registered dataset, its arguments) for the peers' rows)
DATASETS = {
    "arithmetic": (["--dataset", "arithmetic"], ("arithmetic", {})),
    **{name: (["--dataset", "local", "--dataset-arg", f"path={os.path.join(DATA, file)}"],
              ("local", {"path": os.path.join(DATA, file)}))
       for name, file in (("signed", "signed.jsonl"), ("compare", "compare.jsonl"), ("capitals", "capitals.jsonl"),
                          ("json", "json_people.jsonl"))},
}

# rewardprobe finding (its attack name) -> the kinds of bug it names, in grpo-run check's property names. A finding
# that reports a crash (its error is set) names a crash: output / hostile, whatever the attack, except
# missing_column and wrong_argument, whose point is the crash (a row without the reward's column: the TypeError of
# any reward that takes the gold as a parameter, so it names no bug of ours but the 'columns' kind).
RP_KINDS = {
    "empty": {"degenerate", "empty-tags"},  # the empty completion scored high
    "whitespace": {"degenerate", "empty-tags"},
    "random_tokens": {"degenerate"},
    "reward_range": {"bounds", "gold-bounds"},  # a score outside [0, 1]
    "determinism": {"deterministic", "state"},
    "ground_truth": {"pays-gold"},  # the right answer in no common format scores over 0.5
    "signal_variance": {"pays-gold", "degenerate"},  # empty, random and right all score the same
    "echo_prompt": {"degenerate"},
    "constant_output": {"degenerate", "json-constants"},  # a fixed string paid on over 20% of rows
    "format_only": {"near-miss", "degenerate"},  # a wrong answer in the accepted format paid
    "common_prefix": {"degenerate"},
    "answer_in_reasoning": {"one-answer", "degenerate"},  # the gold outside the answer, a wrong one inside, paid
    "multiple_tags": {"one-answer"},  # two answers: the score depends on their order
    "regex_greediness": {"one-answer"},
    "duplicate_answers": {"equivalent-forms"},  # the right answer in several formats at once vs alone
    "format_variation": {"equivalent-forms"},  # ' 42', '42.0', '042' refused
    "malformed_xml": set(),  # '<answer>42' (unclosed) accepted: a format strictness no property here names
    "missing_column": {"columns"},  # raises when a row lacks a key
    "wrong_argument": {"output"},  # raises on extra row keys
    "message_vs_string": {"shapes"},  # (info only)
    "completion_structure": {"hostile"},  # raises on unicode, NUL bytes, 10,000 characters
    "batch_ordering": {"state", "deterministic"},
    "stale_state": {"state"},
    "tool_spam": {"state", "deterministic"},
    "state_leak": set(),  # the gold appears in another row field: a dataset finding
}
CRASH = {"output", "hostile"}

# rewardlint failed case -> kinds. Exploits by their attack; the other categories by what failing them means.
RL_EXPLOIT_KINDS = {
    "shotgun": {"one-answer", "degenerate"},  # 'could be 40, 41, 42, 43, or 44', several boxes
    "negation": {"one-answer", "degenerate"},  # 'definitely not 42' paid
    "contradiction": {"one-answer"},  # 42 in the reasoning, 43 as the answer, paid
    "empty": {"empty-tags", "degenerate"},  # '', '\\boxed{}', 'Answer:'
    "echo": {"degenerate"},
    "padding": {"degenerate"},
    "judge_injection": {"degenerate"},
    "judge_bias": {"degenerate", "near-miss"},
    "format_farming": {"empty-tags", "degenerate"},
}
RL_CATEGORY_KINDS = {
    "distinction": {"near-miss"},  # a genuinely wrong answer accepted (off by one, sign, magnitude)
    "equivalence": {"equivalent-forms"},  # a right answer in another spelling refused
    "format": {"pays-gold"},  # a right answer in realistic model output refused
}


# ------------------------------------------------------------------------------------------------ the corpus


def load_corpus() -> list[dict]:
    """Every reward of the corpus with its META entry, file and function name, in file order."""
    rewards = []
    for file in sorted(os.listdir(CORPUS)):
        if not file.endswith(".py") or file.startswith("_"):
            continue
        path = os.path.join(CORPUS, file)
        spec = importlib.util.spec_from_file_location(f"_reward_bugs_{file[:-3]}", path)
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, CORPUS)
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(CORPUS)
        for name, meta in module.META.items():
            func = getattr(module, name)
            rewards.append({
                "name": name, "file": path, "func": name, "category": meta["category"], "bug": meta["bug"],
                "sound": meta["bug"] is None, "source": meta["source"], "dataset": meta.get("dataset", "arithmetic"),
                "expected_property": meta.get("expected_property"), "also": list(meta.get("also", [])),
                "verifier": bool(meta.get("verifier")),
                "bounds": list(getattr(func, "bounds", (0.0, 1.0))),
            })
    return rewards


def quick_subset(rewards: list[dict]) -> list[dict]:
    """A buggy reward that checks an answer against a gold one (rewardlint audits only those), a buggy one that does
    not, and a sound one: every path of each tool, in seconds (the full corpus is the measurement)."""
    buggy = [r for r in rewards if not r["sound"]]
    picks = [next((r for r in buggy if r["verifier"]), None), next((r for r in buggy if not r["verifier"]), None),
             next((r for r in rewards if r["sound"]), None)]
    return [r for r in picks if r is not None]


def grpo_run_command() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "grpo-run")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "grpo_core.cli"]


def run_grpo(reward: dict, seed: int, max_examples: int | None, timeout: float) -> dict:
    command = [*grpo_run_command(), "check", "--reward", f"{reward['file']}:{reward['func']}",
               *DATASETS[reward["dataset"]][0], "--json", "--seed", str(seed)]
    if max_examples:
        command += ["--max-examples", str(max_examples)]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
    except subprocess.TimeoutExpired:
        return {"seconds": time.perf_counter() - started, "verdict": "timeout", "failed": [],
                "note": f"no report within {timeout:g} s"}
    seconds = time.perf_counter() - started
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        message = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        # exit 2: the reward did not load (a usage error) -- a finding about the reward as grpo-run sees it
        return {"seconds": seconds, "verdict": "fail" if done.returncode == 2 else "error", "exit": done.returncode,
                "failed": [{"property": "load", "message": message, "counterexample": None}] if done.returncode == 2
                else [], "note": message, "stderr_tail": done.stderr.strip().splitlines()[-12:]}
    failed = [{"property": r["property"].split(":")[0], "message": r["message"],
               "counterexample": r["counterexample"]} for r in report["results"] if r["status"] == "fail"]
    return {"seconds": seconds, "verdict": "fail" if failed else "pass", "exit": done.returncode, "failed": failed,
            "skipped": [r["property"] for r in report["results"] if r["status"] == "skip"]}


# ------------------------------------------------------------------------------------------------ the peers


def peers_python(log) -> str | None:
    """The peers' venv Python, made and filled on first use; None (and why, to log) when it cannot be."""
    python = os.path.join(PEERS_VENV, "bin", "python")
    stamp = os.path.join(PEERS_VENV, ".installed-" + "-".join(PEERS))
    if os.path.exists(stamp):
        return python
    try:
        if not os.path.exists(python):
            subprocess.run([sys.executable, "-m", "venv", PEERS_VENV], check=True, capture_output=True, timeout=300)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PEERS],
                       check=True, capture_output=True, text=True, timeout=600)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        log(f"peers skipped: could not install {' '.join(PEERS)} into {PEERS_VENV}: "
            f"{(str(detail).strip().splitlines() or [''])[-1]}")
        return None
    open(stamp, "w").close()
    return python


def dump_rows(names: set[str], folder: str) -> dict[str, str]:
    """Each dataset's rows as grpo-run check reads them (the same registry and arguments), one JSON file each."""
    from grpo_core.plugins import get_registry

    import datasets

    datasets.disable_progress_bars()
    registry, paths = get_registry(), {}
    for name in sorted(names):
        dataset_name, args = DATASETS[name][1]
        spec = registry.dataset(dataset_name)
        data = spec.load(**spec.resolve(args))
        paths[name] = os.path.join(folder, f"rows_{name}.json")
        with open(paths[name], "w") as handle:
            json.dump([dict(row) for row in data], handle)
    return paths


def run_peer(python: str, tool: str, reward: dict, rows: str, timeout: float) -> dict:
    spec = {"tool": tool, "file": reward["file"], "func": reward["func"], "rows": rows, "bounds": reward["bounds"],
            "site": sysconfig.get_paths()["purelib"]}
    started = time.perf_counter()
    try:
        done = subprocess.run([python, os.path.abspath(__file__), "--peer-driver", json.dumps(spec)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": time.perf_counter() - started, "verdict": "timeout", "findings": [],
                "note": f"no verdict within {timeout:g} s"}
    seconds = time.perf_counter() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"seconds": seconds, "verdict": "error", "findings": [],
                "note": (done.stderr.strip().splitlines() or ["(no output)"])[-1]}
    result = json.loads(lines[-1])
    result["seconds"] = seconds
    return result


def peer_driver(spec: dict) -> None:
    """Run in the peers' venv: one tool on one reward; prints one JSON line."""
    sys.path.append(spec["site"])  # the reward's own dependencies, after the peers' packages
    sys.path.insert(0, os.path.dirname(spec["file"]))
    module_spec = importlib.util.spec_from_file_location("_reward_under_test", spec["file"])
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    fn = getattr(module, spec["func"])
    if spec["tool"] == "rewardprobe":
        from rewardprobe import Probe

        with open(spec["rows"]) as handle:
            rows = json.load(handle)
        report = Probe(seed=42).test_fn(fn, rows, name=spec["func"])
        findings = [{"attack": f.attack, "severity": f.severity.value, "error": f.error, "input": (f.input or "")[:160],
                     "reward": f.actual_reward, "text": f.recommendation[:240]}
                    for f in report.findings if f.severity.value != "info"]
        info = sorted({f.attack for f in report.findings if f.severity.value == "info"})
        print(json.dumps({"verdict": "fail" if findings else "pass", "findings": findings, "info": info}))
        return
    import rewardlint
    from rewardlint.adapter import AdapterError, plan

    try:
        call_plan = plan(fn)
        wrap = not call_plan.positional and call_plan.reference_param is None
    except AdapterError:
        wrap = True

    # rewardlint finds no gold parameter (the gold comes through **kwargs): call the reward as TRL does, every
    # argument by keyword, the gold as the dataset's 'answer' column -- the wrapper a user would write.
    def trl_call(completions, answer, prompts=None):
        return fn(prompts=prompts, completions=completions, answer=answer)

    target = trl_call if wrap else fn

    result = rewardlint.audit(target, name=spec["func"])
    threshold, categories, steps = 0.0, None, []
    if result.is_graded:
        # partial credit: as its report asks, again with the threshold a user would call success (mid-bounds)
        lo, hi = spec["bounds"]
        threshold = lo + 0.5 * (hi - lo)
        steps.append(f"graded: threshold {threshold:g}")
        result = rewardlint.audit(target, name=spec["func"], threshold=threshold)
    if result.profile == "format_strict":
        # its corpus has no <answer> tags, so a verifier of a tag format refuses its right answers; as its report
        # says for this profile, again on the format-independent half (the exploits) alone
        categories = ["exploit"]
        steps.append("format_strict: exploits only")
        result = rewardlint.audit(target, name=spec["func"], threshold=threshold, categories=categories)
    findings = [{"id": o.case.id, "category": o.case.category, "attack": o.case.attack,
                 "mode": "crash" if o.error else o.failure_mode, "score": o.score, "error": o.error and o.error[:160]}
                for o in result.outcomes if not o.passed]
    print(json.dumps({"verdict": "fail" if findings else "pass", "findings": findings, "headline": result.headline,
                      "gate": bool(result.exploits_accepted or result.errors), "profile": result.profile,
                      "threshold": threshold, "steps": steps, "wrapped": wrap, "call_plan": result.call_plan}))


# ------------------------------------------------------------------------------------------------ scoring


def kinds_found(tool: str, result: dict) -> set[str]:
    """The kinds of bug a tool's report names, in grpo-run check's property names."""
    if tool == "grpo-run":
        return {f["property"] for f in result.get("failed", [])}
    kinds: set[str] = set()
    for f in result.get("findings", []):
        if tool == "rewardprobe":
            # a crash names a crash, except where the attack's own point is the crash (a row missing a key)
            crash = f.get("error") and f["attack"] not in ("missing_column", "wrong_argument")
            kinds |= CRASH if crash else RP_KINDS.get(f["attack"], set())
        elif f["mode"] == "crash":
            kinds |= CRASH
        elif f["category"] == "exploit":
            kinds |= RL_EXPLOIT_KINDS.get(f["attack"] or "", {"degenerate"})
        else:
            kinds |= RL_CATEGORY_KINDS.get(f["category"], set())
    return kinds


def score(reward: dict, tool: str, result: dict | None) -> dict | None:
    """caught (planted bug named), flagged (any finding), or None when the tool was not run on this reward. A tool
    that crashed or ran out of time gave no verdict: it counts as neither catching nor flagging (``no_verdict``)."""
    if result is None or result.get("verdict") == "skipped":
        return None
    kinds = kinds_found(tool, result)
    wanted = {reward["expected_property"], *reward["also"]} - {None}
    return {"flagged": bool(kinds) or result.get("verdict") == "fail", "caught": bool(kinds & wanted),
            "kinds": sorted(kinds), "no_verdict": result.get("verdict") in ("timeout", "error"),
            "timeout": result.get("verdict") == "timeout"}


def summarize(rewards: list[dict], tool: str) -> dict:
    bugs = [r for r in rewards if not r["sound"] and r["scores"].get(tool)]
    sound = [r for r in rewards if r["sound"] and r["scores"].get(tool)]
    times = [r["results"][tool]["seconds"] for r in rewards if r["scores"].get(tool)]
    return {"bugs": len(bugs), "caught": sum(r["scores"][tool]["caught"] for r in bugs),
            "flagged": sum(r["scores"][tool]["flagged"] for r in bugs), "sound": len(sound),
            "alarms": sum(r["scores"][tool]["flagged"] for r in sound),
            "no_verdict": [r["name"] for r in rewards if r["scores"].get(tool) and r["scores"][tool]["no_verdict"]],
            "median_s": statistics.median(times) if times else None}


def share(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"


def print_table(rewards: list[dict], tools: list[str]) -> None:
    categories = list(dict.fromkeys(r["category"] for r in rewards))
    print(f"\n{'category':<20} {'tool':<12} {'planted bug caught':>19} {'any failure on bug':>19} "
          f"{'false alarms':>14} {'median s':>9}")
    for category in categories + ["overall"]:
        subset = rewards if category == "overall" else [r for r in rewards if r["category"] == category]
        for i, tool in enumerate(tools):
            s = summarize(subset, tool)
            median = f"{s['median_s']:.1f}" if s["median_s"] is not None else "-"
            print(f"{category if i == 0 else '':<20} {tool:<12} {share(s['caught'], s['bugs']):>19} "
                  f"{share(s['flagged'], s['bugs']):>19} {share(s['alarms'], s['sound']):>14} {median:>9}")
    for tool in tools:
        missing = summarize(rewards, tool)["no_verdict"]
        if missing:
            print(f"{tool} gave no verdict (crashed or timed out; counted as not caught) on {len(missing)}: "
                  + ", ".join(missing))
    gated = [r for r in rewards if r["results"].get("rewardlint") and "gate" in r["results"]["rewardlint"]]
    if gated:
        bugs = [r for r in gated if not r["sound"]]
        sound = [r for r in gated if r["sound"]]
        print(f"rewardlint by its own CI gate (--fail-on exploit: an exploit accepted or a crash): bugs "
              f"{share(sum(r['results']['rewardlint']['gate'] for r in bugs), len(bugs))}, sound "
              f"{share(sum(r['results']['rewardlint']['gate'] for r in sound), len(sound))}")


def print_rewards(rewards: list[dict], tools: list[str]) -> None:
    print("\nper reward (B buggy / S sound; grpo-run: failed properties; rewardprobe: findings; rewardlint: failed "
          "case kinds; * = planted bug caught, ! = false alarm)")
    for r in rewards:
        parts = []
        for tool in tools:
            result, s = r["results"].get(tool), r["scores"].get(tool)
            if s is None:
                parts.append(f"{tool}: n/a" + (f" ({result['note']})" if result and result.get("note") else ""))
                continue
            mark = ("*" if s["caught"] else "") if not r["sound"] else ("!" if s["flagged"] else "")
            if tool == "grpo-run":
                shown = sorted({f["property"] for f in result["failed"]}) or ["pass"]
            elif tool == "rewardprobe":
                shown = sorted({f["attack"] + ("(crash)" if f.get("error") else "")
                                for f in result["findings"]}) or ["pass"]
            else:
                shown = sorted({f["attack"] or f["category"] if f["mode"] != "crash" else "crash"
                                for f in result["findings"]}) or ["pass"]
            if s["no_verdict"]:
                shown = ["timeout" if s["timeout"] else f"error ({result.get('note', '')[:80]})"]
            parts.append(f"{tool}{mark}: {','.join(shown)}")
        expected = f" [{r['expected_property']}]" if not r["sound"] else ""
        print(f"{'S' if r['sound'] else 'B'} {r['name']:<28}{expected:<20} " + " | ".join(parts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three rewards with fewer examples (that it runs)")
    parser.add_argument("--jobs", type=int, default=1, help="rewards checked at once (default 1)")
    parser.add_argument("--json", metavar="PATH", help="write every per-reward result to PATH")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these rewards (by function name)")
    parser.add_argument("--seed", type=int, default=0, help="grpo-run check --seed")
    parser.add_argument("--max-examples", type=int, help="grpo-run check --max-examples (default: its own; 5 quick)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds each tool may take on one reward")
    parser.add_argument("--no-peers", action="store_true", help="grpo-run check only")
    parser.add_argument("--peer-driver", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.peer_driver:
        peer_driver(json.loads(options.peer_driver))
        return

    started = time.perf_counter()
    rewards = load_corpus()
    total = len(rewards)
    if options.only:
        rewards = [r for r in rewards if r["name"] in options.only]
    elif options.quick:
        rewards = quick_subset(rewards)
    max_examples = options.max_examples or (5 if options.quick else None)
    print(f"corpus: {total} rewards ({sum(not r['sound'] for r in load_corpus())} buggy); checking {len(rewards)} "
          f"with --jobs {options.jobs}; machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")

    python = None if options.no_peers else peers_python(print)
    tools = ["grpo-run"] + (["rewardprobe", "rewardlint"] if python else [])
    folder = tempfile.mkdtemp(prefix="reward_bugs_rows_")
    rows = dump_rows({r["dataset"] for r in rewards}, folder) if python else {}

    def check(reward: dict) -> dict:
        reward["results"] = {"grpo-run": run_grpo(reward, options.seed, max_examples, options.timeout)}
        if python:
            reward["results"]["rewardprobe"] = run_peer(python, "rewardprobe", reward, rows[reward["dataset"]],
                                                        options.timeout)
            reward["results"]["rewardlint"] = (run_peer(python, "rewardlint", reward, rows[reward["dataset"]],
                                                        options.timeout) if reward["verifier"] else
                                               {"verdict": "skipped", "note": "not an answer verifier"})
        reward["scores"] = {tool: score(reward, tool, reward["results"].get(tool)) for tool in tools}
        return reward

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        for done, reward in enumerate(pool.map(check, rewards), 1):
            grpo = reward["results"]["grpo-run"]
            print(f"  [{done}/{len(rewards)}] {reward['name']}: grpo-run {grpo['verdict']} in {grpo['seconds']:.1f} s",
                  flush=True)
    print_rewards(rewards, tools)
    print_table(rewards, tools)
    elapsed = time.perf_counter() - started
    print(f"\n{len(rewards)} rewards in {elapsed:.0f} s; load average after: {os.getloadavg()[0]:.2f}")
    if options.json:
        with open(options.json, "w") as handle:
            json.dump({"seconds": elapsed, "tools": tools, "rewards": rewards}, handle, indent=1, default=str)
        print(f"wrote {options.json}")


if __name__ == "__main__":
    main()
