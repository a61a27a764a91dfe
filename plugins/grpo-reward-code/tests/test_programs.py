"""Reading the program out of a completion and the tests out of a row."""

import json

from grpo_reward_code.programs import extract_program, plan_assert, read_tests, same_output, same_value


def test_the_last_python_block_is_the_program():
    text = "First try:\n```python\nx = 1\n```\nBetter:\n```py\nx = 2\n```\nAnd a shell line:\n```bash\nls\n```\n"
    assert extract_program(text) == "x = 2\n"
    assert extract_program(text, language="bash") == "ls\n"
    assert extract_program(text, language="") == "ls\n"


def test_no_block_means_no_program():
    assert extract_program("def f(): return 1") is None
    assert extract_program("```python\n   \n```") is None
    assert extract_program("```python\nunclosed") is None


def test_a_tag_narrows_the_search():
    text = "```python\nwrong = 1\n```\n<code>\n```python\nright = 1\n```\n</code>"
    assert extract_program(text, tag="code") == "right = 1\n"
    assert extract_program("<code>print(3)</code>", tag="code") == "print(3)"
    assert extract_program("```python\nx = 1\n```", tag="code") is None


def test_tests_as_asserts_io_pairs_or_json_text():
    asserts = ["assert f(1) == 2", "assert g(3)"]
    parsed = read_tests(asserts)
    assert parsed.mode == "assert" and parsed.expected == ((2,), None)
    assert read_tests(json.dumps(asserts)) == parsed
    pairs = [{"input": "1 2\n", "output": "3"}]
    assert read_tests(pairs).mode == "io" and read_tests(json.dumps(pairs)).expected == ("3",)
    assert read_tests(None) is None and read_tests([]) is None and read_tests("not json") is None
    assert read_tests(["assert (("]) is None
    assert read_tests([1, 2]) is None


def test_value_tests_keep_the_expected_value_out_of_the_sandbox():
    test, expected = plan_assert("assert add(1, 2) == [3, 'x']")
    assert test == {"kind": "value", "setup": "", "expression": "add(1, 2)"} and expected == ([3, "x"],)
    test, expected = plan_assert("import math\nassert 4 == f(2)")
    assert test["setup"] == "import math" and test["expression"] == "f(2)" and expected == (4,)
    test, expected = plan_assert("assert abs(f(1) - 0.5) < 1e-6")
    assert test["kind"] == "assert" and expected is None
    assert "< 1e-6" in test["statement"]


def test_values_and_outputs_compared():
    assert same_value("[3, 'x']", [3, "x"]) and not same_value("[3]", [3, "x"])
    assert not same_value("<object at 0x1>", 1) and not same_value("__import__('os')", 0)
    assert same_output("1\n2   \n\n", "1\n2") and not same_output("1 2", "1\n2")
