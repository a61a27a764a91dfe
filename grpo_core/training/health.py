"""Reward-health signals while training: is the policy still learning from the reward, or starting to game it?

Every training batch's scores (the completions x rewards table TRL builds, after a control run replaced it: what the
policy is pushed by; last of ``build.reward_table_changes``) and completions are observed; at each logging step the batches since the last one become ``health/<signal>`` values in
the logs (so in metrics.jsonl), and a signal that crosses its threshold gives one plain warning with the likely
cause and a fix (``--stop-on SIGNAL`` then ends the run after saving a checkpoint). The signals:

- ``health/dominance/<reward>``: each reward's share of the variance of the summed advantage (its weighted score
  less its group's mean), which sums to 1 over the rewards; warned (``dominance``) when a reward given at most
  half the total weight decides at least 90% of it;
- ``health/flat_groups``: the share of groups whose completions all score the same (they teach nothing), and
  ``health/flat_groups_trend``, its change per step over the last logged steps; warned (``flat-groups``);
- ``health/length_corr``: the correlation of a completion's length with its advantage, within groups, and
  ``health/mean_length`` in characters; warned (``length``) when longer completions are paid more;
- ``health/degenerate_paid``: the share of paid completions (advantage above 0) that look degenerate: empty, a
  copy of the question, blank characters, repetition or a spray of numbers; warned (``degenerate``);
- ``health/probe/<reward>`` (``--probe N``): greedy scores on N held-out prompts every ``probe_every`` steps;
  warned (``probe``) when the training reward rises while the probe does not;
- with environments, ``health/tool_share``, ``health/tool_calls`` and ``health/tool_turns_used_up``: warned
  (``tool-collapse``, ``tool-spam``) as ``training.tool_health`` says.
"""

from __future__ import annotations

import math
import re
import statistics
import zlib
from collections import deque
from dataclasses import dataclass, field

from grpo_core.checks.degenerate import HANGUL_FILLERS, ZERO_WIDTH
from grpo_core.errors import UsageError
from grpo_core.rewards.reward import completion_text
from grpo_core.training.rollouts import EpisodeSettings
from grpo_core.training.sample import generate_and_score, held_out_rows, question_text
from grpo_core.training.tool_health import ToolHealth, episode_counts

SIGNALS = ("dominance", "flat-groups", "length", "degenerate", "probe", "tool-collapse", "tool-spam")
# What --stop-on names: the signals above and the warnings of training.callbacks.MonitorCallback.
STOP_NAMES = (*SIGNALS, "reward-std", "kl", "clipped", "unscored", "any", "none")  # none: a config's stops off
WINDOW = 5  # logged steps pooled for a warning: one step of a few groups is noise
DOMINANCE_SHARE, DOMINANCE_WEIGHT = 0.9, 0.5
FLAT_SHARE = 0.75
LENGTH_CORRELATION = 0.5
DEGENERATE_SHARE = 0.25
PROBE_RISE, PROBE_FLAT = 0.1, 0.02

_BLANK = set(HANGUL_FILLERS + ZERO_WIDTH)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_WORD = re.compile(r"\w", re.UNICODE)
_TAG = re.compile(r"</?[A-Za-z][\w-]*>")
_REPEAT = re.compile(r"(.{3,80}?)\1{3,}", re.DOTALL)  # a stretch of 3 to 80 characters, 4 times in a row


def validate_health(settings) -> None:
    """--stop-on names known warnings; --stop-on probe comes with --probe."""
    for name in settings.stop_on:
        if name not in STOP_NAMES:
            raise UsageError(f"--stop-on '{name}' is not a warning a run gives; use one of: {', '.join(STOP_NAMES)}")
    if "none" in settings.stop_on and len(settings.stop_on) > 1:
        raise UsageError(f"--stop-on none turns every stop off; it cannot go with {', '.join(n for n in settings.stop_on if n != 'none')}")
    if "probe" in settings.stop_on and not settings.probe:
        raise UsageError("--stop-on probe needs a held-out probe: add --probe N (e.g. --probe 50)")


def watch(trainer, run, args):
    """``(health, probe, observe)``: the run's Health, its Probe when --probe asks for one (None otherwise), and the
    observer that feeds Health every training batch TRL scores (last of ``build.reward_table_changes``, so after a
    control run replaced the scores: what the policy is pushed by)."""
    settings = run.settings
    health = Health([r.__name__ for r in run.rewards], [float(r.weight) for r in run.rewards], args.num_generations,
                    tools=ToolHealth(args.max_tool_calling_iterations) if run.environments else None)

    def observe(table, prompts, completions, completion_ids):
        if not trainer.accelerator.is_main_process:  # the main process logs the signals and decides on --stop-on
            return table
        health.weights = [float(w) for w in trainer.reward_weights.tolist()]
        offset = trainer.accelerator.process_index * len(prompts)
        audit = (trainer.state.global_step + 1) % settings.audit_every == 0  # the step this batch trains
        health.observe(observe_batch(table.detach().float().cpu().tolist(), health.weights, args.num_generations,
                                     prompts, completions, offset, audit, tools=health.tools is not None))
        return table

    if not settings.probe:
        return health, None, observe
    rows, _ = held_out_rows(run.dataset_spec, run.dataset_params, run.dataset, settings.probe)
    return health, Probe(trainer, rows, run.rewards, int(args.max_completion_length or 64), settings.probe_every,
                         EpisodeSettings.of_run(run)), observe


@dataclass
class Probe:
    """Greedy scores of the policy being trained on held-out rows."""

    trainer: object
    rows: object
    rewards: list
    max_new_tokens: int
    every: int
    episodes: EpisodeSettings | None = None  # a run with environments: each probe row is an episode with its tools

    def scores(self) -> dict:
        model = self.trainer.accelerator.unwrap_model(self.trainer.model)
        training = model.training
        model.eval()
        try:
            return generate_and_score(model, self.trainer.processing_class, self.rows, self.rewards,
                                      self.max_new_tokens, episodes=self.episodes)["means"]
        finally:
            model.train(training)


def _is_blank(character: str) -> bool:
    return character.isspace() or character in _BLANK or 0xE000 <= ord(character) <= 0xF8FF


def _copies_question(text: str, question: str) -> bool:
    """The whole question copied back (once or repeated, the last copy perhaps cut short) with next to nothing
    besides: a question restated and then answered is not a copy, nor an answer that quotes a line of it (a
    multiple-choice option)."""
    flat = " ".join(_TAG.sub(" ", text).split()).lower()
    copied = " ".join(_TAG.sub(" ", question).split()).lower()
    if len(copied) < 12 or copied not in flat:
        return False
    rest = " ".join(flat.replace(copied, " ").split())
    return len(_WORD.findall(rest)) < 8 or rest in copied


def degenerate_family(completion: str, question: str = "") -> str | None:
    """Which degenerate family a completion looks like (None: none of them), by its shape alone."""
    text = completion or ""
    if not any(not _is_blank(c) for c in text):
        return "empty"
    if _copies_question(text, question):
        return "the question copied"
    blanks = sum(_is_blank(c) for c in text)
    if len(text) >= 20 and blanks >= 0.5 * len(text):
        return "blank characters"
    repeated = sum(len(m.group()) for m in _REPEAT.finditer(text))
    if len(text) >= 60 and (repeated >= 0.4 * len(text) or len(zlib.compress(text.encode())) < 0.2 * len(text.encode())):
        return "repetition"
    numbers = _NUMBER.findall(text)
    if len(set(numbers)) >= 20 and sum(map(len, numbers)) >= 0.5 * (len(text) - blanks):
        return "a spray of numbers"
    return None


def _mean(values):
    return sum(values) / len(values) if values else None


def _correlation(xs, ys) -> float | None:
    if len(xs) < 3:
        return None
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # one side constant
        return None


def _slope(values) -> float | None:
    """Least-squares change per step of a series of logged values."""
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    if len(points) < 3:
        return None
    return statistics.linear_regression(*zip(*points)).slope


@dataclass
class Batch:
    """What one training batch shows: per group, each reward's weighted deviations from the group mean; and per
    completion of this process, its length, advantage and degenerate family."""

    deviations: list  # [reward][completion]: weight x (score - its group's mean), 0 where unscored
    flat_groups: int
    groups: int
    lengths: list  # characters, this process's completions
    length_deviations: list  # each less the mean of its group's completions on this process
    advantages: list
    families: list | None  # None: not audited (--audit-every)
    tool_counts: list | None = None  # per completion of this process: (tool turns, tool calls); None: no tools


def observe_batch(table: list[list[float]], weights: list[float], group: int, prompts, completions,
                  offset: int = 0, audit: bool = True, tools: bool = False) -> Batch:
    """A ``Batch`` from the (completions x rewards) ``table`` gathered over the processes, the reward ``weights``,
    the group size and this process's ``prompts`` and ``completions`` (rows ``offset`` on of the table); with
    ``audit``, each completion's degenerate family too; with ``tools``, each episode's tool turns and calls."""
    rows = len(table)
    rewards = len(weights)
    deviations = [[0.0] * rows for _ in range(rewards)]
    totals = [None] * rows
    flat = 0
    for start in range(0, rows - rows % group, group):
        members = range(start, start + group)
        for r in range(rewards):
            scored = [table[i][r] for i in members if math.isfinite(table[i][r])]
            mean = _mean(scored)
            for i in members:
                if math.isfinite(table[i][r]):
                    deviations[r][i] = weights[r] * (table[i][r] - mean)
        for i in members:
            parts = [weights[r] * table[i][r] for r in range(rewards) if math.isfinite(table[i][r])]
            totals[i] = sum(parts) if parts else None
        scored = [totals[i] for i in members if totals[i] is not None]
        if scored and max(scored) - min(scored) <= 1e-9 * max(1.0, abs(max(scored))):
            flat += 1
    advantages = [sum(deviations[r][i] for r in range(rewards)) for i in range(rows)]
    texts = [completion_text(c) for c in completions]
    local = range(offset, min(rows, offset + len(texts)))
    lengths = {i: len(texts[i - offset]) for i in local}
    length_deviations = []
    for i in local:
        members = [j for j in range(i - i % group, i - i % group + group) if j in lengths]
        length_deviations.append(lengths[i] - _mean([lengths[j] for j in members]))
    return Batch(deviations, flat, rows // group, list(lengths.values()), length_deviations,
                 [advantages[i] for i in local],
                 [degenerate_family(texts[i - offset], question_text(prompts[i - offset])) for i in local]
                 if audit else None, episode_counts(completions) if tools else None)


def dominance(batches: list[Batch]) -> list[float] | None:
    """Each reward's share of the variance of the summed advantage over ``batches`` (None: no variance)."""
    if not batches:
        return None
    rewards = len(batches[0].deviations)
    columns = [[d for b in batches for d in b.deviations[r]] for r in range(rewards)]
    totals = [sum(column[i] for column in columns) for i in range(len(columns[0]))]
    variance = sum(t * t for t in totals)
    if variance <= 0:
        return None
    return [sum(c * t for c, t in zip(column, totals)) / variance for column in columns]


@dataclass
class Health:
    """The signals of a run, fed batch by batch; ``log(logs, step)`` adds them to a log and says which warnings
    fire, each once: ``(signal, message)``."""

    names: list
    weights: list
    group: int
    pending: list = field(default_factory=list)  # batches since the last log
    recent: deque = field(default_factory=lambda: deque(maxlen=WINDOW))  # the last logged steps' batches
    flat_history: list = field(default_factory=list)
    reward_history: list = field(default_factory=list)
    probes: list = field(default_factory=list)  # (step, {reward: score}, logged steps before it)
    dominant_steps: int = 0
    same_everywhere: int = 0  # logged steps in a row whose completions all scored the same (reward_std 0)
    warned: set = field(default_factory=set)
    tools: ToolHealth | None = None  # a run with environments: its tool signals

    def observe(self, batch: Batch) -> None:
        self.pending.append(batch)

    def state(self) -> dict:
        """What a checkpoint keeps, so a resumed run's signals go on from there: the per-step histories, the
        counters and the warnings given (the last steps' batches are not kept: those windows fill again)."""
        return {"flat_history": self.flat_history, "reward_history": self.reward_history,
                "probes": [list(probe) for probe in self.probes], "dominant_steps": self.dominant_steps,
                "same_everywhere": self.same_everywhere, "warned": sorted(self.warned),
                **(self.tools.state() if self.tools else {})}

    def restore(self, saved: dict) -> None:
        """Go on from a checkpoint's ``state()``."""
        self.flat_history = list(saved.get("flat_history", []))
        self.reward_history = list(saved.get("reward_history", []))
        self.probes = [tuple(probe) for probe in saved.get("probes", [])]
        self.dominant_steps = int(saved.get("dominant_steps", 0))
        self.same_everywhere = int(saved.get("same_everywhere", 0))
        self.warned = set(saved.get("warned", []))
        if self.tools:
            self.tools.restore(saved)

    def log(self, logs: dict, step: int) -> list[tuple[str, str]]:
        batches, self.pending = self.pending, []
        if not batches:
            return []
        self.recent.append(batches)
        pooled = [b for logged in self.recent for b in logged]
        fired = []
        if len(self.names) > 1:
            shares = dominance(batches)
            for name, share in zip(self.names, shares or [None] * len(self.names)):
                logs[f"health/dominance/{name}"] = share
            fired += self._dominance(dominance(pooled))
        groups = sum(b.groups for b in batches)
        flat = sum(b.flat_groups for b in batches) / groups if groups else None
        self.flat_history.append(flat)
        logs["health/flat_groups"] = flat
        logs["health/flat_groups_trend"] = _slope(self.flat_history[-10:])
        lengths = [x for b in batches for x in b.lengths]
        logs["health/mean_length"] = _mean(lengths)
        logs["health/length_corr"] = _correlation([x for b in batches for x in b.length_deviations],
                                                  [a for b in batches for a in b.advantages])
        if any(b.families is not None for b in batches):
            logs["health/degenerate_paid"] = _paid_share(batches)[0]
        self.reward_history.append(logs.get("reward"))
        self.same_everywhere = self.same_everywhere + 1 if logs.get("reward_std") == 0 else 0
        fired += self._flat() + self._length(pooled) + self._degenerate(pooled)
        if self.tools:
            fired += self.tools.log(logs, [c for b in batches for c in b.tool_counts or ()])
        return [(key, message) for key, message in fired if self._first(key)]

    def _first(self, key: str) -> bool:
        if key in self.warned:
            return False
        self.warned.add(key)
        return True

    def _dominance(self, shares) -> list:
        total = sum(self.weights)
        found = [(name, share, weight) for name, share, weight in zip(self.names, shares or (), self.weights)
                 if share >= DOMINANCE_SHARE and total > 0 and weight / total <= DOMINANCE_WEIGHT]
        self.dominant_steps = self.dominant_steps + 1 if found else 0
        if not found or self.dominant_steps < 3:
            return []
        name, share, weight = found[0]
        others = [n for n in self.names if n != name]
        return [("dominance", f"reward '{name}' decides {share:.0%} of the ordering of completions over the last "
                 f"{len(self.recent)} logged steps with {weight / total:.0%} of the weight: the other rewards "
                 f"({', '.join(others)}) barely vary within a group, or its range is wider than theirs. Lower its "
                 f"weight (--reward {name}=W), give the others partial credit, or try --set "
                 "multi_objective_aggregation=normalize_then_sum.")]

    def _flat(self) -> list:
        recent = [v for v in self.flat_history[-WINDOW:] if v is not None]
        if len(recent) < 3 or _mean(recent) < FLAT_SHARE or self.same_everywhere >= 3:
            return []  # (every completion of a step scoring the same is the reward-std warning's)
        return [("flat-groups", f"{_mean(recent):.0%} of the groups of the last {len(recent)} logged steps scored "
                 "every completion the same, so they taught nothing: the task is too hard or too easy for the "
                 "policy now, or the reward pays all or nothing. Use more completions per prompt (--set "
                 "num_generations=16), a reward with partial credit, or easier/harder prompts.")]

    def _length(self, pooled) -> list:
        correlation = _correlation([x for b in pooled for x in b.length_deviations],
                                   [a for b in pooled for a in b.advantages])
        if len(self.recent) < 2 or correlation is None or correlation < LENGTH_CORRELATION:
            return []
        return [("length", f"longer completions are paid more: length and advantage correlate at {correlation:.2f} "
                 f"within groups over the last {len(self.recent)} logged steps (mean length now "
                 f"{_mean([x for x in pooled[-1].lengths]) or 0:.0f} characters). A reward that pays length is "
                 "gamed by padding: check it with `grpo-run check`, cap what length can earn, or add the length "
                 "reward with a target.")]

    def _degenerate(self, pooled) -> list:
        share, count, families = _paid_share(pooled)
        if share is None or share < DEGENERATE_SHARE or count < 2:
            return []
        named = ", ".join(f"{family} ({n})" for family, n in sorted(families.items(), key=lambda kv: -kv[1]))
        return [("degenerate", f"{share:.0%} of the completions paid above their group's mean over the last "
                 f"{len(self.recent)} logged steps look degenerate: {named}. The policy is finding a way to be paid "
                 "without doing the task: run `grpo-run check` on the rewards, and read completions.jsonl.")]

    def probe(self, logs: dict, step: int, scores: dict) -> list[tuple[str, str]]:
        """A held-out probe's scores at ``step``: logged, and compared with the first probe."""
        for name, value in scores.items():
            logs[f"health/probe/{name}"] = value
        self.probes.append((step, scores, len(self.reward_history)))
        start = self.probes[0][2]
        if len(self.probes) < 2 or len(self.reward_history) - start <= WINDOW:
            return []
        first, now = self.probes[0][1], scores
        # the training reward over the first logged steps after the first probe, and over the last ones
        reward_then = _mean([v for v in self.reward_history[start:start + WINDOW] if v is not None])
        reward_now = _mean([v for v in self.reward_history[-WINDOW:] if v is not None])
        name = self.names[0]
        if reward_then is None or reward_now is None or first.get(name) is None or now.get(name) is None:
            return []
        if reward_now - reward_then < PROBE_RISE or now[name] - first[name] > PROBE_FLAT or not self._first("probe"):
            return []
        return [("probe", f"the training reward rose from {reward_then:.3f} to {reward_now:.3f} while the held-out "
                 f"probe's {name} went from {first[name]:.3f} to {now[name]:.3f} (step {step}): the policy is "
                 "learning what the reward pays on the training prompts, not the task. Read completions.jsonl for "
                 "what it found, and check the reward with `grpo-run check`.")]


def _paid_share(batches) -> tuple[float | None, int, dict]:
    """Of the completions paid above their group's mean: the share that look degenerate, how many, by family."""
    paid = [family for b in batches if b.families is not None
            for family, advantage in zip(b.families, b.advantages) if advantage > 1e-9]
    families: dict = {}
    for family in paid:
        if family is not None:
            families[family] = families.get(family, 0) + 1
    count = sum(families.values())
    return (count / len(paid) if paid else None), count, families
