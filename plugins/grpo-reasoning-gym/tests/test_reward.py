"""The reasoning-gym reward: strict and graded scores, exact numbers, answer extraction, property checks."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grpo_core import load_rewards
from grpo_core.testing import check_reward

from grpo_reasoning_gym import SPEC, reasoning_gym_reward
from grpo_reasoning_gym.dataset import generate_rows
from grpo_reasoning_gym.reward import checker


def row(task, index=0, seed=0):
    generated = generate_rows(task, index + 1, seed)[index]
    return {"answer": generated["answer"], "task": task, "entry": generated["entry"]}


def score(text, columns, **params):
    return reasoning_gym_reward(text, **columns, **params)


def test_a_negated_number_is_wrong_though_the_checker_accepts_it():
    columns = row("gsm_symbolic")
    gold = columns["answer"]
    assert int(gold) > 0
    wrong = f"-{gold}"
    from grpo_reasoning_gym.entries import load_entry

    assert checker("gsm_symbolic")(wrong, load_entry(columns["entry"])) == 1.0  # the checker's own verdict
    assert score(f"<answer>{wrong}</answer>", columns) == 0.0
    assert score(f"<answer>{wrong}</answer>", columns, strict=False) == 1.0  # graded trusts the checker


def test_a_grouped_number_equals_the_plain_gold():
    columns = next(c for c in (row("products", i) for i in range(20)) if int(c["answer"]) >= 1000)
    grouped = f"{int(columns['answer']):,}"
    assert "," in grouped
    assert score(f"<answer>{grouped}</answer>", columns) == 1.0
    assert score(f"<answer>{int(columns['answer']) + 1:,}</answer>", columns) == 0.0


def test_the_issue_cases_for_the_number_comparison():
    entry_70 = {**row("gsm_symbolic"), "answer": "70"}
    assert score("<answer>-70</answer>", entry_70) == 0.0
    assert score("<answer>70</answer>", entry_70) == 1.0
    entry_2744 = {**row("products"), "answer": "2744"}
    assert score("<answer>2,744</answer>", entry_2744) == 1.0


def test_graded_pays_partial_credit_for_a_wrong_answer_where_strict_pays_nothing():
    columns = row("power_function")
    assert score("<answer>12345</answer>", columns) == 0.0
    graded = score("<answer>12345</answer>", columns, strict=False)
    assert 0.0 < graded < 1.0


def test_a_checker_task_scores_its_gold_and_rejects_another_answer():
    columns = row("spell_backward")
    assert score(f"<answer>{columns['answer']}</answer>", columns) == 1.0
    assert score(f"<answer>{columns['answer']}x</answer>", columns) == 0.0


def test_extraction_tag_chat_and_whole():
    columns = row("chain_sum")
    right = f"Adding up.\n<answer> {columns['answer']} </answer>"
    assert score(right, columns) == 1.0
    assert score([{"role": "assistant", "content": right}], columns) == 1.0
    assert score(columns["answer"], columns) == 0.0  # no tag
    assert score(columns["answer"], columns, extract="whole") == 1.0
    assert score(f"<final>{columns['answer']}</final>", columns, tag="final") == 1.0


def test_unjudgeable_rows_give_none():
    columns = row("word_sorting")
    assert score("<answer>1</answer>", {**columns, "entry": "not json"}) is None
    assert score("<answer>1</answer>", {**columns, "task": "no_such_task"}) is None
    assert score("<answer>1</answer>", {**row("chain_sum"), "task": "no_such_task"}) is None


def test_a_number_row_is_judged_from_its_answer_without_its_entry():
    columns = {**row("chain_sum"), "entry": "not json"}
    assert score(f"<answer>{columns['answer']}</answer>", columns) == 1.0
    assert score("<answer>nope</answer>", columns) == 0.0
    assert score("<answer>nope</answer>", columns, strict=False) == 0.0  # graded: no number, no checker to ask
    assert score("<answer>12</answer>", columns, strict=False) is None  # a wrong number: the checker needs the entry


def test_where_each_task_s_checker_runs():
    from grpo_reasoning_gym.reward import judged_in_process

    assert judged_in_process("spell_backward") is True  # reviewed: linear in the answer
    assert judged_in_process("caesar_cipher") is True  # reasoning-gym's default exact match
    assert judged_in_process("polynomial_multiplication") is False  # sympy: in a worker, under the time limit
    assert judged_in_process("no_such_task") is None


def test_a_hanging_checker_is_cut_off_and_the_rest_of_the_batch_is_scored():
    import time

    timeout = 2.0
    (reward,) = load_rewards(["reasoning-gym"], {"reasoning-gym": {"timeout": timeout}})
    poly, chain = row("polynomial_multiplication"), row("chain_sum")
    # sympy evaluates 9**9**9**9 while reading it, which never ends.
    completions = [f"<answer>{poly['answer']}</answer>", "<answer>9**9**9**9</answer>", "<answer>y**2</answer>",
                   f"<answer>{chain['answer']}</answer>", "<answer>nope</answer>"]
    rows = [poly, poly, poly, chain, chain]
    metrics = {}
    start = time.monotonic()
    scores = reward.score(prompts=[""] * 5, completions=completions, log_metric=metrics.__setitem__,
                    **{k: [r[k] for r in rows] for k in ("answer", "task", "entry")})
    elapsed = time.monotonic() - start
    assert scores == [1.0, 0.0, 0.0, 1.0, 0.0]
    assert metrics["rewards/reasoning-gym/timeouts"] == 1.0
    # The cut-off chunk (timeout) and the hanging item alone (timeout), plus starting workers that import sympy.
    assert elapsed < 2 * timeout + 60, elapsed
    again = reward.score(prompts=[""] * 2, completions=completions[:1] + completions[2:3],
                   **{k: [r[k] for r in rows[:2]] for k in ("answer", "task", "entry")})
    assert again == [1.0, 0.0]  # the replaced workers score the next batch


def test_a_group_shares_its_verdicts_and_unscorable_rows_are_counted():
    from grpo_core import Unscored

    from grpo_reasoning_gym import reasoning_gym_rewards

    columns = row("word_sorting")
    right, wrong = f"<answer>{columns['answer']}</answer>", "<answer>zebra, apple</answer>"
    n = 6
    scores = reasoning_gym_rewards([right, wrong, right, wrong, right, "no tag"], [columns["answer"]] * n,
                                   [columns["task"]] * n, [columns["entry"]] * n)
    assert scores == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    (unknown,) = reasoning_gym_rewards([right], [columns["answer"]], ["no_such_task"], [columns["entry"]])
    assert isinstance(unknown, Unscored) and unknown.reason == "unscorable"


ALPHABET = ["<answer>", "</answer>", "<ANSWER >", "</Answer\n>", "<answer", "</", "<", ">", "5", " ", "x"]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(ALPHABET), max_size=8))
def test_the_fast_extraction_reads_what_answer_tag_reads(parts):
    from grpo_core import answer_tag

    text = "".join(parts)
    span = answer_tag(text)
    expected = 1.0 if span is not None and span.strip() == "5" else 0.0
    columns = {**row("chain_sum"), "answer": "5"}
    assert score(text, columns) == expected, text


def test_through_the_adapter_in_worker_processes():
    (reward,) = load_rewards(["reasoning-gym"])
    columns = [row("chain_sum", i) for i in range(3)]
    completions = [f"<answer>{c['answer']}</answer>" for c in columns[:2]] + ["<answer>nope</answer>"]
    scores = reward.score(prompts=[""] * 3, completions=completions, **{k: [c[k] for c in columns] for k in columns[0]})
    assert scores == [1.0, 1.0, 0.0]


@pytest.mark.parametrize("task", ["chain_sum", "leg_counting", "word_sorting", "coin_flip"])
def test_property_checks_pass_on_a_task_s_rows(task):
    rows = [row(task, i) for i in range(4)]
    check_reward(SPEC, max_examples=10, seed=0, rows=rows, vary_params=False)


def test_degenerate_completions_score_nothing():
    for task in ("chain_sum", "spell_backward", "word_sorting"):
        columns = row(task)
        for label, completion in SPEC.checks.degenerate("", columns, {}) if SPEC.checks.degenerate else []:
            assert score(completion, columns) == 0.0, (task, label)


def test_the_plain_integer_comparison_gives_the_careful_comparison_s_verdicts():
    from grpo_core import parse_number, same_number

    from grpo_reasoning_gym import reasoning_gym_rewards
    from grpo_reasoning_gym.reward import MAX_NUMBER_CHARS, plain_integer

    too_long = "0" * MAX_NUMBER_CHARS + "7"  # 7, in more characters than a number answer is read in
    golds = ["7", "007", "-7", "0", "-0", "5", "3", "٣", "70", "1000", "2744", too_long, "9" * 5000]
    answers = golds + ["+5", "+7", "-007", "- 7", "--7", "7-", "-", "²", "٧", "３", "7 0", "7\n0", "1 000", "7_0",
                       "2,744", "7.0", "7e0", "0" * (MAX_NUMBER_CHARS - 1) + "7", "9" * MAX_NUMBER_CHARS]
    for answer in ("٣", "²", "٧", "３", "+5", "7 0", "7_0", " 7", too_long, "9" * 5000):
        assert plain_integer(answer) is None, answer
    columns = row("chain_sum")
    completions = [f"<answer>{answer}</answer>" for answer in answers]
    for gold in golds:
        n = len(answers)
        scores = reasoning_gym_rewards(completions, [gold] * n, ["chain_sum"] * n, [columns["entry"]] * n)
        for answer, got in zip(answers, scores):
            # The careful path: the answer as written, else both read by parse_number and compared exactly.
            value = parse_number(answer) if len(answer) <= MAX_NUMBER_CHARS else None
            right = answer == gold or value is not None and same_number(parse_number(gold), value)
            assert got == (1.0 if right else 0.0), (gold, answer, got)


def test_game_of_life_halting_pays_only_the_expected_value():
    for index in range(4):
        columns = row("game_of_life_halting", index)
        gold = columns["answer"]
        other = "False" if gold == "True" else "True"
        question = generate_rows("game_of_life_halting", index + 1, 0, chat=False, system_prompt=None)[index]["prompt"]
        for wrong in ("x", other, other.lower(), "yes", "no", "1", "0", question, gold + " zzz"):
            assert score(f"<answer>{wrong}</answer>", columns) == 0.0, wrong
            assert score(f"<answer>{wrong}</answer>", columns, strict=False) == 0.0, wrong
        for right in (gold, gold.lower(), f" {gold}. "):
            assert score(f"<answer>{right}</answer>", columns) == 1.0, right


@pytest.mark.parametrize("words", range(1, 13))
def test_letter_jumble_extra_words_lower_the_share(words):
    gold = " ".join(f"w{i}" for i in range(words))
    columns = {**row("letter_jumble"), "answer": gold}
    assert score(f"<answer>{gold.upper()}</answer>", columns) == 1.0
    assert score(f"<answer>{gold} zzz</answer>", columns) == 0.0
    assert score(f"<answer>{gold} zzz</answer>", columns, strict=False) == words / (words + 1)
    assert score(f"<answer>{gold}</answer>", columns, strict=False) == 1.0


def test_spell_backward_pays_no_letter_after_the_word():
    columns = {**row("spell_backward"), "answer": "suolunips"}
    for wrong in ("suolunips0", "suolunips zzz", "suolunipsuolunips"):
        assert score(f"<answer>{wrong}</answer>", columns) == 0.0, wrong
        assert score(f"<answer>{wrong}</answer>", columns, strict=False) < 1.0, wrong
    assert score("<answer>SUOLUNIPS.</answer>", columns) == 1.0


@pytest.mark.parametrize("task", ["survo", "kakurasu", "sokoban", "knights_knaves", "quantum_lock",
                                  "fraction_simplification", "time_intervals"])
def test_a_checker_that_skips_text_pays_only_an_answer_in_the_task_s_form(task):
    # time_intervals' checker reads only the first word of a "28 days" answer
    generated = next(r for r in generate_rows(task, 30, 0) if task != "time_intervals" or r["answer"].endswith("days"))
    columns = {key: generated[key] for key in ("answer", "task", "entry")}
    gold = columns["answer"].strip()
    assert score(f"<answer>{gold}</answer>", columns) == 1.0
    for padding in (" zzz", " and more words", "\nzzz 1", " ok"):
        assert score(f"<answer>{gold}{padding}</answer>", columns) == 0.0, padding
        assert score(f"<answer>{gold}{padding}</answer>", columns, strict=False) == 0.0, padding


def test_the_forms_take_other_spellings_the_checkers_pay():
    survo = row("survo")
    assert score(f"<answer>{survo['answer'].replace(' ', '  ')}\n</answer>", survo) == 1.0
    knights = row("knights_knaves")
    first, second = knights["answer"].rstrip(".").split(", and ")
    assert score(f"<answer>{second.lower()} and {first}</answer>", knights) == 1.0
    lock = row("quantum_lock")
    assert score(f"<answer>{' -> '.join(lock['answer'].split(' → '))}</answer>", lock) == 1.0
    sokoban = row("sokoban")
    assert score(f"<answer>{' '.join(sokoban['answer'])}.</answer>", sokoban) == 1.0


def test_the_forms_are_fast_on_hostile_text():
    import time

    from grpo_reasoning_gym.rules import ANSWER_FORMS

    for hostile in ("Ann is a knight, " * 6000 + "!", "A -> " * 20000 + "!", "1 " * 50000 + "!",
                    "1" + " " * 100_000 + "!", "$" * 100_000 + "!", "1:" * 50000 + "!"):
        for task, form in ANSWER_FORMS.items():
            start = time.perf_counter()
            assert form.fullmatch(hostile) is None
            assert time.perf_counter() - start < 0.5, task


def test_a_number_answer_takes_no_trailing_words_but_the_question_s_own_unit():
    columns = row("leg_counting")
    gold = columns["answer"]
    assert "legs" in generate_rows("leg_counting", 1, 0, chat=False, system_prompt=None)[0]["prompt"]
    for right in (gold, f"{gold} legs", f"{gold} legs.", f"${gold}$"):
        assert score(f"<answer>{right}</answer>", columns) == 1.0, right
    for wrong in (f"{gold} zzz", f"{gold} and more words", f"{gold} not", f"{gold} is wrong", f"{gold} legs zzz"):
        assert score(f"<answer>{wrong}</answer>", columns) == 0.0, wrong
    unreadable = {**columns, "entry": "not json"}  # no question to take a unit from: the bare number still pays
    assert score(f"<answer>{gold}</answer>", unreadable) == 1.0
    assert score(f"<answer>{gold} legs</answer>", unreadable) == 0.0


def test_graded_pays_nothing_for_a_spray_of_numbers_around_the_gold():
    columns = {**row("gsm_symbolic"), "answer": "30"}
    spray = " ".join(str(n) for n in range(-30, 91))
    assert score(f"<answer>{spray}</answer>", columns, strict=False) == 0.0
    assert score("<answer>30 zzz</answer>", columns, strict=False) == 0.0
    assert score("<answer>30</answer>", columns, strict=False) == 1.0
