"""The built-in hardware profiles, as data: GRPOConfig fields, model arguments, LoRA and launcher.

Nothing here imports torch at module level; the ``pick_*`` functions, which look at the hardware,
import it when a profile is used. Every profile keeps ``per_device_train_batch_size`` a multiple of
``num_generations``, so any ``--num-processes`` gives a generation batch TRL accepts.
"""

from __future__ import annotations

from grpo_core.plugins import get_registry
from grpo_core.specs import ProfileSpec

GIB = 1024**3

# peft.LoraConfig fields: adapters on every linear layer, the recipe TRL and peft document for GRPO.
LORA = {
    "r": 16,
    "lora_alpha": 32,
    "lora_dropout": 0.05,
    "target_modules": "all-linear",
    "task_type": "CAUSAL_LM",
}

CPU = {
    "use_cpu": True,
    "bf16": False,
    "fp16": False,
    "per_device_train_batch_size": 4,
    "num_generations": 4,
    "max_completion_length": 64,
    "gradient_accumulation_steps": 1,
    "logging_steps": 1,
    "report_to": "none",
    "dataloader_num_workers": 0,
    "model_init_kwargs": {"dtype": "float32"},
    # TRL turns checkpointing on by default; on a CPU memory is plentiful, and checkpointing turns
    # off the KV cache during generation, which made each step several times slower.
    "gradient_checkpointing": False,
}

# A CPU that computes bfloat16 natively (AVX512-BF16 or AMX): weights and optimizer stay float32,
# matrix products run in bf16 under autocast. On the 2-core development machine a default-run step
# took about 13 s instead of 17 s (benchmarks/default_run_sweep.md, section H).
CPU_BF16 = {**CPU, "bf16": True}

# One GPU with LoRA: adapters learn at a higher rate than full fine-tuning (TRL's 1e-6 default).
GPU_MODEL = {"dtype": "bfloat16", "attn_implementation": "sdpa"}  # how TRL loads the model (model_init_kwargs)
GPU = {
    "bf16": True,
    "model_init_kwargs": GPU_MODEL,
    "gradient_checkpointing": True,
    "gradient_checkpointing_kwargs": {"use_reentrant": False},
    "learning_rate": 1e-5,
    "logging_steps": 1,
}

# (profile, at least this many GiB free, per_device_train_batch_size, num_generations,
#  gradient_accumulation_steps), largest first. Sized for models up to a few billion
# parameters with LoRA and TRL's default completion length; --set overrides any of them.
GPU_TIERS = (
    ("gpu-80gb", 60, 32, 16, 2),
    ("gpu-40gb", 30, 16, 8, 2),
    ("gpu-24gb", 18, 8, 8, 4),
    ("gpu-16gb", 0, 4, 4, 4),
)

# GPUs before Ampere (T4, V100) have no bfloat16: half precision, with LoRA adapters kept in float32 by peft.
GPU_FP16 = {**GPU, "bf16": False, "fp16": True, "model_init_kwargs": {**GPU_MODEL, "dtype": "float16"},
            "per_device_train_batch_size": 4, "num_generations": 4,
            "gradient_accumulation_steps": 4}

GPU_VLLM = {
    **GPU,
    "use_vllm": True,
    "vllm_mode": "colocate",
    "vllm_gpu_memory_utilization": 0.3,
    "per_device_train_batch_size": 16,
    "num_generations": 8,
    "gradient_accumulation_steps": 2,
}

# Several GPUs: full fine-tuning, sharded; the learning rate stays at TRL's default for that.
MULTI_GPU = {
    "bf16": True,
    "model_init_kwargs": GPU_MODEL,
    "gradient_checkpointing": True,
    "gradient_checkpointing_kwargs": {"use_reentrant": False},
    "per_device_train_batch_size": 8,
    "num_generations": 8,
    "gradient_accumulation_steps": 4,
    "logging_steps": 1,
}

# Accelerate config files, following the templates TRL ships in trl/accelerate_configs/;
# num_processes (and gpu_ids) are filled in when the run is launched.
ACCELERATE_BASE = {
    "compute_environment": "LOCAL_MACHINE",
    "debug": False,
    "downcast_bf16": "no",
    "machine_rank": 0,
    "main_training_function": "main",
    "mixed_precision": "bf16",
    "num_machines": 1,
    "rdzv_backend": "static",
    "same_network": True,
    "tpu_env": [],
    "tpu_use_cluster": False,
    "tpu_use_sudo": False,
    "use_cpu": False,
}


def deepspeed_config(stage: int) -> dict:
    """An accelerate config for DeepSpeed ZeRO stage 2 or 3 (as in TRL's zero2.yaml and zero3.yaml)."""
    config = {
        "deepspeed_multinode_launcher": "standard",
        "offload_optimizer_device": "none",
        "offload_param_device": "none",
        "zero3_init_flag": stage == 3,
        "zero_stage": stage,
    }
    if stage == 3:
        config["zero3_save_16bit_model"] = True  # save_model writes a loadable model, not shards
    return {**ACCELERATE_BASE, "distributed_type": "DEEPSPEED", "deepspeed_config": config}


def fsdp2_config() -> dict:
    """An accelerate config for FSDP2 (TRL's fsdp2.yaml) with activation checkpointing done by FSDP."""
    return {
        **ACCELERATE_BASE,
        "distributed_type": "FSDP",
        "enable_cpu_affinity": False,
        "fsdp_config": {
            "fsdp_activation_checkpointing": True,
            "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            "fsdp_cpu_ram_efficient_loading": True,
            "fsdp_offload_params": False,
            "fsdp_reshard_after_forward": True,
            "fsdp_state_dict_type": "FULL_STATE_DICT",
            "fsdp_version": 2,
        },
    }


def builtin_profiles() -> list[ProfileSpec]:
    """Every profile grpo-core registers, in listing order."""
    profiles = [
        ProfileSpec("cpu", "CPU only: float32, no LoRA, small groups", grpo_config=CPU),
        ProfileSpec("cpu-bf16", "CPU with native bfloat16 (AVX512-BF16 or AMX): float32 weights, bfloat16 "
                        "matrix products, no LoRA, small groups", grpo_config=CPU_BF16),
        ProfileSpec("auto", "Detect the hardware and pick a profile (says which and why)", pick=pick_auto),
        ProfileSpec(
            "gpu",
            "One GPU: bf16, LoRA, gradient checkpointing; batch and group size picked from free memory "
            f"({', '.join(tier[0] for tier in reversed(GPU_TIERS))}) or gpu-fp16 before Ampere",
            grpo_config=GPU, lora=LORA, pick=pick_gpu,
        ),
    ]
    for name, min_free, batch, generations, accumulation in GPU_TIERS:
        sizes = {"per_device_train_batch_size": batch, "num_generations": generations,
                 "gradient_accumulation_steps": accumulation}
        where = f"at least {min_free} GiB free" if min_free else "less than 18 GiB free"
        profiles.append(ProfileSpec(
            name, f"One GPU with {where}: bf16, LoRA, gradient checkpointing, {batch} completions per device "
            f"in groups of {generations}", grpo_config={**GPU, **sizes}, lora=LORA,
        ))
    profiles += [
        ProfileSpec("gpu-fp16", "One GPU without bfloat16 (T4, V100): float16, LoRA, gradient checkpointing",
                        grpo_config=GPU_FP16, lora=LORA),
        ProfileSpec("gpu-vllm", "One large GPU: vLLM generation colocated with training (needs vllm), bf16, LoRA",
                        grpo_config=GPU_VLLM, lora=LORA),
        ProfileSpec("multi-gpu", "Every GPU of this machine through accelerate launch with DeepSpeed ZeRO-2 "
                        "(needs deepspeed); full fine-tuning in bf16", grpo_config=MULTI_GPU,
                        launcher={"accelerate_config": deepspeed_config(2)}),
        ProfileSpec("multi-gpu-zero3", "Like multi-gpu with DeepSpeed ZeRO-3: parameters sharded too, "
                        "for models too large for one GPU", grpo_config=MULTI_GPU,
                        launcher={"accelerate_config": deepspeed_config(3)}),
        ProfileSpec("multi-gpu-fsdp", "Like multi-gpu with PyTorch FSDP2 instead of DeepSpeed (nothing extra "
                        "to install)", grpo_config={**MULTI_GPU, "gradient_checkpointing": False}, launcher={"accelerate_config": fsdp2_config()}),
        ProfileSpec("multi-gpu-vllm", "ZeRO-2 training on all GPUs but the first, which serves generations: "
                        "start `CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model MODEL` first",
                        grpo_config={**MULTI_GPU, "use_vllm": True, "vllm_mode": "server"},
                        launcher={"accelerate_config": deepspeed_config(2), "reserve_gpus": 1}),
    ]
    return profiles


def gpu_tier(free_gib: float) -> str:
    """The single-GPU profile sized for ``free_gib`` GiB of free memory."""
    for name, min_free, *_ in GPU_TIERS:
        if free_gib >= min_free:
            return name
    return GPU_TIERS[-1][0]


def pick_gpu() -> tuple[str, str]:
    """The sized single-GPU profile for CUDA device 0, and why."""
    import torch

    if not torch.cuda.is_available():
        return GPU_TIERS[-1][0], "no CUDA device found, so sized for the smallest GPU (the run falls back to the CPU)"
    name = torch.cuda.get_device_name(0)
    major, minor = torch.cuda.get_device_capability(0)
    free, total = torch.cuda.mem_get_info(0)
    about = f"{name} with {free / GIB:.1f} of {total / GIB:.1f} GiB free"
    if major < 8:
        return "gpu-fp16", f"{about}, compute capability {major}.{minor} has no bfloat16"
    return gpu_tier(free / GIB), about


def native_bf16_cpu() -> str | None:
    """The instruction set this CPU computes bfloat16 with (``"AMX"`` or ``"AVX512-BF16"``), or None."""
    import torch

    for name, probe in (("AMX", "_is_amx_tile_supported"), ("AVX512-BF16", "_is_avx512_bf16_supported")):
        try:
            if getattr(torch.cpu, probe)():
                return name
        except (AttributeError, RuntimeError):  # an older torch without the probe: say no
            continue
    return None


def pick_cpu() -> tuple[str, str]:
    """cpu-bf16 where the CPU computes bfloat16 natively, else cpu (emulated bfloat16 would be slower)."""
    native = native_bf16_cpu()
    if native is None:
        return "cpu", "no CUDA device found"
    return "cpu-bf16", f"no CUDA device found; this CPU computes bfloat16 natively ({native})"


def pick_auto() -> tuple[str, str]:
    """cpu, cpu-bf16, a single-GPU profile, gpu-vllm or a multi-GPU profile, from what this machine has."""
    import importlib.util

    import torch

    if not torch.cuda.is_available():
        return pick_cpu()
    count = torch.cuda.device_count()
    if count > 1:
        names = ", ".join(sorted({torch.cuda.get_device_name(i) for i in range(count)}))
        if importlib.util.find_spec("deepspeed") is not None:
            return "multi-gpu", f"found {count} CUDA devices ({names}): DeepSpeed ZeRO-2 across all of them"
        return "multi-gpu-fsdp", f"found {count} CUDA devices ({names}) and no deepspeed: FSDP2 across all of them"
    picked, reason = pick_gpu()
    free = torch.cuda.mem_get_info(0)[0] / GIB
    if picked != "gpu-fp16" and free >= 20 and importlib.util.find_spec("vllm") is not None:
        return "gpu-vllm", f"{reason}, and vllm is installed: generation runs in vLLM on the same GPU"
    return picked, reason


def describe_profile(name: str) -> dict:
    """One profile as plain data; a profile that picks another shows the pick on this machine and why."""
    registry = get_registry()
    profile = registry.profile(name)
    result = {"name": profile.name, "description": profile.description, "distribution": profile.distribution}
    if profile.pick is not None:
        picked, reason = profile.pick()
        result["picks"] = {"name": picked, "reason": reason}
        profile = registry.profile(picked)
    result.update(
        grpo_config=dict(profile.grpo_config),
        lora=profile.lora,
        launcher=profile.launcher,
    )
    return result
