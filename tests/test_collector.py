"""The garbage collector around a run (grpo_core/training/collector.py): rare while loading, blind to what loaded while
training, every object collectable again afterwards, and no walk of the heap at exit."""

import gc
import subprocess
import sys
import textwrap
import weakref

import pytest

from grpo_core.settings.declared import RunSettings
from grpo_core.training import collector
from grpo_core.training.resolve import resolve

from cli_helpers import train_run


class Cycle:
    def __init__(self):
        self.me = self


@pytest.fixture
def thresholds():
    """Thresholds other than the defaults, so 'restored' cannot pass by chance; put back after the test."""
    before = gc.get_threshold()
    gc.set_threshold(900, 11, 12)
    yield (900, 11, 12)
    gc.set_threshold(*before)


def test_loading_collects_rarely_and_puts_the_thresholds_back(thresholds):
    with collector.loading():
        assert gc.get_threshold() == collector.LOADING_THRESHOLD
    assert gc.get_threshold() == thresholds


def test_loading_puts_the_thresholds_back_when_it_raises(thresholds):
    with pytest.raises(KeyboardInterrupt), collector.loading():
        raise KeyboardInterrupt
    assert gc.get_threshold() == thresholds


def test_training_inside_loading_trains_with_the_usual_thresholds_and_everything_that_loaded_frozen(thresholds):
    with collector.loading():
        with collector.training():
            assert gc.get_threshold() == thresholds
            assert gc.get_freeze_count() > 0
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == thresholds  # a second run in the same command loads with them too
    assert gc.get_threshold() == thresholds


def test_what_was_alive_when_training_started_is_out_of_its_collections_and_collectable_after():
    garbage = Cycle()
    alive = weakref.ref(garbage)
    with collector.training():
        del garbage
        gc.collect()
        assert alive() is not None, "frozen: the training loop's collections do not walk it"
    gc.collect()
    assert alive() is None, "given back to the collector: a finished run's trainer does not outlive it"


def test_training_gives_everything_back_when_the_loop_raises():
    with pytest.raises(RuntimeError), collector.training():
        raise RuntimeError("a reward failed")
    assert gc.get_freeze_count() == 0


EXIT_SCRIPT = textwrap.dedent("""
    import gc, sys
    from grpo_core.training import collector

    class Loud:
        def __del__(self):
            print("collected at exit", flush=True)

    gc.disable()
    loud = Loud()
    loud.me = loud
    del loud
    if sys.argv[1] == "skip":
        collector.skip_at_exit()
    print("done", flush=True)
""")


@pytest.mark.parametrize("mode, collected", [("skip", False), ("keep", True)])
def test_skip_at_exit_leaves_reference_cycles_to_the_operating_system(mode, collected):
    result = subprocess.run([sys.executable, "-c", EXIT_SCRIPT, mode], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("done")
    assert ("collected at exit" in result.stdout) is collected


@pytest.mark.slow
def test_a_run_in_process_leaves_the_collector_as_it_found_it(data_file, tmp_path, cache_dir, thresholds):
    settings = RunSettings(
        rewards=["length"], reward_args={"length": {"target": 8}}, dataset="local",
        dataset_args={"path": str(data_file)}, model="tiny-random",
        grpo={"max_steps": 1, "num_generations": 2, "per_device_train_batch_size": 2, "max_completion_length": 8,
              "output_dir": str(tmp_path / "out"), "save_strategy": "no"},
    )
    with collector.loading():
        run = resolve(settings, log=lambda message: None)
        trained = train_run(run, log=lambda message: None).trainer
    assert trained.state.global_step == 1
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == thresholds


def test_skip_at_exit_is_registered_once_however_often_it_is_called():
    count = "import atexit\nprint('handlers', atexit._ncallbacks())\n"
    loop = "    for _ in range(3):\n        collector.skip_at_exit()"
    three_times = EXIT_SCRIPT.replace("    collector.skip_at_exit()", loop)
    result = subprocess.run([sys.executable, "-c", three_times + count, "skip"], capture_output=True, text=True,
                            timeout=60)
    baseline = subprocess.run([sys.executable, "-c", EXIT_SCRIPT + count, "keep"], capture_output=True, text=True,
                              timeout=60)
    assert result.returncode == 0 and baseline.returncode == 0, result.stderr + baseline.stderr
    assert "collected at exit" not in result.stdout
    handlers = lambda out: int(out.split("handlers ")[1].split()[0])  # noqa: E731
    assert handlers(result.stdout) == handlers(baseline.stdout) + 1
