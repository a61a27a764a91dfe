"""The listings' tables off a terminal are drawn without rich, exactly as rich draws them: the same text for random
tables at any width, for every installed listing, and rich itself for what only rich can draw."""

import io
import random
import string

import pytest
from cli_helpers import invoke

from grpo_core import RewardSpec, hookimpl
from grpo_core import cli as cli_module
from grpo_core.plugins import get_registry, registered
from grpo_core.plugins.listing import plain_table


def rich_table(columns, rows, width):
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    out = io.StringIO()
    Console(file=out, soft_wrap=False, width=width).print(table)
    return out.getvalue()


def random_text(rng):
    alphabet = string.ascii_letters + string.digits + ",.;()=|-_/'\"" + " " * 12
    return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 2, 3, 5, 8, 13, 21, 40, 90])))


@pytest.mark.parametrize("seed", range(6))
def test_random_tables_are_drawn_as_rich_draws_them(seed):
    rng, drawn = random.Random(seed), 0
    for _ in range(150):
        count = rng.randint(1, 8)
        columns = [random_text(rng) or "name" for _ in range(count)]
        rows = [[random_text(rng) for _ in range(count)] for _ in range(rng.randint(0, 6))]
        width = rng.choice([3, 10, 25, 40, 60, 80, 100, 120, 200])
        text = plain_table(columns, rows, width)
        if text is not None:
            drawn += 1
            assert text == rich_table(columns, rows, width), (columns, rows, width)
    assert drawn > 75


@pytest.mark.parametrize("cell", ["[bold]x[/bold]", "a [b] c", ":thumbs_up:", "x:y:", "café", "tab\there", "two\nlines",
                                  "\x1b[1mx"])
def test_what_only_rich_can_draw_is_left_to_it(cell):
    assert plain_table(["name", "description"], [["a", cell]], 100) is None
    assert plain_table(["name", "description"], [["a", "plain: words"]], 100) is not None
    assert plain_table(["a", "b"], [["only one"]], 100) is None


@pytest.mark.parametrize("kind", ["plugins", "rewards", "datasets", "environments", "profiles", "models"])
@pytest.mark.parametrize("columns", ["100", "157"])
def test_every_listing_prints_as_rich_prints_it(kind, columns, monkeypatch):
    get_registry()  # a broken plugin's warning, where one is installed, is printed here rather than in one output
    monkeypatch.setenv("COLUMNS", columns)
    drawn = []
    monkeypatch.setattr(cli_module.listing, "plain_table", lambda *args: drawn.append(1) or plain_table(*args))
    status, plain = invoke(kind)
    assert status == 0 and drawn
    monkeypatch.setattr(cli_module, "_plain_output", lambda: False)
    assert invoke(kind) == (0, plain)


class MarkupReward:
    @hookimpl
    def register_rewards(self, register):
        register(RewardSpec(name="marked", description="[bold]loud[/bold] :thumbs_up: reward", func=lambda c: 1.0))


def test_a_description_with_markup_is_printed_by_rich(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    with registered(MarkupReward()):
        status, output = invoke("rewards")
    line = next(line for line in output.splitlines() if line.startswith("marked"))
    assert status == 0 and "loud" in line and "[bold]" not in line and ":thumbs_up:" not in line


@pytest.mark.parametrize("variable", ["FORCE_COLOR", "TTY_COMPATIBLE"])
def test_output_rich_would_style_is_left_to_rich(variable, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert cli_module._plain_output()
    monkeypatch.setenv(variable, "1")
    assert not cli_module._plain_output()
