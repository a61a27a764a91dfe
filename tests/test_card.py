"""The run's model card says what was trained: written from run_config.yaml, metrics.jsonl and the comparison, with
TRL's front matter, framework versions and citations kept."""

import json

import yaml

from grpo_core.rundir.folder import owned_outputs
from grpo_core.training.card import reward_curve_rows, write_model_card

TRL_CARD = """---
library_name: transformers
model_name: run
tags:
- generated_from_trainer
- grpo
- trl
licence: license
---

# Model Card for run

This model is a fine-tuned version of [None](https://huggingface.co/None).

## Quick start

```python
question = "If you had a time machine, but could only go to the past or the future once and never return?"
```

## Training procedure

This model was trained with GRPO.

### Framework versions

- TRL: 1.16.0
- Transformers: 5.24.0

## Citations

Cite TRL as:

```bibtex
@software{vonwerra2020trl,
  title   = {{TRL: Transformers Reinforcement Learning}},
}
```
"""


def run_folder(tmp_path, steps=12):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "README.md").write_text(TRL_CARD)
    (folder / "run_config.yaml").write_text(yaml.safe_dump({
        "rewards": ["math=2", "xml-format=0.5"],
        "reward_args": {"math": {"extract": "answer-tag"}, "xml-format": {"tags": "answer", "min_chars": 1}},
        "environments": ["calculator"], "env_args": {"calculator": {"max_calls": 8}},
        "dataset": "arithmetic", "dataset_args": {"split": "train", "size": 1000, "few_shot": 2},
        "model": "tiny-random", "profile": "cpu", "compare": 4, "max_steps": steps, "learning_rate": 1e-5,
        "num_generations": 8, "output_dir": str(folder),
    }, sort_keys=False))
    rows = [{"step": s, "reward": s / 10, "rewards/math/mean": s / 20, "rewards/xml-format/mean": 1.0}
            for s in range(1, steps + 1)]
    rows.append({"summary": True, "after_step": steps, "train_runtime": 12.0})
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


COMPARISON = {
    "heading": "held-out comparison, greedy, on 4 distinct test-split questions, none of them in the training rows",
    "results": [{"model": "tiny-random (before)", "means": {"math": 0.25, "xml-format": 0.5}},
                {"model": "/r/run/final (after)", "means": {"math": 0.75, "xml-format": 1.0}},
                {"model": "/r/run-control/final (control)", "means": {"math": 0.5, "xml-format": None}}],
    "gains": ["held-out math, 4 questions:  base 0.250   trained 0.750   control 0.500   gain over control +0.250 "
              "(+/- 0.250)"],
}


def test_the_card_says_what_the_run_trained_and_keeps_trls_versions_and_citations(tmp_path):
    folder = run_folder(tmp_path)
    card = write_model_card(folder).read_text()
    assert "time machine" not in card and "[None]" not in card and "## Quick start" not in card
    assert card.startswith("---\nlibrary_name: transformers\n") and "- generated_from_trainer" in card
    assert "README.md" in owned_outputs(folder)  # still the run's card to the folder logic
    assert f"```bash\ngrpo-run --config {folder / 'run_config.yaml'}\n```" in card
    assert "| `math` | 2 | `extract=answer-tag` |" in card
    assert "| `xml-format` | 0.5 | `tags=answer`, `min_chars=1` |" in card
    assert "`arithmetic`: `split=train`, `size=1000`, `few_shot=2`" in card
    assert "| `calculator` | `max_calls=8` |" in card
    assert "`tiny-random` (a grpo-run model alias" in card and "for 12 steps" in card
    assert "control run" not in card
    assert "- `max_steps`: 12" in card and "- `num_generations`: 8" in card
    assert "## Comparison" not in card
    assert "- TRL: 1.16.0" in card and "@software{vonwerra2020trl," in card


def test_the_comparison_is_added_to_the_card_once(tmp_path):
    folder = run_folder(tmp_path)
    write_model_card(folder)
    card = write_model_card(folder, COMPARISON).read_text()
    assert "Held-out comparison, greedy, on 4 distinct test-split questions" in card
    assert "| model | math | xml-format |" in card
    assert "| tiny-random (before) | 0.250 | 0.500 |" in card
    assert "| /r/run-control/final (control) | 0.500 | - |" in card
    assert "| change (after - before) | +0.500 | +0.500 |" in card
    assert "gain over control +0.250 (+/- 0.250)" in card
    assert card.count("## Framework versions") == 1 and card.count("## Citations") == 1
    assert card.count("- generated_from_trainer") == 1


def test_the_reward_curve_is_a_row_a_step_for_a_short_run_and_a_row_a_fifth_for_a_longer_one(tmp_path):
    short = [{"step": s, "reward": 0.1 * s, "rewards/math/mean": 0.5} for s in (1, 2, 3)]
    names, rows = reward_curve_rows(short)
    assert names == ["math", "total"] and [label for label, _ in rows] == ["1", "2", "3"]
    card = write_model_card(run_folder(tmp_path)).read_text()
    assert "per fifth of the logged steps" in card and "| steps | math | xml-format | total |" in card
    assert "| 1-2 | 0.075 | 1.000 | 0.150 |" in card and "| 11-12 | 0.575 | 1.000 | 1.150 |" in card
    assert [label for label in ("1-2", "3-5", "6-7", "8-10", "11-12", "1", "12") if f"\n| {label} |" in card] == [
        "1-2", "3-5", "6-7", "8-10", "11-12"]


def test_a_control_run_card_says_it_is_one_and_the_run_it_controls_names_it(tmp_path):
    folder = run_folder(tmp_path)
    config = yaml.safe_load((folder / "run_config.yaml").read_text())
    (folder / "run_config.yaml").write_text(yaml.safe_dump({**config, "control": "shuffled",
                                                            "control_of": "/r/run"}))
    card = write_model_card(folder).read_text()
    assert "This is a control run (`shuffled`)" in card and "`/r/run`" in card
    (folder / "run_config.yaml").write_text(yaml.safe_dump({**config, "control": "shuffled"}))  # the run it controls
    card = write_model_card(folder).read_text()
    assert "This is a control run" not in card and "A control run (`shuffled`) trained beside it" in card


def test_without_trls_card_the_card_carries_the_marker_itself(tmp_path):
    folder = run_folder(tmp_path)
    (folder / "README.md").unlink()
    card = write_model_card(folder).read_text()
    assert "- generated_from_trainer" in card and "README.md" in owned_outputs(folder)
