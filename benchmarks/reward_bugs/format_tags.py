"""Format rewards: the completion's tag structure (<think>/<reasoning> then <answer>), with TRL's signature.

See math_answer.py for what META holds. The buggy ones are wrong on purpose.
"""

from __future__ import annotations

import re


def _text(completion) -> str:
    """The text of a completion in either shape TRL passes: a string, or a list of chat messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if isinstance(m, dict))
    return str(completion)


def _blocks(text: str, tag: str) -> list[str]:
    """Bodies of <tag>...</tag>, found with str.find (linear time)."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    out, start = [], 0
    while True:
        i = text.find(opening, start)
        if i < 0:
            return out
        j = text.find(closing, i + len(opening))
        if j < 0:
            return out
        out.append(text[i + len(opening):j])
        start = j + len(closing)


def _filled(body: str) -> bool:
    """Content a reader can see: some letter, digit or symbol, not only whitespace or invisible characters."""
    invisible = "\u200b\u200c\u200d\u2060\ufeff\u3164\u115f\u1160\uffa0"
    return any(ch.isprintable() and not ch.isspace() and ch not in invisible for ch in body)


# ---------------------------------------------------------------- buggy


def open_r1_format_reward(completions, **kwargs) -> list[float]:
    """open-r1's format_reward: <think>\\n...\\n</think>\\n<answer>\\n...\\n</answer>, anything inside."""
    completions = [_text(c) for c in completions]
    pattern = r"^<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$"
    return [1.0 if re.match(pattern, c, re.DOTALL | re.MULTILINE) else 0.0 for c in completions]


def open_r1_tag_count(completions, **kwargs) -> list[float]:
    """open-r1's tag_count_reward: 0.25 for each of the four tag lines seen exactly once."""
    completions = [_text(c) for c in completions]
    def count_tags(text: str) -> float:
        count = 0.0
        if text.count("<think>\n") == 1:
            count += 0.25
        if text.count("\n</think>\n") == 1:
            count += 0.25
        if text.count("\n<answer>\n") == 1:
            count += 0.25
        if text.count("\n</answer>") == 1:
            count += 0.25
        return count

    return [count_tags(c) for c in completions]


def gist_strict_format(completions, **kwargs) -> list[float]:
    """willccbb's gist strict_format_reward_func: the exact line layout, anything (or nothing) inside."""
    completions = [_text(c) for c in completions]
    pattern = r"^<reasoning>\n.*?\n</reasoning>\n<answer>\n.*?\n</answer>\n$"
    return [0.5 if re.match(pattern, c) else 0.0 for c in completions]


def gist_xmlcount(completions, **kwargs) -> list[float]:
    """willccbb's gist xmlcount_reward_func: 0.125 per tag line, minus 0.001 per character after </answer>."""
    completions = [_text(c) for c in completions]
    def count_xml(text: str) -> float:
        count = 0.0
        if text.count("<reasoning>\n") == 1:
            count += 0.125
        if text.count("\n</reasoning>\n") == 1:
            count += 0.125
        if text.count("\n<answer>\n") == 1:
            count += 0.125
            count -= len(text.split("\n</answer>\n")[-1]) * 0.001
        if text.count("\n</answer>") == 1:
            count += 0.125
            count -= (len(text.split("\n</answer>")[-1]) - 1) * 0.001
        return count

    return [count_xml(c) for c in completions]


def trl_think_format(completions, **kwargs) -> list[float]:
    """TRL's think_format_reward: one <think>...</think> block first, whatever it holds."""
    completions = [_text(c) for c in completions]
    pattern = r"^<think>(?!.*<think>)(.*?)</think>.*$"
    return [1.0 if re.match(pattern, c, re.DOTALL | re.MULTILINE) else 0.0 for c in completions]


def answer_tag_presence(completions, **kwargs) -> list[float]:
    """1.0 when the completion has an opening and a closing answer tag."""
    completions = [_text(c) for c in completions]
    return [1.0 if "<answer>" in c and "</answer>" in c else 0.0 for c in completions]


def think_length_bonus(completions, **kwargs) -> list[float]:
    """0.5 for a think block and an answer tag, plus up to 0.5 for a longer think block (pays filler)."""
    completions = [_text(c) for c in completions]
    scores = []
    for c in completions:
        think, answer = _blocks(c, "think"), _blocks(c, "answer")
        if len(think) != 1 or len(answer) != 1:
            scores.append(0.0)
            continue
        scores.append(0.5 + 0.5 * min(1.0, len(think[0]) / 400))
    return scores


def format_plus_any_tag_accuracy(completions, answer, **kwargs) -> list[float]:
    """0.5 for an answer tag, 0.5 more when any answer tag holds the gold: two tags, one of them right, pay in full."""
    completions = [_text(c) for c in completions]
    scores = []
    for c, a in zip(completions, answer):
        bodies = _blocks(c, "answer")
        score = 0.5 if bodies else 0.0
        if any(b.strip() == str(a).strip() for b in bodies[:1000]):
            score += 0.5
        scores.append(score)
    return scores


# ---------------------------------------------------------------- sound


def format_nonempty_think_answer(completions, **kwargs) -> list[float]:
    """open-r1's format reward written with care: one <think> block then one <answer> block, each with content,
    nothing after the answer."""
    completions = [_text(c) for c in completions]
    scores = []
    for c in completions:
        text = c.strip()
        think, answer = _blocks(text, "think"), _blocks(text, "answer")
        ok = (len(think) == 1 and len(answer) == 1 and text.startswith("<think>") and text.endswith("</answer>")
              and text.count("<think>") == 1 and text.count("<answer>") == 1
              and text.find("</think>") < text.find("<answer>") and _filled(think[0]) and _filled(answer[0]))
        scores.append(1.0 if ok else 0.0)
    return scores


def tag_count_nonempty(completions, **kwargs) -> list[float]:
    """Partial credit, 0.5 per block: one <think> block with content, one later <answer> block with content."""
    completions = [_text(c) for c in completions]
    scores = []
    for c in completions:
        think, answer = _blocks(c, "think"), _blocks(c, "answer")
        score = 0.0
        if len(think) == 1 and c.count("<think>") == 1 and _filled(think[0]):
            score += 0.5
        if (len(answer) == 1 and c.count("<answer>") == 1 and _filled(answer[0])
                and (not think or c.find("</think>") < c.find("<answer>"))):
            score += 0.5
        scores.append(score)
    return scores


def answer_tag_number_format(completions, **kwargs) -> list[float]:
    """1.0 for exactly one answer tag holding exactly one number (the arithmetic prompt's format)."""
    completions = [_text(c) for c in completions]
    scores = []
    for c in completions:
        bodies = _blocks(c, "answer")
        number = r"\s*[-+]?\d{1,30}(\.\d{1,30})?\s*"
        ok = len(bodies) == 1 and c.count("<answer>") == 1 and re.fullmatch(number, bodies[0])
        scores.append(1.0 if ok else 0.0)
    return scores


gist_xmlcount.bounds = (0, 0.5)
gist_strict_format.bounds = (0, 0.5)

META = {
    "open_r1_format_reward": dict(
        category="format/tags", bug="pays the empty structure '<think>\\n\\n</think>\\n<answer>\\n\\n</answer>'",
        source="open-r1 src/open_r1/rewards.py format_reward", expected_property="empty-tags",
        also=["degenerate"], dataset="arithmetic"),
    "open_r1_tag_count": dict(
        category="format/tags", bug="pays 1.0 for the four tag lines with nothing between them",
        source="open-r1 src/open_r1/rewards.py tag_count_reward", expected_property="empty-tags",
        also=["degenerate"], dataset="arithmetic"),
    "gist_strict_format": dict(
        category="format/tags",
        bug="pays the empty '<reasoning>\\n\\n</reasoning>\\n<answer>\\n\\n</answer>\\n' its top",
        source="willccbb GRPO gist strict_format_reward_func", expected_property="empty-tags",
        also=["degenerate"], dataset="arithmetic"),
    "gist_xmlcount": dict(
        category="format/tags",
        bug="goes below 0 (declared bounds (0, 0.5)) with text after </answer>; pays empty tags",
        source="willccbb GRPO gist xmlcount_reward_func", expected_property="bounds",
        also=["empty-tags", "gold-bounds", "degenerate"], dataset="arithmetic"),
    "trl_think_format": dict(
        category="format/tags", bug="pays '<think></think>' with nothing inside (and nothing after)",
        source="trl/rewards/format_rewards.py think_format_reward", expected_property="empty-tags",
        also=["degenerate"], dataset="arithmetic"),
    "answer_tag_presence": dict(
        category="format/tags", bug="pays '<answer></answer>' and any filler between the tags",
        source="presence-only format checks (rewardlint 'format_farming')", expected_property="empty-tags",
        also=["degenerate"], dataset="arithmetic"),
    "think_length_bonus": dict(
        category="format/tags", bug="pays filler: the longer the think block, whatever it holds, the more",
        source="reasoning-length bonuses (issue threads on thinking-length rewards)", expected_property="degenerate",
        also=["empty-tags"], dataset="arithmetic"),
    "format_plus_any_tag_accuracy": dict(
        category="format/tags", bug="two answer tags, one of them the gold, earn the full score",
        source="combined format+accuracy rewards reading findall()", expected_property="one-answer",
        also=["degenerate"], dataset="arithmetic", verifier=True),
    "format_nonempty_think_answer": dict(
        category="format/tags", bug=None, source="open-r1 format_reward, written to need content in each block",
        dataset="arithmetic"),
    "tag_count_nonempty": dict(
        category="format/tags", bug=None, source="open-r1 tag_count_reward, counting only blocks with content",
        dataset="arithmetic"),
    "answer_tag_number_format": dict(
        category="format/tags", bug=None, source="answer-format reward for the arithmetic prompt",
        dataset="arithmetic"),
}
