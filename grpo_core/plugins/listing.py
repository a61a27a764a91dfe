"""Rows for ``grpo-run rewards|datasets|environments|profiles|models``: plain data, printed as a table or JSON."""

from __future__ import annotations

import re

from grpo_core.plugins import get_registry


def rows(kind: str) -> list[dict]:
    registry = get_registry()
    specs = [registry.items[kind][name] for name in sorted(registry.items[kind])]
    return [_ROWS[kind](spec) for spec in specs]


def named_rewards(names: list[str]) -> list[dict]:
    """The rows of the rewards ``names`` select (installed, ``FILE.py:FUNCTION`` or ``module:FUNCTION``), each with
    the signature it was read as: "verifiers rubric", "TRL keyword", ... for one named by path, "RewardSpec" for one
    registered."""
    registry = get_registry()
    found = [registry.reward(name) for name in names]
    return [{"name": spec.name, "signature": getattr(spec, "read_as", "") or "RewardSpec", **_reward(spec)}
            for spec in found]


def _params(spec) -> list[str]:
    return [param.describe() for param in spec.params]


def _reward(spec) -> dict:
    params = {p.name: p.default for p in spec.params}
    columns = spec.columns(params) if callable(spec.columns) else spec.columns
    return {
        "name": spec.name,
        "description": spec.description,
        "bounds": list(spec.bounds),
        "columns": list(columns),
        "parameters": _params(spec),
        "weight": spec.weight,
        "distribution": spec.distribution,
    }


def _dataset(spec) -> dict:
    return {
        "name": spec.name,
        "description": spec.description,
        "columns": list(spec.columns),
        "parameters": _params(spec),
        "distribution": spec.distribution,
    }


def _environment(spec) -> dict:
    return {
        "name": spec.name,
        "description": spec.description,
        "tools": spec.tool_names(),
        "reward": list(spec.bounds) if callable(getattr(spec.environment_class, "get_reward", None)) else "-",
        "columns": list(spec.columns),
        "parameters": _params(spec),
        "distribution": spec.distribution,
    }


def _profile(spec) -> dict:
    return {
        "name": spec.name,
        "description": spec.description,
        "lora": bool(spec.lora),
        "launcher": bool(spec.launcher),
        "distribution": spec.distribution,
    }


def _model(spec) -> dict:
    return {
        "name": spec.name,
        "description": spec.description,
        "offline": bool(spec.available()),
        "distribution": spec.distribution,
    }


_ROWS = {"rewards": _reward, "datasets": _dataset, "environments": _environment, "profiles": _profile,
         "models": _model}


def cell(value) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value)) if value and not isinstance(value[0], float) else str(tuple(value)) if value else "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


# The listings' tables as rich prints them (Table(box=None, pad_edge=False, show_edge=False), every column
# overflow="fold", one space of padding each side of the gap between columns), drawn without importing rich: off a
# terminal as plain text, and at a terminal with the header bold, as rich writes it (each piece of a header cell, its
# padding and its text, in its own bold escape). Only plain printable ASCII is drawn here: text rich would read as
# markup ("[") or an emoji code (":name:") is left to rich. tests/test_listing_table.py holds it to rich's own output.
_PLAIN = re.compile(r"[ -~]*")
_EMOJI_CODE = re.compile(r":\S*:")
_WORD = re.compile(r"\s*\S+\s*")
_BOLD, _RESET = "\x1b[1m", "\x1b[0m"


def plain_table(columns: list[str], rows: list[list[str]], width: int, bold_header: bool = False) -> str | None:
    """The table as rich draws it ``width`` columns wide off a terminal (at a terminal with ``bold_header``), or None
    where only rich can draw it."""
    table = [list(columns), *map(list, rows)]
    if any(len(row) != len(columns) for row in table) or not columns or width < 1:
        return None
    if any(not _PLAIN.fullmatch(text) or "[" in text or _EMOJI_CODE.search(text) for row in table for text in row):
        return None
    pads = [(0 if index == 0 else 1, 0 if index == len(columns) - 1 else 1) for index in range(len(columns))]
    cells = [[row[index] for row in table] for index in range(len(columns))]
    widths = [_measure_column(column, sum(pad), width)[1] or 1 for column, pad in zip(cells, pads)]
    if sum(widths) > width:
        widths = _collapse(widths, width)
        if sum(widths) > width:
            widths = _ratio_reduce(sum(widths) - width, [1] * len(widths), widths, widths)
        widths = [_measure_column(column, sum(pad), w)[1] for column, pad, w in zip(cells, pads, widths)]
    if any(w < sum(pad) + 1 for w, pad in zip(widths, pads)):
        return None
    if bold_header and sum(widths) > width:
        return None  # rich would crop the header's escapes with its text
    lines = []
    for index, row in enumerate(table):
        bold = bold_header and index == 0
        rendered = [_render_cell(text, w, pad, bold) for text, w, pad in zip(row, widths, pads)]
        height = max(len(cell) for cell in rendered)
        for cell, w in zip(rendered, widths):
            blank = [_styled(" " * w, bold)] * (height - len(cell))
            cell[:] = blank + cell if index == 0 else cell + blank  # the header sits at the bottom of its row
        lines.extend("".join(parts) if bold else "".join(parts)[:width] for parts in zip(*rendered))
    return "".join(line + "\n" for line in lines)


def _styled(text: str, bold: bool) -> str:
    return f"{_BOLD}{text}{_RESET}" if bold and text else text


def _normalize(low: int, high: int) -> tuple[int, int]:
    low = min(max(0, low), high)
    return max(0, low), max(0, max(low, high))


def _measure_text(text: str, most: int) -> tuple[int, int]:
    words = text.split()
    low, high = _normalize(max(map(len, words)) if words else len(text), len(text))
    low, high = min(low, most), min(high, most)
    return (0, 0) if high < 1 else _normalize(low, high)


def _measure_cell(text: str, extra: int, most: int) -> tuple[int, int]:
    if most < 1:
        return 0, 0
    if most - extra < 1:
        low, high = most, most
    else:
        low, high = _measure_text(text, most)
        low, high = min(low + extra, most), min(high + extra, most)
    low, high = _normalize(low, high)
    low, high = min(low, most), min(high, most)
    return (0, 0) if high < 1 else _normalize(low, high)


def _measure_column(column: list[str], extra: int, most: int) -> tuple[int, int]:
    if most < 1:
        return 0, 0
    sizes = [_measure_cell(text, extra, most) for text in column]
    return min(max(low for low, _ in sizes), most), min(max(high for _, high in sizes), most)


def _collapse(widths: list[int], most: int) -> list[int]:
    total = sum(widths)
    excess = total - most
    while total and excess > 0:
        widest = max(widths)
        second = max(w if w != widest else 0 for w in widths)
        ratios = [1 if w == widest else 0 for w in widths]
        if not widest - second:
            break
        widths = _ratio_reduce(excess, ratios, [min(excess, widest - second)] * len(widths), widths)
        total = sum(widths)
        excess = total - most
    return widths


def _ratio_reduce(total: int, ratios: list[int], maximums: list[int], values: list[int]) -> list[int]:
    ratios = [ratio if most else 0 for ratio, most in zip(ratios, maximums)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return values[:]
    result = []
    for ratio, most, value in zip(ratios, maximums, values):
        if ratio and total_ratio > 0:
            distributed = min(most, round(ratio * total / total_ratio))
            result.append(value - distributed)
            total -= distributed
            total_ratio -= ratio
        else:
            result.append(value)
    return result


def _render_cell(text: str, width: int, pad: tuple[int, int], bold: bool = False) -> list[str]:
    left, right = pad
    inner = min(_measure_text(text, width)[1] + left + right, width) - left - right
    if bold:
        return [_styled(" " * left, bold) + _styled(line.ljust(width - left - right), bold) + _styled(" " * right, bold)
                for line in _wrap(text, inner)]
    return [(" " * left + line + " " * right).ljust(width)[:width] for line in _wrap(text, inner)]


def _wrap(text: str, width: int) -> list[str]:
    """rich's word wrap with overflow="fold": a word wider than the line is cut across lines."""
    breaks, offset, position = [], 0, 0
    while match := _WORD.match(text, position):
        start, position = match.span()
        word = match.group()
        size = len(word.rstrip())
        if width - offset >= size:
            offset += len(word)
        elif size > width:
            pieces = [word[index:index + width] for index in range(0, len(word), width)]
            for number, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if number == len(pieces) - 1:
                    offset = len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    lines = []
    for start, end in zip([0, *breaks], [*breaks, len(text)]):
        line = text[start:end]
        if len(line) > width:
            whitespace = len(line) - len(line.rstrip())
            line = line[:len(line) - min(whitespace, len(line) - width)]
        lines.append(line[:width].ljust(width))
    return lines
