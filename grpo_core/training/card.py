"""The run's model card (``README.md`` in its folder): what was trained, written from the run's own records.

TRL writes a generic card with each checkpoint (its quick start asks about a time machine, its training procedure is
empty). When a run finishes, and again after its comparison, the card is rewritten from ``run_config.yaml``,
``metrics.jsonl`` and the comparison: the command that reproduces the run, the rewards with their weights and
parameters, the dataset and its arguments, the environments, the steps, the held-out comparison and the reward
curve. TRL's front matter (which holds the marker that makes the card the run's, ``rundir.folder``), its framework
versions and its citations are kept.
"""

from __future__ import annotations

import re
from pathlib import Path

from grpo_core.rundir import outputs
from grpo_core.rundir.folder import write_atomic
from grpo_core.rundir.names import FINAL_DIR, METRICS_FILE, MODEL_CARD, MODEL_CARD_MARKER, PLOT_FILE, RUN_CONFIG
from grpo_core.rundir.record import base_model_words
from grpo_core.settings.layers import read_config_file, split_weight
from grpo_core.settings.syntax import spelled_name

# The GRPOConfig fields the card names under "Training", when the run set them.
TRAINING_FIELDS = ("max_steps", "num_train_epochs", "learning_rate", "lr_scheduler_type", "num_generations",
                   "per_device_train_batch_size", "gradient_accumulation_steps", "max_completion_length",
                   "temperature", "beta", "scale_rewards", "loss_type", "seed")
FRONT_MATTER = f"---\nlibrary_name: transformers\ntags:\n- {MODEL_CARD_MARKER}\n- grpo\n- grpo-run\n- trl\n---\n"
ROWS_BY_STEP = 10  # up to this many logged steps, the reward curve's table has a row a step; else a row a fifth


def write_model_card(output_dir: Path, comparison: dict | None = None) -> Path:
    """Write the card of the finished run in ``output_dir``, atomically. ``comparison``: ``heading`` (how and on what
    it scored, as the comparison printed it), ``results`` (``sample.score_models``' results: base, trained and, with a
    control, the control) and ``gains`` (the lines of the gain over the control), or None for a run without one."""
    output_dir = Path(output_dir)
    path = output_dir / MODEL_CARD
    trl_card = path.read_text(errors="replace") if path.is_file() else ""
    config = read_config_file(str(output_dir / RUN_CONFIG)) if (output_dir / RUN_CONFIG).is_file() else {}
    records = outputs.read_metrics(output_dir / METRICS_FILE)
    write_atomic(path, model_card(output_dir, config, records, comparison, trl_card))
    return path


def model_card(output_dir: Path, config: dict, records: list[dict], comparison: dict | None, trl_card: str) -> str:
    """The card's text (see ``write_model_card``); ``trl_card`` is the card TRL wrote, or the card written before."""
    sections = [_front_matter(trl_card), f"# {output_dir.name}\n", _summary(output_dir, config, records),
                _reproduce(output_dir), _rewards(config), _dataset(config), _environments(config),
                _training(config, records), _comparison(comparison), _curve(records, output_dir),
                *_kept(trl_card)]
    return "\n".join(section for section in sections if section)


def _front_matter(trl_card: str) -> str:
    match = re.match(r"---\n.*?\n---\n", trl_card, re.S)
    return match.group(0) if match and MODEL_CARD_MARKER in match.group(0) else FRONT_MATTER


def _summary(output_dir: Path, config: dict, records: list[dict]) -> str:
    steps = [r for r in records if "step" in r and "reward" in r]
    done = f" for {steps[-1]['step']} step{'s' if steps[-1]['step'] != 1 else ''}" if steps else ""
    lines = [f"{base_model_words(str(config.get('model')))} trained with GRPO (TRL's `GRPOTrainer`, through "
             f"grpo-run){done} on the `{spelled_name(str(config.get('dataset')))}` dataset. The trained model is in "
             f"`{FINAL_DIR}/` "
             f"(`{output_dir / FINAL_DIR}`), loadable with `from_pretrained`."]
    if config.get("control_of"):
        lines.append(f"\nThis is a control run (`{config.get('control')}`): it trained on scores cut loose from the "
                     f"completions they belong to, as a baseline for `{config['control_of']}`.")
    elif config.get("control"):
        lines.append(f"\nA control run (`{config['control']}`) trained beside it on scores cut loose from their "
                     "completions; the comparison shows base, trained and control.")
    return "\n".join(lines) + "\n"


def _reproduce(output_dir: Path) -> str:
    return (f"## Reproduce\n\n```bash\ngrpo-run --config {output_dir / RUN_CONFIG}\n```\n\n`{RUN_CONFIG}` is the "
            f"resolved run with absolute paths; add `--output-dir DIR` to train it into another folder.\n")


def _params(params: dict | None) -> str:
    return ", ".join(f"`{key}={value}`" for key, value in (params or {}).items()) or "-"


def _rewards(config: dict) -> str:
    lines = ["## Rewards\n", "| reward | weight | parameters |", "|---|---|---|"]
    schedules = config.get("reward_schedules") or {}
    for item in config.get("rewards") or []:
        source, weight = split_weight(str(item))
        name = spelled_name(source)
        shown = f"{weight or 1}" + (f", scheduled: `{schedules[name]}`" if name in schedules else "")
        lines.append(f"| `{name}` | {shown} | {_params((config.get('reward_args') or {}).get(name))} |")
    if len(lines) == 3:
        lines.append("| - | - | the environments' own rewards only |")
    return "\n".join(lines) + "\n"


def _dataset(config: dict) -> str:
    return f"## Dataset\n\n`{spelled_name(str(config.get('dataset')))}`: {_params(config.get('dataset_args'))}\n"


def _environments(config: dict) -> str:
    if not config.get("environments"):
        return ""
    args = config.get("env_args") or {}
    lines = ["## Environments\n", "| environment | arguments |", "|---|---|"]
    for source in config["environments"]:
        name = spelled_name(str(source))
        lines.append(f"| `{name}` | {_params(args.get(name))} |")
    return "\n".join(lines) + "\n"


def _training(config: dict, records: list[dict]) -> str:
    logged = [r for r in records if "step" in r and "reward" in r]
    lines = ["## Training\n", f"- model: `{config.get('model')}`, profile `{config.get('profile')}`"]
    if logged:
        lines.append(f"- logged steps: {len(logged)}, to step {logged[-1]['step']}")
    lines += [f"- `{field}`: {config[field]}" for field in TRAINING_FIELDS if field in config]
    return "\n".join(lines) + "\n"


def _comparison(comparison: dict | None) -> str:
    if not comparison or not comparison.get("results"):
        return ""
    results = comparison["results"]
    names = list(dict.fromkeys(name for r in results for name in r["means"]))
    tools = any("tool_share" in r for r in results)
    header = ["model", *names, *(["tool-use"] if tools else [])]
    heading = comparison["heading"]
    lines = [f"## Comparison\n\n{heading[:1].upper()}{heading[1:]}.\n", "| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    for result in results:
        cells = [_number(result["means"].get(name)) for name in names] + ([_number(result.get("tool_share"))]
                                                                          if tools else [])
        lines.append(f"| {result['model']} | " + " | ".join(cells) + " |")
    if len(results) >= 2:
        before, after = results[0]["means"], results[1]["means"]
        changes = [_number(None if before.get(n) is None or after.get(n) is None else after[n] - before[n], True)
                   for n in names]
        lines.append("| change (after - before) | " + " | ".join(changes + ([""] if tools else [])) + " |")
    lines += ["", *[f"- {line.strip()}" for line in comparison.get("gains") or []]]
    return "\n".join(lines).rstrip() + "\n"


def _number(value, signed: bool = False) -> str:
    return "-" if value is None else format(value, "+.3f" if signed else ".3f")


def reward_curve_rows(records: list[dict]) -> tuple[list[str], list[tuple[str, list[float | None]]]]:
    """The rewards logged (``rewards/NAME/mean``) and the total, and rows of their mean: one per logged step for up to
    ``ROWS_BY_STEP`` steps, else one per fifth of the steps, each labelled with its steps."""
    steps = [r for r in records if "step" in r and "reward" in r]
    names = list(dict.fromkeys(key[len("rewards/"):-len("/mean")] for r in steps for key in r
                               if key.startswith("rewards/") and key.endswith("/mean")))
    keys = [f"rewards/{name}/mean" for name in names] + ["reward"]
    if len(steps) <= ROWS_BY_STEP:
        groups = [[r] for r in steps]
    else:
        cuts = [round(len(steps) * i / 5) for i in range(6)]
        groups = [steps[a:b] for a, b in zip(cuts, cuts[1:])]
    rows = []
    for group in groups:
        label = str(group[0]["step"]) if len(group) == 1 else f"{group[0]['step']}-{group[-1]['step']}"
        values = [[r[k] for r in group if isinstance(r.get(k), (int, float))] for k in keys]
        rows.append((label, [sum(v) / len(v) if v else None for v in values]))
    return [*names, "total"], rows


def _curve(records: list[dict], output_dir: Path) -> str:
    names, rows = reward_curve_rows(records)
    if not rows:
        return ""
    per = "step" if all("-" not in label for label, _ in rows) else "fifth of the logged steps"
    lines = [f"## Reward curve\n\nThe mean reward logged in `{METRICS_FILE}`, per {per} (total: the weighted sum TRL "
             "trains on).\n", "| steps | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
    lines += [f"| {label} | " + " | ".join(_number(v) for v in values) + " |" for label, values in rows]
    if (output_dir / PLOT_FILE).is_file():
        lines += ["", f"![Rewards during training]({PLOT_FILE})"]
    return "\n".join(lines) + "\n"


def _kept(trl_card: str) -> list[str]:
    """TRL's framework versions and citations, as its card (or the card written before) has them."""
    kept = []
    for heading in ("Framework versions", "Citations"):
        match = re.search(rf"^#+ {heading}\n(.*?)(?=^## |\Z)", trl_card, re.S | re.M)
        if match:
            kept.append(f"## {heading}\n{match.group(1).rstrip()}\n")
    return kept
