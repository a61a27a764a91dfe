"""The tool signals of a run with environments: tool share, calls, turns used up, and the tool-collapse and
tool-spam warnings, fed through Health as training batches are."""

from grpo_core.training.health import STOP_NAMES, Health, observe_batch
from grpo_core.training.tool_health import ToolHealth, tool_turns


def call(name="multiply", **arguments):
    return {"type": "function", "function": {"name": name, "arguments": arguments or {"a": "2", "b": "3"}}}


def episode(*turns: int, answer: str = "<answer>6</answer>") -> list[dict]:
    """An episode as TRL gives it: one assistant turn per entry asking for that many tool calls, each answered by
    tool messages, then the final answer."""
    messages = []
    for calls in turns:
        messages.append({"role": "assistant", "content": "", "tool_calls": [call() for _ in range(calls)]})
        messages += [{"role": "tool", "name": "multiply", "content": "6"} for _ in range(calls)]
    return messages + [{"role": "assistant", "content": answer}]


def batch(episodes, group=4):
    """A Batch of ``episodes`` with scores that vary within each group."""
    table = [[float(i % 2)] for i in range(len(episodes))]
    return observe_batch(table, [1.0], group, ["What is 2 * 3?"] * len(episodes), episodes, tools=True)


def health(turns=4):
    return Health(["calculator"], [1.0], 4, tools=ToolHealth(turns))


def test_an_episodes_turns_and_calls_are_counted():
    assert tool_turns(episode(1, 2)) == (2, 3)
    assert tool_turns(episode()) == (0, 0)
    assert tool_turns("plain text") == (0, 0)
    assert tool_turns([{"role": "assistant", "content": "x", "tool_calls": None}]) == (0, 0)


def test_the_step_logs_share_calls_and_turns_used_up():
    signals = health(turns=2)
    signals.observe(batch([episode(1), episode(2, 1), episode(), episode()]))
    logs = {}
    assert signals.log(logs, step=1) == []
    assert logs["health/tool_share"] == 0.5
    assert logs["health/tool_calls"] == 1.0  # 4 calls over 4 episodes
    assert logs["health/tool_turns_used_up"] == 0.25


def test_a_run_without_tools_logs_no_tool_signal():
    signals = Health(["math"], [1.0], 4)
    signals.observe(observe_batch([[0.0], [1.0], [0.0], [1.0]], [1.0], 4, ["q"] * 4, ["a"] * 4))
    logs = {}
    signals.log(logs, step=1)
    assert not any(key.startswith("health/tool") for key in logs)


def test_a_policy_that_stops_calling_its_tool_is_warned_of_once():
    signals = health()
    fired = []
    for step, calling in enumerate([4, 3, 0, 0, 0, 0, 0], start=1):
        signals.observe(batch([episode(1)] * calling + [episode()] * (4 - calling)))
        fired += signals.log({}, step)
    assert [key for key, _ in fired] == ["tool-collapse"]
    assert "100% of the episodes called one at logged step 1, 0% over the last 3" in fired[0][1]


def test_a_policy_that_never_called_a_tool_has_not_collapsed():
    signals = health()
    fired = []
    for step in range(1, 8):
        signals.observe(batch([episode()] * 4))
        fired += signals.log({}, step)
    assert fired == []


def test_a_dip_shorter_than_the_window_is_not_a_collapse():
    signals = health()
    fired = []
    for step, calling in enumerate([4, 0, 0, 4, 0, 0, 4], start=1):
        signals.observe(batch([episode(1)] * calling + [episode()] * (4 - calling)))
        fired += signals.log({}, step)
    assert fired == []


def test_episodes_that_use_up_every_tool_turn_are_warned_of_as_spam():
    signals = health(turns=2)
    assert signals.log({}, 1) == []  # no batch yet: nothing logged
    signals.observe(batch([episode(1, 1)] * 3 + [episode(1)]))
    assert signals.log({}, 1) == []  # one logged step is not yet a trend
    signals.observe(batch([episode(1, 1)] * 2 + [episode()] * 2))
    fired = signals.log({}, 2)
    assert [key for key, _ in fired] == ["tool-spam"]
    assert "62% of the episodes of the last 2 logged steps asked for tools on all 2 tool turns" in fired[0][1]


def test_a_resumed_run_keeps_the_tool_history():
    signals = health()
    for step in range(1, 4):
        signals.observe(batch([episode(1)] * 4))
        signals.log({}, step)
    resumed = health()
    resumed.restore(signals.state())
    fired = []
    for step in range(4, 7):
        resumed.observe(batch([episode()] * 4))
        fired += resumed.log({}, step)
    assert [key for key, _ in fired] == ["tool-collapse"]  # the calls before the checkpoint count


def test_stop_on_names_the_tool_warnings():
    assert {"tool-collapse", "tool-spam"} <= set(STOP_NAMES)
