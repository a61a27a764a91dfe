"""The products dataset: exact answers, the same rows for the same arguments, train and test apart, and a gold
episode that earns the reward on every row."""

import pytest

from grpo_core import UsageError, load_dataset

from grpo_env_calculator import DATASET, Calculator, gold_episode
from grpo_env_calculator.dataset import SYSTEM_PROMPT, pair_split, rows


def pairs(found) -> set:
    return {tuple(sorted(row["operands"])) for row in found}


def test_rows_ask_for_a_product_and_hold_it():
    for row in rows(size=200):
        a, b = row["operands"]
        assert 100 <= a <= 999 and 10 <= b <= 99
        assert row["answer"] == str(a * b)
        assert row["prompt"] == [{"role": "system", "content": SYSTEM_PROMPT},
                                 {"role": "user", "content": f"What is {a} × {b}?"}]
    assert "<answer></answer>" in SYSTEM_PROMPT and "multiply" in SYSTEM_PROMPT


def test_the_same_arguments_give_the_same_rows():
    assert rows(size=50, seed=3) == rows(size=50, seed=3)
    assert rows(size=50, seed=3, split="test") == rows(size=50, seed=3, split="test")
    assert rows(size=50, seed=3) != rows(size=50, seed=4)
    assert rows(size=20, seed=3) == rows(size=50, seed=3)[:20]  # a smaller size is the start of a larger one


@pytest.mark.parametrize("digits", ["3x2", "2x2", "3x3"])
def test_train_and_test_share_no_pair_of_operands(digits):
    size = {"2x2": 1000, "3x2": 3000, "3x3": 3000}[digits]
    train = pairs(rows("train", size, seed=0, digits=digits)) | pairs(rows("train", size, seed=1, digits=digits))
    test = pairs(rows("test", size, seed=0, digits=digits)) | pairs(rows("test", size, seed=1, digits=digits))
    assert not train & test
    assert all(pair_split(*pair) == "train" for pair in train) and all(pair_split(*pair) == "test" for pair in test)
    assert len(pairs(rows("train", size, digits=digits))) == size  # no problem twice within a split


def test_digits_and_system_prompt():
    for row in rows(size=20, digits="5x4", system_prompt=None):
        a, b = row["operands"]
        assert len(str(a)) == 5 and len(str(b)) == 4 and row["prompt"][0]["role"] == "user"
    for bad in ("3", "3x", "0x2", "19x2", "axb", "3*2"):
        with pytest.raises(UsageError, match="digits"):
            rows(size=5, digits=bad)
    with pytest.raises(UsageError, match="size must be between 1 and 10"):
        rows(size=11, digits="1x1")  # 81 problems: an eighth of them at most
    with pytest.raises(UsageError, match="split"):
        rows(size=5, split="validation")


def test_loads_through_grpo_core_with_its_parameters():
    dataset = load_dataset("products", {"size": "30", "seed": "2", "digits": "4x2"})
    assert dataset.num_rows == 30 and {"prompt", "answer", "operands"} <= set(dataset.column_names)
    assert [dict(row)["answer"] for row in dataset] == [row["answer"] for row in rows(size=30, seed=2, digits="4x2")]
    assert DATASET.reward_params["math"]["extract"] == "answer-tag"


@pytest.mark.parametrize("digits", ["3x2", "6x6", "18x18"])
def test_the_gold_episode_earns_the_reward_on_every_row(digits):
    for row in rows(size=100, digits=digits):
        calculator = Calculator()
        calculator.reset(**row)
        for tool, args in gold_episode(row):
            assert not getattr(calculator, tool)(**args).startswith("error")
        assert calculator.get_reward() == 1.0


def test_the_gold_episode_reads_the_question_when_there_is_no_operands_column():
    row = {"prompt": [{"role": "user", "content": "What is 964 * 59? Use the multiply tool."}], "answer": "56876"}
    assert gold_episode(row) == [("multiply", {"a": "964", "b": "59"})]


def test_worked_examples_come_before_the_question_and_are_never_asked():
    from grpo_env_calculator.dataset import EXAMPLE_PAIRS, WORKED_TEXT

    for row in rows(size=100, worked_examples=2):
        system, *examples, question = row["prompt"]
        assert system["role"] == "system" and question["role"] == "user" and len(examples) == 8
        for (a, b), start in zip(EXAMPLE_PAIRS, (0, 4)):
            asked, call, answered, final = examples[start:start + 4]
            assert asked == {"role": "user", "content": f"What is {a} × {b}?"}
            assert call["content"] == WORKED_TEXT
            assert call["tool_calls"][0]["function"] == {"name": "multiply", "arguments": {"a": str(a), "b": str(b)}}
            assert answered == {"role": "tool", "name": "multiply", "content": str(a * b)}
            assert final == {"role": "assistant", "content": f"<answer>{a * b}</answer>"}
    every = {(min(a, b), max(a, b)) for a, b in EXAMPLE_PAIRS}
    for digits in ("3x2", "4x2", "2x4"):
        for split in ("train", "test"):
            assert not pairs(rows(split=split, size=500, digits=digits)) & every
    assert [r["operands"] for r in rows(size=30, worked_examples=1)] == [r["operands"] for r in rows(size=30)]


@pytest.mark.parametrize("count", [-1, 5, True, "2"])
def test_worked_examples_out_of_range_is_refused_naming_it(count):
    with pytest.raises(UsageError, match="worked_examples must be a whole number from 0 to 4"):
        rows(size=5, worked_examples=count)
    with pytest.raises(UsageError, match="products test_worked_examples must be a whole number from 0 to 4"):
        rows(size=5, worked_examples=2, test_worked_examples=count)


def test_the_test_split_can_show_fewer_worked_examples_than_training():
    def shown(split, **args):
        return {len(r["prompt"]) - 2 for r in rows(split=split, size=40, worked_examples=2, **args)}

    assert shown("train", test_worked_examples=1) == shown("train") == {8}
    assert shown("test", test_worked_examples=1) == {4} and shown("test", test_worked_examples=0) == {0}
    assert shown("test") == {8}
    assert [r["operands"] for r in rows(split="test", size=40, test_worked_examples=1)] == \
        [r["operands"] for r in rows(split="test", size=40)]
    data = load_dataset("products", {"split": "test", "size": 3, "worked_examples": 2, "test_worked_examples": 1})
    assert len(data[0]["prompt"]) == 6


def test_a_prompt_with_worked_examples_renders_with_the_tool_template():
    from importlib import resources

    from transformers.utils.chat_template_utils import render_jinja_template

    template = resources.files("trl").joinpath("chat_templates/qwen2_5.jinja").read_text(encoding="utf-8")
    data = load_dataset("products", {"size": 2, "worked_examples": 2})
    rendered, _ = render_jinja_template([data[0]["prompt"]], chat_template=template, add_generation_prompt=True)
    text = rendered[0]
    assert text.count("<tool_call>") == 2 and text.count("<tool_response>") == 2
    assert '{"name": "multiply", "arguments": {"a": "317", "b": "46"}}' in text
    assert text.rstrip().endswith("<|im_start|>assistant")


@pytest.mark.parametrize("tool, sign, compute", [("add", "+", lambda a, b: a + b),
                                                 ("subtract", "-", lambda a, b: a - b)])
def test_worked_examples_can_call_another_tool_than_the_question_needs(tool, sign, compute):
    from grpo_env_calculator.dataset import EXAMPLE_PAIRS

    for row in rows(size=20, worked_examples=2, worked_tool=tool):
        system, *examples, question = row["prompt"]
        a, b = row["operands"]
        assert question["content"] == f"What is {a} × {b}?" and row["answer"] == str(a * b)
        for (x, y), start in zip(EXAMPLE_PAIRS, (0, 4)):
            asked, call, answered, final = examples[start:start + 4]
            assert asked["content"] == f"What is {x} {sign} {y}?"
            assert call["tool_calls"][0]["function"] == {"name": tool, "arguments": {"a": str(x), "b": str(y)}}
            assert answered == {"role": "tool", "name": tool, "content": str(compute(x, y))}
            assert final["content"] == f"<answer>{compute(x, y)}</answer>"
            assert Calculator().__getattribute__(tool)(str(x), str(y)) == str(compute(x, y))  # what the tool answers
    assert [r["operands"] for r in rows(size=20, worked_examples=2, worked_tool=tool)] == \
        [r["operands"] for r in rows(size=20, worked_examples=2)]
    data = load_dataset("products", {"size": 2, "worked_examples": 1, "worked_tool": tool})
    assert data[0]["prompt"][2]["tool_calls"][0]["function"]["name"] == tool


def test_worked_examples_can_call_several_tools_in_turn():
    for row in rows(size=10, worked_examples=3, worked_tool="multiply, add"):
        called = [m["tool_calls"][0]["function"]["name"] for m in row["prompt"] if m.get("tool_calls")]
        signs = [m["content"].split()[3] for m in row["prompt"][1:-1] if m["role"] == "user"]
        assert called == ["multiply", "add", "multiply"] and signs == ["×", "+", "×"]
        assert row["prompt"][-1]["content"].startswith("What is ") and " × " in row["prompt"][-1]["content"]
    data = load_dataset("products", {"size": 2, "worked_examples": 2, "worked_tool": "add,multiply"})
    assert [m["tool_calls"][0]["function"]["name"] for m in data[0]["prompt"] if m.get("tool_calls")] == \
        ["add", "multiply"]


def test_tool_choices_go_to_the_rows_in_turn_and_the_test_split_has_its_own():
    def called(row):
        return [m["tool_calls"][0]["function"]["name"] for m in row["prompt"] if m.get("tool_calls")]

    train = rows(size=6, worked_examples=2, worked_tool="add|add,subtract", test_worked_tool="add")
    assert [called(row) for row in train] == [["add", "add"], ["add", "subtract"]] * 3
    assert [r["operands"] for r in train] == [r["operands"] for r in rows(size=6, worked_examples=2)]
    test = rows(split="test", size=4, worked_examples=2, worked_tool="add|add,subtract", test_worked_tool="add")
    assert [called(row) for row in test] == [["add", "add"]] * 4
    assert [called(row) for row in rows(split="test", size=2, worked_examples=2, worked_tool="add|add,subtract")] == \
        [["add", "add"], ["add", "subtract"]]
    data = load_dataset("products", {"split": "test", "size": 2, "worked_examples": 2, "worked_tool": "multiply",
                                     "test_worked_tool": "add"})
    assert [called(row) for row in data] == [["add", "add"]] * 2
    with pytest.raises(UsageError, match="products test_worked_tool takes one or more of .*; got 'power'"):
        rows(size=2, worked_examples=2, test_worked_tool="power")


def test_worked_words_replace_every_worked_turn_s_words_and_nothing_else():
    plain = rows(size=5, worked_examples=2, worked_tool="add")
    for row, before in zip(rows(size=5, worked_examples=2, worked_tool="add", worked_words="I use the calculator."),
                           plain):
        turns = [m for m in row["prompt"] if m.get("tool_calls")]
        assert [m["content"] for m in turns] == ["I use the calculator."] * 2
        assert [m["tool_calls"] for m in turns] == [m["tool_calls"] for m in before["prompt"] if m.get("tool_calls")]
        assert [m for m in row["prompt"] if not m.get("tool_calls")] == \
            [m for m in before["prompt"] if not m.get("tool_calls")]
    assert [m["content"] for m in plain[0]["prompt"] if m.get("tool_calls")] == ["I add with the calculator."] * 2
    data = load_dataset("products", {"size": 2, "worked_examples": 1, "worked_words": "I use the calculator."})
    assert data[0]["prompt"][2]["content"] == "I use the calculator."


@pytest.mark.parametrize("tool", ["power", "multiply,power", "", "add|", "add|power"])
def test_an_unknown_worked_tool_is_refused_naming_it(tool):
    with pytest.raises(UsageError, match=f"worked_tool takes one or more of multiply, add, subtract, comma-separated, "
                                         f"or several such choices separated by [|] for the rows in turn "
                                         f"[(]add[|]add,subtract[)]; got '{tool}'"):
        rows(size=5, worked_examples=2, worked_tool=tool)
