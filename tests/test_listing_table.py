"""The listings' tables are drawn without rich, exactly as rich draws them, off a terminal and at one (its header
bold): the same text for random tables at any width, for every installed listing, and rich itself for what only rich
can draw."""

import io
import random
import string

import pytest
from cli_helpers import invoke

from grpo_core import RewardSpec, hookimpl
from grpo_core import cli as cli_module
from grpo_core.plugins import get_registry, registered
from grpo_core.plugins.listing import plain_table


def rich_table(columns, rows, width, terminal=False):
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    out = io.StringIO()
    environ = {"TERM": "xterm-256color"} if terminal else {}
    Console(file=out, soft_wrap=False, width=width, force_terminal=terminal or None, _environ=environ).print(table)
    return out.getvalue()


def random_text(rng):
    alphabet = string.ascii_letters + string.digits + ",.;()=|-_/'\"" + " " * 12
    return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 2, 3, 5, 8, 13, 21, 40, 90])))


@pytest.mark.parametrize("terminal", [False, True], ids=["plain", "terminal"])
@pytest.mark.parametrize("seed", range(6))
def test_random_tables_are_drawn_as_rich_draws_them(seed, terminal):
    rng, drawn = random.Random(seed), 0
    for _ in range(150):
        count = rng.randint(1, 8)
        columns = [random_text(rng) or "name" for _ in range(count)]
        rows = [[random_text(rng) for _ in range(count)] for _ in range(rng.randint(0, 6))]
        width = rng.choice([3, 10, 25, 40, 60, 80, 100, 120, 200])
        text = plain_table(columns, rows, width, bold_header=terminal)
        if text is not None:
            drawn += 1
            assert text == rich_table(columns, rows, width, terminal), (columns, rows, width)
    assert drawn > 75


@pytest.mark.parametrize("cell", ["[bold]x[/bold]", "a [b] c", ":thumbs_up:", "x:y:", "café", "tab\there", "two\nlines",
                                  "\x1b[1mx"])
def test_what_only_rich_can_draw_is_left_to_it(cell):
    assert plain_table(["name", "description"], [["a", cell]], 100) is None
    assert plain_table(["name", "description"], [["a", "plain: words"]], 100) is not None
    assert plain_table(["a", "b"], [["only one"]], 100) is None


@pytest.mark.parametrize("terminal", [False, True], ids=["plain", "terminal"])
@pytest.mark.parametrize("kind", ["plugins", "rewards", "datasets", "environments", "profiles", "models"])
@pytest.mark.parametrize("columns", ["100", "157"])
def test_every_listing_prints_as_rich_prints_it(kind, columns, terminal, monkeypatch):
    get_registry()  # a broken plugin's warning, where one is installed, is printed here rather than in one output
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    drawn = []
    monkeypatch.setattr(cli_module.listing, "plain_table",
                        lambda *args, **kw: drawn.append(1) or plain_table(*args, **kw))
    monkeypatch.setattr(cli_module, "_output_kind", lambda: "terminal" if terminal else "plain")
    status, ours = invoke(kind)
    assert status == 0 and drawn
    assert ("\x1b[1m" in ours) == terminal
    monkeypatch.setattr(cli_module, "_output_kind", lambda: None)
    if terminal:
        monkeypatch.setenv("FORCE_COLOR", "1")  # rich's own styles, into the test's captured output
    assert invoke(kind) == (0, ours)


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


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("variable", ["FORCE_COLOR", "TTY_COMPATIBLE"])
def test_output_rich_would_style_is_left_to_rich(variable, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert cli_module._output_kind() == "plain"
    monkeypatch.setenv(variable, "1")
    assert cli_module._output_kind() is None


@pytest.mark.parametrize("term, kind", [("xterm-256color", "terminal"), ("", "terminal"), ("dumb", "plain"),
                                        ("unknown", "plain")])
def test_a_terminal_gets_the_bold_header_and_a_dumb_one_plain_text(term, kind, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setenv("TERM", term)
    monkeypatch.setattr("sys.stdout", Terminal())
    assert cli_module._output_kind() == kind
    monkeypatch.setattr(cli_module.os, "name", "nt")  # Windows' console styles are rich's to write
    assert cli_module._output_kind() == (None if kind == "terminal" else kind)
