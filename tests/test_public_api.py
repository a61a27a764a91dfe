"""The public API is declared and kept: plugins, examples and templates import only it, and every name is documented."""

import ast
import inspect
import re
import warnings
from pathlib import Path

import pytest

import grpo_core
import grpo_core.testing

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_MODULES = {"grpo_core", "grpo_core.testing"}
# Everything users copy or install: the shipped plugins (tests included), examples/, the new-plugin templates.
CONSUMERS = sorted(
    [*ROOT.glob("plugins/**/*.py"), *ROOT.glob("examples/**/*.py"), *ROOT.glob("grpo_core/plugins/templates/**/*.py.tmpl")]
)
PUBLIC_NAMES = [("grpo_core", name) for name in grpo_core.__all__] + [
    ("grpo_core.testing", name) for name in grpo_core.testing.__all__
]


def core_imports(source: str) -> list[tuple[int, str]]:
    """``(line, module)`` for every import of grpo_core or a module under it, at any depth (functions included)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == "grpo_core"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "grpo_core":
            found.append((node.lineno, node.module))
            if node.module == "grpo_core":  # `from grpo_core import testing` is fine; `import options` is not
                found += [(node.lineno, f"grpo_core.{alias.name}") for alias in node.names
                          if alias.name not in grpo_core.__all__ and alias.name != "testing"]
    return found


def test_the_meta_test_sees_function_level_and_submodule_imports():
    source = "import grpo_core.builtin.models\ndef f():\n    from grpo_core.rewards.timeout import get_pool\n    from grpo_core import options\n"
    assert [module for _, module in core_imports(source)] == ["grpo_core.builtin.models", "grpo_core.rewards.timeout",
                                                              "grpo_core", "grpo_core.options"]
    assert core_imports("from grpo_core import load_rewards\nfrom grpo_core.testing import texts\n") == [
        (1, "grpo_core"), (2, "grpo_core.testing")]


def test_there_are_consumers_to_check():
    assert any("plugins" in path.parts for path in CONSUMERS)
    assert any(path.name.endswith(".tmpl") for path in CONSUMERS)
    assert ROOT / "examples" / "trl_script.py" in CONSUMERS


@pytest.mark.parametrize("path", CONSUMERS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_imports_only_the_public_api(path):
    source = re.sub(r"\{\{\w+\}\}", "placeholder", path.read_text())  # a template as new-plugin fills it
    private = [f"line {line}: {module}" for line, module in core_imports(source)
               if module not in PUBLIC_MODULES]
    assert not private, (f"{path.relative_to(ROOT)} imports grpo-core internals ({'; '.join(private)}); "
                         "use names exported by grpo_core or grpo_core.testing, or export what is missing")


@pytest.mark.parametrize("module, name", PUBLIC_NAMES, ids=lambda value: str(value))
def test_public_name_exists_and_has_a_docstring(module, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # no public name is a deprecated one
        value = getattr(grpo_core if module == "grpo_core" else grpo_core.testing, name)
    if inspect.isfunction(value) or inspect.isclass(value) or callable(value):
        own = value.__dict__.get("__doc__") if inspect.isclass(value) else inspect.getdoc(value)
        assert (own or "").strip(), f"{module}.{name} has no docstring"


@pytest.mark.parametrize("module, name", PUBLIC_NAMES, ids=lambda value: str(value))
def test_public_name_is_in_the_api_reference(module, name):
    text = (ROOT / "docs" / "api.md").read_text()
    section = text.split(f"## `{module}`", 1)[1].split("\n## ", 1)[0]
    assert f"- `{name}" in section, f"{module}.{name} is not in docs/api.md; run: python scripts/gen_docs.py"


def test_public_api_import_is_cheap():
    import subprocess
    import sys

    code = ("import sys, grpo_core; heavy = [m for m in ('torch', 'transformers', 'trl', 'datasets', 'click') "
            "if m in sys.modules]; print(','.join(heavy))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_answer_tag_takes_the_last_complete_pair():
    assert grpo_core.answer_tag("<answer>1</answer> then <answer> 2 </answer>") == " 2 "
    assert grpo_core.answer_tag("<ANSWER>7</Answer>") == "7"
    assert grpo_core.answer_tag("<result>7</result>", "result") == "7"
    assert grpo_core.answer_tag("<answer>7") is None
    assert grpo_core.answer_tag("7</answer>") is None
    assert grpo_core.answer_tag("<answer><answer>3</answer>") == "3"
    assert grpo_core.answer_tag("") is None


def test_find_numbers_reads_numbers_in_prose_lazily():
    found = list(grpo_core.find_numbers("v1.5 and x2 cost $1,200 or -3/4 of 1e99999999999"))
    assert [(m.start, m.end) for m in found][:2] == [(17, 23), (27, 31)]
    assert grpo_core.same_number(found[0].number, grpo_core.parse_number("1200"))
    assert grpo_core.same_number(found[1].number, grpo_core.parse_number("-3/4"))
    assert found[-1].number is None  # too large to read: the caller decides
    assert [m.start for m in grpo_core.find_numbers("1 2 3", 1)] == [2, 4]


def _slow_square(x):
    import time

    if x < 0:
        raise ValueError("negative")
    time.sleep(x)
    return x * x


def test_run_with_timeouts_gives_values_and_unscored_items():
    results = grpo_core.run_with_timeouts(_slow_square, [((0,), {}), ((30,), {}), ((-1,), {})], 1.0)
    assert results[0] == 0
    assert results[1].reason == "timeout" and "1 s" in results[1].detail
    assert results[2].reason == "error" and "negative" in results[2].detail


def test_get_spec_and_resolve_model(tmp_path, monkeypatch):
    assert grpo_core.testing.get_spec("dataset", "local").name == "local"
    with pytest.raises(grpo_core.UsageError, match="unknown kind 'rewards'"):
        grpo_core.testing.get_spec("rewards", "math")
    assert grpo_core.resolve_model("org/some-model") == "org/some-model"
    assert grpo_core.resolve_model(str(tmp_path)) == str(tmp_path)
    with pytest.raises(grpo_core.UsageError, match="unknown model 'tiny-randm'.*tiny-random"):
        grpo_core.resolve_model("tiny-randm")


def test_load_dataset_prepares_a_local_file_and_checks_reward_columns(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text('{"prompt": "What is 1 + 1?", "answer": "2"}\n{"prompt": "What is 2 + 3?", "answer": "5"}\n')
    dataset = grpo_core.load_dataset("local", {"path": str(data)})
    assert len(dataset) == 2 and "prompt" in dataset.column_names
    with pytest.raises(grpo_core.UsageError, match="path"):
        grpo_core.load_dataset("local", {"pth": str(data)})
    with grpo_core.testing.registered(_NeedsGold()):
        rewards = grpo_core.load_rewards(["needs-gold"])
        with pytest.raises(grpo_core.UsageError, match="needs the column 'gold'"):
            grpo_core.load_dataset("local", {"path": str(data)}, rewards=rewards)


def _gold_score(completion, gold):
    return 1.0 if gold in completion else 0.0


class _NeedsGold:
    @grpo_core.hookimpl
    def register_rewards(self, register):
        register(grpo_core.RewardSpec(name="needs-gold", description="reads a gold column", func=_gold_score,
                                      bounds=(0.0, 1.0), columns=("gold",)))


def test_an_unknown_public_name_is_an_attribute_error():
    with pytest.raises(ImportError):
        from grpo_core import HardwareProfile  # noqa: F401
    with pytest.raises(AttributeError, match="no attribute 'HardwarProfile'"):
        grpo_core.HardwarProfile  # noqa: B018


def test_a_spec_takes_its_function_as_a_lazy_module_function_string():
    import pickle
    import sys

    sys.modules.pop("tests_lazy_target", None)
    spec = grpo_core.RewardSpec(name="lazy", description="d", func="json:dumps", validate="math:isfinite")
    assert spec.func("a") == '"a"' and "obj" in inspect.signature(spec.func).parameters
    assert pickle.loads(pickle.dumps(spec.func))([1]) == "[1]"
    data = grpo_core.DatasetSpec(name="lazy-data", description="d", load="collections:OrderedDict")
    assert data.load(a=1) == {"a": 1}
    missing = grpo_core.RewardSpec(name="typo", description="d", func="json:dumsp")  # nothing imported yet
    with pytest.raises(grpo_core.PluginError, match=r"^reward 'typo' \(func\): cannot import 'json:dumsp': "
                                                     r"module 'json' has no 'dumsp'; fix the function name$"):
        missing.resolve()
    nowhere = grpo_core.DatasetSpec(name="gone", description="d", load="no_such_module_xyz:load")
    with pytest.raises(grpo_core.PluginError, match=r"dataset 'gone' \(load\): cannot import 'no_such_module_xyz:load'"):
        nowhere.resolve()
    with pytest.raises(grpo_core.PluginError, match="'json.dumps' is not a 'module:function' string"):
        grpo_core.RewardSpec(name="bad", description="d", func="json.dumps")


def test_reward_spec_timeout_creates_and_validates_its_parameter():
    spec = grpo_core.RewardSpec(name="slow", description="d", func=len, timeout=3.0,
                                params=(grpo_core.Param("n", 1, int),))
    assert [(p.name, p.default) for p in spec.params] == [("n", 1), ("timeout", 3.0)]
    assert spec.resolve() == {"n": 1, "timeout": 3.0} and spec.resolve({"timeout": "0.5"})["timeout"] == 0.5
    for bad in ("0", "-1", "nan", "inf"):
        with pytest.raises(grpo_core.UsageError, match="parameter 'timeout'.*positive, finite number of seconds"):
            spec.resolve({"timeout": bad})
    import dataclasses

    assert [p.default for p in dataclasses.replace(spec, timeout=7.0).params if p.name == "timeout"] == [7.0]
    own = grpo_core.Param("timeout", 3.0, float, "my own help")
    assert grpo_core.RewardSpec(name="own", description="d", func=len, timeout=3.0, params=(own,)).params == (own,)
    # A plugin written before RewardSpec created the parameter keeps its own, whose default overrides timeout=
    older = grpo_core.RewardSpec(name="two", description="d", func=len, timeout=3.0,
                                 params=(dataclasses.replace(own, default=2.0),))
    assert older.resolve() == {"timeout": 2.0}
    assert not [p for p in grpo_core.RewardSpec(name="none", description="d", func=len).params]


def test_dataset_param_declares_the_shared_parameters_once():
    size = grpo_core.dataset_param("size", 1000, minimum=1)
    assert (size.name, size.default, size.type, size.minimum) == ("size", 1000, int, 1) and size.help
    assert grpo_core.dataset_param("seed").default == 0 and grpo_core.dataset_param("split").default == "train"
    with pytest.raises(grpo_core.PluginError, match="'sizes' is not a shared dataset parameter"):
        grpo_core.dataset_param("sizes")


def test_dataset_param_takes_the_datasets_own_help_and_keeps_the_shared_type():
    split = grpo_core.dataset_param("split", help="the split to read; slices work too, e.g. train[:500]")
    assert (split.type, split.default, split.help) == (str, "train", "the split to read; slices work too, e.g. train[:500]")
    assert grpo_core.dataset_param("split").help != split.help


def test_the_builtin_datasets_take_the_shared_parameters_from_dataset_param():
    from grpo_core.testing import get_spec

    local = {param.name: param for param in get_spec("dataset", "local").params}
    for name in ("size", "seed", "shuffle", "system_prompt"):
        assert local[name] == grpo_core.dataset_param(name, local[name].default, minimum=local[name].minimum)
    assert (local["split"].default, local["size"].default, local["size"].minimum) == ("train", None, 1)


def test_load_dataset_takes_params():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(grpo_core.load_dataset("arithmetic", {"size": 3})) == 3
        assert len(grpo_core.load_dataset("arithmetic", params={"size": 4})) == 4
    with pytest.raises(TypeError, match="args"):
        grpo_core.load_dataset("arithmetic", args={"size": 5})