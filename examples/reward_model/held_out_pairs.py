"""Write labelled pairs for the reward-model agreement check: arithmetic questions of the test split (none of them
in the small model's training rows), the right answer as ``chosen`` and a wrong one in the same form as ``rejected``.

    python examples/reward_model/held_out_pairs.py pairs.jsonl [--size 400]
    grpo-run check --reward reward-model --reward-arg reward-model.model=FOLDER \\
        --dataset local --dataset-arg path=pairs.jsonl
"""

from __future__ import annotations

import argparse
import json
import os


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--size", type=int, default=400)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from grpo_core import load_dataset
    from grpo_reward_model.pairs import preference_rows

    rows = load_dataset("arithmetic", {"split": "test", "size": args.size, "few_shot": 0, "system_prompt": ""})
    with open(args.out, "w", encoding="utf-8") as out:
        for pair in preference_rows(rows, seed=1, augment=0.0):
            out.write(json.dumps({"prompt": pair["prompt"], "chosen": pair["chosen"][0]["content"],
                                  "rejected": pair["rejected"][0]["content"]}) + "\n")
    print(f"wrote {args.size} labelled pairs to {args.out}")


if __name__ == "__main__":
    main()
