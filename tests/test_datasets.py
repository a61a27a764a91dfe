"""The built-in datasets: local files and hub datasets, one column mapping, errors before any model loads."""

import json

import pytest

from grpo_core import UsageError
from grpo_core.builtin.datasets import chat_prompt, parse_columns
from grpo_core.plugins import get_registry

ROWS = [{"q": f"What is {i} + {i}?", "a": str(2 * i), "why": f"{i} + {i} = {2 * i}", "kind": "add"} for i in range(10)]


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def load(dataset, **args):
    spec = get_registry().dataset(dataset)
    return spec.load(**spec.resolve({key: str(value) for key, value in args.items()}))


def write(tmp_path, kind, rows=ROWS):
    import pandas as pd

    path = tmp_path / f"rows.{kind}"
    frame = pd.DataFrame(rows)
    if kind == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    elif kind == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    return path


@pytest.fixture
def hub_folder(tmp_path):
    """A dataset folder laid out like openai/gsm8k on the hub: configs declared in README.md, parquet per split."""
    import pandas as pd

    root = tmp_path / "gsm8k-like"
    for config, offset in (("main", 0), ("socratic", 100)):
        (root / config).mkdir(parents=True)
        for split, rows in (("train", ROWS[:8]), ("test", ROWS[8:])):
            frame = pd.DataFrame([{**row, "a": str(int(row["a"]) + offset)} for row in rows])
            frame.to_parquet(root / config / f"{split}-00000-of-00001.parquet")
    (root / "README.md").write_text(
        "---\nconfigs:\n"
        + "".join(
            f"- config_name: {config}\n  data_files:\n  - split: train\n    path: {config}/train-*\n"
            f"  - split: test\n    path: {config}/test-*\n"
            for config in ("main", "socratic")
        )
        + "---\n"
    )
    return root


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
def test_local_maps_question_and_answer_in_every_format(tmp_path, kind):
    path = write(tmp_path, kind)
    dataset = load("local", path=path, question="q", answer="a", system_prompt="Be brief.")
    assert len(dataset) == len(ROWS)
    first = dataset[3]
    assert first["prompt"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 3 + 3?"},
    ]
    assert str(first["answer"]) == "6"


def test_question_without_system_prompt_is_a_single_user_message(tmp_path):
    dataset = load("local", path=write(tmp_path, "jsonl"), question="q")
    assert dataset[0]["prompt"] == [{"role": "user", "content": "What is 0 + 0?"}]


def test_prompt_column_is_used_as_it_is_without_a_question_column(data_file):
    dataset = load("local", path=data_file)
    assert dataset[0]["prompt"] == [{"role": "user", "content": "Count to 1"}]
    assert dataset.column_names == ["prompt", "answer"]


def test_system_prompt_replaces_the_system_message_of_chat_prompts(tmp_path):
    rows = [{"prompt": [{"role": "system", "content": "old"}, {"role": "user", "content": "hi"}]}]
    dataset = load("local", path=write(tmp_path, "jsonl", rows), system_prompt="new")
    assert dataset[0]["prompt"] == [{"role": "system", "content": "new"}, {"role": "user", "content": "hi"}]


def test_columns_expose_other_columns_under_new_names(tmp_path):
    dataset = load("local", path=write(tmp_path, "jsonl"), question="q", columns="solution=why, category=kind")
    assert dataset[2]["solution"] == "2 + 2 = 4" and dataset[2]["category"] == "add"


def test_few_shot_examples_are_taken_out_of_the_data_and_put_before_the_question(tmp_path):
    dataset = load("local", path=write(tmp_path, "jsonl"), question="q", answer="a", few_shot=2,
                   few_shot_answer="why", system_prompt="S")
    assert len(dataset) == len(ROWS) - 2
    prompt = dataset[0]["prompt"]
    assert [m["role"] for m in prompt] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert prompt[1]["content"] == "What is 0 + 0?" and prompt[2]["content"] == "0 + 0 = 0"
    assert prompt[4]["content"] == "1 + 1 = 2"
    assert prompt[-1]["content"] == "What is 2 + 2?" and dataset[0]["answer"] == "4"
    questions = {row["prompt"][-1]["content"] for row in dataset}
    assert "What is 0 + 0?" not in questions and "What is 1 + 1?" not in questions


def test_few_shot_uses_the_answer_column_by_default(tmp_path):
    dataset = load("local", path=write(tmp_path, "jsonl"), question="q", answer="a", few_shot=1)
    assert dataset[0]["prompt"][1] == {"role": "assistant", "content": "0"}


def test_shuffle_size_and_split_slices(tmp_path):
    path = write(tmp_path, "jsonl")
    shuffled = load("local", path=path, question="q", answer="a", shuffle=True, seed=3, size=4)
    assert len(shuffled) == 4
    assert [r["answer"] for r in shuffled] != [r["a"] for r in ROWS[:4]]
    again = load("local", path=path, question="q", answer="a", shuffle=True, seed=3, size=4)
    assert [r["answer"] for r in again] == [r["answer"] for r in shuffled]
    sliced = load("local", path=path, question="q", split="train[:3]")
    assert len(sliced) == 3


def test_hub_reads_a_config_and_split_with_the_same_mapping(hub_folder):
    train = load("hub", name=hub_folder, config="main", question="q", answer="a")
    assert len(train) == 8 and train[1]["answer"] == "2"
    assert train[1]["prompt"] == [{"role": "user", "content": "What is 1 + 1?"}]
    test = load("hub", name=hub_folder, config="socratic", split="test", question="q", answer="a")
    assert len(test) == 2 and test[0]["answer"] == "116"


def test_hub_reads_a_folder_saved_as_parquet_files(tmp_path):
    write(tmp_path, "parquet")
    dataset = load("hub", name=tmp_path, question="q", answer="a", size=5)
    assert len(dataset) == 5 and dataset[4]["answer"] == "8"


def local_error(tmp_path, **args):
    with pytest.raises(UsageError) as caught:
        load("local", path=write(tmp_path, "jsonl"), **args)
    return str(caught.value)


def test_unknown_question_column_names_the_value_and_the_columns(tmp_path):
    message = local_error(tmp_path, question="qq")
    assert "no column 'qq' (named by question=qq)" in message
    assert "(did you mean 'q'?)" in message and "its columns: q, a, why, kind" in message


def test_unknown_answer_and_renamed_columns_are_errors(tmp_path):
    assert "no column 'answer_text' (named by answer=answer_text)" in local_error(tmp_path, question="q", answer="answer_text")
    assert "no column 'schema' (named by columns s=schema)" in local_error(tmp_path, question="q", columns="s=schema")


def test_missing_prompt_column_says_how_to_name_the_question(tmp_path):
    message = local_error(tmp_path)
    assert "has no 'prompt' column" in message and "question=COLUMN" in message and "q, a, why, kind" in message


@pytest.mark.parametrize("columns", ["schema", "=x", "prompt=q"])
def test_malformed_columns_parameter(columns):
    with pytest.raises(UsageError, match="columns"):
        parse_columns(columns)


def test_few_shot_errors(tmp_path):
    assert "needs the column with the worked solutions" in local_error(tmp_path, question="q", few_shot=1)
    assert "few_shot=10 leaves no rows" in local_error(tmp_path, question="q", answer="a", few_shot=10)


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(UsageError, match="dataset file '.*nope.jsonl' does not exist"):
        load("local", path=tmp_path / "nope.jsonl")
    odd = tmp_path / "rows.txt"
    odd.write_text("x")
    with pytest.raises(UsageError, match="unknown extension; use one of: .jsonl, .json, .csv, .parquet"):
        load("local", path=odd)
    with pytest.raises(UsageError, match="needs a file"):
        load("local")


@pytest.mark.parametrize("kind", ["csv", "jsonl", "parquet"])
def test_empty_file_is_an_error_naming_its_columns(tmp_path, kind):
    import pandas as pd

    empty = tmp_path / f"empty.{kind}"
    if kind == "csv":
        empty.write_text("q,a\n")
    elif kind == "jsonl":
        empty.write_text("\n")
    else:
        pd.DataFrame({"q": [], "a": []}).to_parquet(empty)
    with pytest.raises(UsageError, match=r"has no rows; its columns: " + ("q, a" if kind != "jsonl" else "")):
        load("local", path=empty, question="q")


def test_size_zero_is_an_error(tmp_path):
    assert "parameter 'size' of dataset 'local' must be at least 1; got 0" in local_error(tmp_path, question="q", size=0)


def test_unknown_split_and_hub_dataset(tmp_path, hub_folder):
    with pytest.raises(UsageError, match="split 'validation'"):
        load("local", path=write(tmp_path, "jsonl"), question="q", split="validation")
    with pytest.raises(UsageError, match="could not load dataset 'no-such-org/no-such-dataset'.*HF_HUB_OFFLINE"):
        load("hub", name="no-such-org/no-such-dataset")
    with pytest.raises(UsageError, match="config 'nope'"):
        load("hub", name=hub_folder, config="nope", question="q")
    with pytest.raises(UsageError, match="needs a dataset id"):
        load("hub")


def test_chat_prompt_keeps_the_order_system_examples_question():
    messages = chat_prompt([{"role": "user", "content": "Q"}], "S", [("q1", "a1")])
    assert messages == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "Q"},
    ]


@pytest.mark.parametrize("value, text", [(42, "42"), (None, ""), ("plain", "plain")])
def test_chat_prompt_turns_any_cell_into_a_user_message(value, text):
    assert chat_prompt(value) == [{"role": "user", "content": text}]
