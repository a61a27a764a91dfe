"""Hardware profiles as data: valid TRL/peft/accelerate settings, picked from (mocked) hardware."""

import json

import pytest
from click.testing import CliRunner

from grpo_core import ProfileSpec, hookimpl
from grpo_core.cli import cli
from grpo_core.settings.declared import parse_grpo_fields as check_grpo_fields
from grpo_core.plugins import registered
from grpo_core.builtin.profiles import GIB, GPU_TIERS, builtin_profiles, describe_profile, gpu_tier
from grpo_core.training.resolve import pick_profile

PROFILES = builtin_profiles()


class FakeCuda:
    """torch.cuda as seen on a machine with ``count`` GPUs named ``name``."""

    def __init__(self, count=1, name="NVIDIA H100 80GB HBM3", capability=(9, 0), free_gib=79.2, total_gib=79.6):
        self.count, self.name, self.capability = count, name, capability
        self.free, self.total = free_gib * GIB, total_gib * GIB

    def install(self, monkeypatch):
        import torch

        monkeypatch.setattr(torch.cuda, "is_available", lambda: self.count > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: self.count)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: self.name)
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda index=0: self.capability)
        monkeypatch.setattr(torch.cuda, "mem_get_info", lambda index=0: (int(self.free), int(self.total)))
        return self


def installed(monkeypatch, *present):
    """Make importlib.util.find_spec see exactly ``present`` among deepspeed and vllm."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec",
        lambda name, *a: (object() if name in present else None) if name in ("deepspeed", "vllm") else real(name, *a),
    )


@pytest.mark.parametrize("profile", [p for p in PROFILES if p.grpo_config], ids=lambda p: p.name)
def test_grpo_config_fields_exist_and_batches_divide_into_groups(profile):
    fields = check_grpo_fields(profile.grpo_config, profile.name)
    assert fields == profile.grpo_config  # every name is a GRPOConfig field, every value already typed
    if "per_device_train_batch_size" in fields:
        batch, group = fields["per_device_train_batch_size"], fields["num_generations"]
        assert batch % group == 0  # so any number of processes gives a generation batch TRL accepts


@pytest.mark.parametrize("profile", [p for p in PROFILES if p.grpo_config], ids=lambda p: p.name)
def test_grpo_config_is_accepted_by_trl(profile, tmp_path):
    from trl import GRPOConfig

    # Precision and vLLM need the hardware; the rest must pass TRL's own checks as it is.
    hardware = {"bf16", "fp16", "use_cpu"}
    values = {k: v for k, v in profile.grpo_config.items() if k not in hardware}
    config = GRPOConfig(output_dir=str(tmp_path), use_cpu=True, **values)
    assert config.generation_batch_size % config.num_generations == 0


def test_gpu_profiles_use_bf16_lora_and_checkpointing_and_cpu_does_not():
    from peft import LoraConfig

    by_name = {p.name: p for p in PROFILES}
    for name in ["gpu", *(tier[0] for tier in GPU_TIERS), "gpu-vllm"]:
        profile = by_name[name]
        assert profile.grpo_config["bf16"] is True and profile.grpo_config["gradient_checkpointing"] is True
        assert profile.grpo_config["model_init_kwargs"] == {"dtype": "bfloat16", "attn_implementation": "sdpa"}
        assert not profile.model_kwargs  # model loading is said in GRPOConfig's own field
        lora = LoraConfig(**profile.lora)
        assert lora.r > 0 and lora.target_modules == "all-linear"
    fp16 = by_name["gpu-fp16"]
    assert fp16.grpo_config["fp16"] is True and fp16.grpo_config["bf16"] is False and fp16.grpo_config["model_init_kwargs"]["dtype"] == "float16"
    assert by_name["cpu"].lora is None and by_name["cpu"].grpo_config["use_cpu"] is True
    vllm = by_name["gpu-vllm"].grpo_config
    assert vllm["use_vllm"] is True and vllm["vllm_mode"] == "colocate" and 0 < vllm["vllm_gpu_memory_utilization"] < 1
    server = by_name["multi-gpu-vllm"].grpo_config
    assert server["use_vllm"] is True and server["vllm_mode"] == "server"


def test_model_init_kwargs_name_real_dtypes():
    import torch

    for profile in PROFILES:
        dtype = (profile.grpo_config.get("model_init_kwargs") or {}).get("dtype")
        assert dtype is None or isinstance(getattr(torch, dtype), torch.dtype), profile.name


@pytest.mark.parametrize(
    "free, expected",
    [(79.2, "gpu-80gb"), (60, "gpu-80gb"), (39.4, "gpu-40gb"), (23.3, "gpu-24gb"), (15.6, "gpu-16gb"), (7.5, "gpu-16gb")],
)
def test_gpu_tier_by_free_memory(free, expected):
    assert gpu_tier(free) == expected


def test_larger_tiers_never_shrink_the_batch():
    sizes = [tier[2] for tier in GPU_TIERS]
    assert sizes == sorted(sizes, reverse=True)


def test_gpu_picks_a_tier_from_free_memory_and_says_why(monkeypatch):
    FakeCuda(free_gib=21.9, total_gib=23.6, name="NVIDIA A10G", capability=(8, 6)).install(monkeypatch)
    profile, reason = pick_profile("gpu")
    assert profile.name == "gpu-24gb"
    assert reason == "NVIDIA A10G with 21.9 of 23.6 GiB free"
    assert profile.grpo_config["per_device_train_batch_size"] == 8


def test_gpu_before_ampere_gets_float16(monkeypatch):
    FakeCuda(name="Tesla T4", capability=(7, 5), free_gib=14.6, total_gib=14.7).install(monkeypatch)
    profile, reason = pick_profile("gpu")
    assert profile.name == "gpu-fp16" and "compute capability 7.5 has no bfloat16" in reason


def test_gpu_without_cuda_picks_the_smallest_tier_and_says_so(monkeypatch):
    FakeCuda(count=0).install(monkeypatch)
    profile, reason = pick_profile("gpu")
    assert profile.name == "gpu-16gb" and reason.startswith("no CUDA device found")


@pytest.mark.parametrize("amx, avx512, expected", [(True, True, "AMX"), (False, True, "AVX512-BF16"),
                                                   (False, False, None)])
def test_the_cpu_probe_names_the_bf16_instructions(monkeypatch, amx, avx512, expected):
    import torch

    from grpo_core.builtin.profiles import native_bf16_cpu

    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512)
    assert native_bf16_cpu() == expected
    monkeypatch.delattr(torch.cpu, "_is_amx_tile_supported")
    monkeypatch.delattr(torch.cpu, "_is_avx512_bf16_supported")
    assert native_bf16_cpu() is None  # a torch without the probes: float32, never emulated bfloat16


@pytest.mark.parametrize(
    "cuda, native, expected, words",
    [
        (FakeCuda(count=0), None, "cpu", "no CUDA device found"),
        (FakeCuda(count=0), "AVX512-BF16", "cpu-bf16", "computes bfloat16 natively (AVX512-BF16)"),
    ],
)
def test_auto_picks_a_cpu_profile_from_the_instructions_and_says_why(monkeypatch, cuda, native, expected, words):
    cuda.install(monkeypatch)
    monkeypatch.setattr("grpo_core.builtin.profiles.native_bf16_cpu", lambda: native)  # what this CPU's probe answers
    profile, reason = pick_profile("auto")
    assert profile.name == expected and words in reason
    assert profile.grpo_config["use_cpu"] is True and profile.grpo_config["bf16"] is (native is not None)


@pytest.mark.parametrize(
    "cuda, present, expected, words",
    [
        (FakeCuda(), (), "gpu-80gb", "NVIDIA H100 80GB HBM3 with 79.2 of 79.6 GiB free"),
        (FakeCuda(), ("vllm",), "gpu-vllm", "vllm is installed"),
        (FakeCuda(free_gib=15.0, total_gib=15.7), ("vllm",), "gpu-16gb", "15.0 of 15.7"),
        (FakeCuda(count=8), ("deepspeed",), "multi-gpu", "found 8 CUDA devices"),
        (FakeCuda(count=2), (), "multi-gpu-fsdp", "no deepspeed"),
    ],
)
def test_auto_picks_from_the_hardware_and_says_why(monkeypatch, cuda, present, expected, words):
    cuda.install(monkeypatch)
    installed(monkeypatch, *present)
    profile, reason = pick_profile("auto")
    assert profile.name == expected and words in reason


def test_show_profile_command(monkeypatch):
    FakeCuda(free_gib=39.0, total_gib=39.4).install(monkeypatch)
    installed(monkeypatch)
    result = CliRunner().invoke(cli, ["profiles", "show", "auto"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["picks"]["name"] == "gpu-40gb" and "39.0 of 39.4 GiB free" in shown["picks"]["reason"]
    assert shown["grpo_config"]["per_device_train_batch_size"] == 16 and shown["lora"]["r"] == 16
    result = CliRunner().invoke(cli, ["profiles", "show", "multi-gpu-zero3"])
    assert json.loads(result.stdout)["launcher"]["accelerate_config"]["deepspeed_config"]["zero_stage"] == 3
    result = CliRunner().invoke(cli, ["profiles", "show", "gpu-99gb"])
    assert result.exit_code == 2 and "unknown profile 'gpu-99gb'" in result.output


def test_profiles_show_is_the_one_spelling():
    result = CliRunner().invoke(cli, ["profile", "cpu"])
    assert result.exit_code == 2 and "unexpected extra arguments (profile cpu)" in result.output


class ClusterPlugin:
    @hookimpl
    def register_profiles(self, register):
        register(ProfileSpec(
            "lab-cluster", "Our 4-GPU boxes",
            grpo_config={"bf16": True, "per_device_train_batch_size": 6, "num_generations": 6},
            model_kwargs={"dtype": "bfloat16"},
            lora={"r": 8, "target_modules": "all-linear"},
            launcher={"num_processes": 4, "main_process_port": 29600},
        ))


def test_third_party_profile_registers_and_launches_like_a_builtin():
    with registered(ClusterPlugin(), distribution="lab-profiles"):
        profile, reason = pick_profile("lab-cluster")
        assert profile.distribution == "lab-profiles" and reason == "selected"
        assert describe_profile("lab-cluster")["grpo_config"]["num_generations"] == 6
        result = CliRunner().invoke(cli, ["profiles", "--json"])
        rows = {row["name"]: row for row in json.loads(result.stdout)}
        assert rows["lab-cluster"]["distribution"] == "lab-profiles" and rows["lab-cluster"]["launcher"] is True
        from grpo_core.training.launch import launch_command

        command = launch_command(profile, None, ["--model", "m"])
        assert command[command.index("--num_processes") + 1] == "4"
        assert command[command.index("--main_process_port") + 1] == "29600"


def test_dry_run_on_a_mocked_gpu_prints_the_sized_config(monkeypatch, data_file, cache_dir):
    FakeCuda(free_gib=79.2).install(monkeypatch)
    installed(monkeypatch)
    result = CliRunner().invoke(cli, [
        "--reward", "length", "--dataset", "local", "--dataset-arg", f"path={data_file}", "--model", "tiny-random",
        "--profile", "auto", "--dry-run", "--no-preflight",
    ])
    assert result.exit_code == 0, result.output
    resolved = json.loads(result.stdout)
    assert resolved["profile"]["name"] == "gpu-80gb"
    assert resolved["grpo_config"]["bf16"] is True and "use_cpu" not in resolved["grpo_config"]
    assert resolved["grpo_config"]["per_device_train_batch_size"] == 32
    assert resolved["lora"]["target_modules"] == "all-linear"
    assert resolved["grpo_config"]["model_init_kwargs"]["dtype"] == "bfloat16" and resolved["launch"] is None
