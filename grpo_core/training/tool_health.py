"""The health signals of a run with environments: does the policy still call its tools, and does it stop calling them
to answer?

Per logged step, over the episodes of its training batches:

- ``health/tool_share``: the share of episodes that called a tool at least once, and ``health/tool_calls``, the mean
  number of calls per episode;
- ``health/tool_turns_used_up``: the share of episodes that asked for tools on every tool turn the run allows
  (``max_tool_calling_iterations``), so they ended on a tool's answer, not on one of their own.

Warnings (once each, as every health warning):

- ``tool-collapse``: the policy stopped calling tools. The tool share was at least ``COLLAPSE_FROM`` on some logged
  step, and over the last ``COLLAPSE_STEPS`` logged steps it is at most ``COLLAPSE_TO``: the rewards pay an answer
  without a tool as much as one with it, or the tool's answers hurt.
- ``tool-spam``: at least ``SPAM_SHARE`` of the episodes of the last logged steps (``SPAM_STEPS`` or more) used up every
  tool turn: calling tools is paid, or costs nothing, whether or not the episode ends with an answer.
"""

from __future__ import annotations

COLLAPSE_FROM, COLLAPSE_TO, COLLAPSE_STEPS = 0.25, 0.05, 3
SPAM_SHARE, SPAM_STEPS = 0.5, 2


def tool_turns(completion) -> tuple[int, int]:
    """``(turns that asked for tools, tool calls)`` of one episode: a conversational completion as TRL gives it,
    assistant messages with ``tool_calls`` between tool messages; a plain text completion made none."""
    if not isinstance(completion, (list, tuple)):
        return 0, 0
    turns = calls = 0
    for message in completion:
        asked = message.get("tool_calls") if isinstance(message, dict) else None
        if asked:
            turns += 1
            calls += len(asked)
    return turns, calls


def episode_counts(completions) -> list[tuple[int, int]]:
    """``tool_turns`` of each episode of a batch."""
    return [tool_turns(completion) for completion in completions]


class ToolHealth:
    """The tool signals of a run whose episodes may make ``turns`` tool-calling turns; fed each logged step's
    episodes (``log``), kept across a resume (``state``/``restore``)."""

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.share_history: list = []  # per logged step: the share of episodes with a tool call
        self.used_up_history: list = []  # per logged step: (episodes that used up every turn, episodes)

    def state(self) -> dict:
        return {"tool_share_history": self.share_history, "tool_used_up_history": self.used_up_history}

    def restore(self, saved: dict) -> None:
        self.share_history = list(saved.get("tool_share_history", []))
        self.used_up_history = [tuple(pair) for pair in saved.get("tool_used_up_history", [])]

    def log(self, logs: dict, counts: list[tuple[int, int]]) -> list[tuple[str, str]]:
        """Add the step's tool signals to ``logs`` from its episodes' ``counts``; the warnings that fire."""
        if not counts:
            return []
        share = sum(1 for turns, _ in counts if turns) / len(counts)
        used_up = sum(1 for turns, _ in counts if turns >= self.turns)
        logs["health/tool_share"] = share
        logs["health/tool_calls"] = sum(calls for _, calls in counts) / len(counts)
        logs["health/tool_turns_used_up"] = used_up / len(counts)
        self.share_history.append(share)
        self.used_up_history.append((used_up, len(counts)))
        return self._collapse() + self._spam()

    def _collapse(self) -> list:
        if len(self.share_history) <= COLLAPSE_STEPS:
            return []
        earlier, recent = self.share_history[:-COLLAPSE_STEPS], self.share_history[-COLLAPSE_STEPS:]
        peak = max(earlier)
        now = sum(recent) / len(recent)
        if peak < COLLAPSE_FROM or now > COLLAPSE_TO:
            return []
        step = earlier.index(peak) + 1
        return [("tool-collapse", f"the policy stopped calling tools: {peak:.0%} of the episodes called one at logged "
                 f"step {step}, {now:.0%} over the last {COLLAPSE_STEPS} logged steps. The rewards pay an answer given "
                 "without the tool as much as one that used it, or the tool's answers mislead: check the environment "
                 "with `grpo-run check --env NAME`, pay the environment's reward (an episode that used the tool "
                 "right), or lower the learning rate.")]

    def _spam(self) -> list:
        recent = self.used_up_history[-max(SPAM_STEPS, 5):]
        if len(recent) < SPAM_STEPS:
            return []
        used_up, episodes = sum(u for u, _ in recent), sum(n for _, n in recent)
        if not episodes or used_up / episodes < SPAM_SHARE:
            return []
        return [("tool-spam", f"{used_up / episodes:.0%} of the episodes of the last {len(recent)} logged steps "
                 f"asked for tools on all {self.turns} tool turns the run allows, so they ended without an answer of "
                 "their own: calling tools is paid, or costs nothing. Check that the environment's reward does not "
                 "pay calls themselves (`grpo-run check --env NAME`: do-nothing episodes), pay the final answer, or "
                 "give fewer turns (--set max_tool_calling_iterations=N).")]
