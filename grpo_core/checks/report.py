"""The report as text: the table of property x reward, the failures with their counterexamples, what was not
checked."""

from __future__ import annotations

import io

from grpo_core.checks.catalogue import REGISTRY
from grpo_core.checks.display import show
from grpo_core.checks.results import FAIL, PASS, SKIP, WARN, CheckReport, PropertyResult, not_checked


def _cell(results: list[PropertyResult]) -> tuple[str, str]:
    if not results:
        return "", ""
    failed = [r for r in results if r.status == FAIL]
    passed = [r for r in results if r.status == PASS]
    several = len(results) > 1
    if failed:
        return ("FAIL" + (f" {len(failed)}/{len(results)}" if several else "")), "bold red"
    if any(r.status == WARN for r in results):
        return "warn", "yellow"
    if passed:
        return ("pass" + (f" {len(passed)}/{len(results)}" if several else "")), "green"
    return "skip", "dim"


def preflight_summary(report: CheckReport, row_count: int) -> list[str]:
    """What preflight prints when no property failed: on how many rows, what the rewards do not declare and so
    was not checked (with how to declare it), and the problems found in the dataset's rows (warnings: the run
    goes on). Properties its time budget cut short are left to the full report, as they vary from run to run."""
    unchecked = [line for line in report.unchecked() if "time budget" not in line]
    names = ", ".join(report.rewards)
    lines = [f"preflight: {names}: no property failed on {row_count} dataset row{'s' * (row_count != 1)} (a quick check: "
             f"grpo-run check runs the full suite)" + ("; not checked or only in part:" if unchecked else "")]
    lines += [f"preflight:   {line}" for line in unchecked]
    lines += [f"preflight: warning: {line}" for line in report.warnings()]
    return lines


def format_report(report: CheckReport, color: bool = False, width: int | None = None) -> str:
    """The report as text: a table of property x reward, then each failure with its counterexample."""
    rewards = report.rewards
    found = list(dict.fromkeys(REGISTRY.family(r.property) for r in report.results))
    families = [family for family in REGISTRY if family in found] + [p for p in found if p not in REGISTRY]
    cells = {
        (family, reward): _cell([r for r in report.results if r.reward == reward and REGISTRY.family(r.property) == family])
        for family in families for reward in rewards
    }
    failures = report.failures
    counts = {status: sum(r.status == status for r in report.results) for status in (PASS, FAIL, SKIP, WARN)}
    warned = f", {counts[WARN]} with warnings" if counts[WARN] else ""
    partly = sum(r.status == PASS and bool(not_checked(r)) for r in report.results)
    warned = (f", {partly} checked only in part" if partly else "") + warned
    summary = (f"{counts[FAIL]} failed, {counts[PASS]} passed, {counts[SKIP]} not checked{warned} in "
               f"{report.seconds:.1f} s (seed {report.seed}; repeat with --seed {report.seed})")
    details = []
    for r in failures:
        lines = [f"{r.reward} / {r.property}", f"  {r.message}"]
        if r.counterexample:
            lines.append("  counterexample:")
            for key, value in r.counterexample.items():
                if key != "full completions":  # --json holds them; the table shows the cut ones above
                    lines.append(f"    {key}: {show(value)}")
        details.append("\n".join(lines))
    if report.warnings():
        details.append("warnings:\n" + "\n".join(f"  {line}" for line in report.warnings()))
    if report.unchecked():
        details.append("not checked, or checked only in part:\n" + "\n".join(f"  {line}" for line in report.unchecked()))
    notes = [f"{r.reward} / {r.property}: {r.status}, {r.message}" for r in report.results
             if r.status == PASS and r.message and not not_checked(r)]
    if notes:
        details.append("notes:\n" + "\n".join(f"  {note}" for note in notes))
    from rich.console import Console  # a dependency, imported here so listing commands stay fast
    from rich.table import Table
    from rich.text import Text

    out = io.StringIO()
    console = Console(file=out, force_terminal=color, no_color=not color, width=width or 100,
                      color_system="standard" if color else None, highlight=False, soft_wrap=False)
    table = Table(title=_title(report, rewards), title_justify="left")
    table.add_column("property")
    for reward in rewards:
        table.add_column(reward, justify="center")
    for family in families:
        table.add_row(family, *(Text(cells[family, reward][0], style=cells[family, reward][1]) for reward in rewards))
    console.print(table)
    for text in details:
        console.print(Text(text, style=None), soft_wrap=True)
        console.print()
    console.print(Text(summary, style="bold red" if failures else "bold green"))
    return out.getvalue()


def _title(report, columns: list[str]) -> str:
    """What the table checks: rewards, environments (a column with an episode property), or both."""
    episodes = {r.reward for r in report.results if r.property == "reset isolation"}
    kinds = [kind for kind, present in (("reward", any(c not in episodes for c in columns)),
                                        ("environment", any(c in episodes for c in columns))) if present]
    return f"{' and '.join(kinds) or 'reward'} property checks"
