"""Environment ``python``: the tool ``run_python`` runs the model's code in the ``code`` reward's sandbox, on the
run's scoring backend, so the model can run its program before it answers; the ``code`` reward still scores the
answer with the row's hidden tests.

How the tool runs and what it shows: ``grpo_env_python.environment``. Importing this module is cheap.
"""

from __future__ import annotations

from grpo_core import EnvironmentSpec, Param, hookimpl

from grpo_env_python.environment import PythonSandbox, gold_episode

__all__ = ["ENVIRONMENT", "PythonSandbox", "gold_episode", "register_environments"]

ENVIRONMENT = EnvironmentSpec(
    name="python",
    description="Runs the model's Python code in the code reward's sandbox and shows what it printed; no reward "
    "of its own (score the answer with --reward code)",
    factory=PythonSandbox,
    params=(
        Param("max_calls", 8, int, "tool calls an episode may make; later calls are answered with an error",
              minimum=1, maximum=1000),
        Param("seconds", 3.0, float, "wall-clock seconds one program may run (also its CPU-seconds limit); past "
              "them it is stopped and the model is told", minimum=0.1, maximum=600),
        Param("max_output", 1000, int, "characters of a program's output (and traceback) shown to the model; the "
              "middle of a longer one is cut", minimum=100, maximum=100_000),
        Param("memory_mb", 512, int, "address-space limit of the program's processes (RLIMIT_AS), in MiB",
              minimum=64, maximum=65536),
        Param("sandbox", "bubblewrap", str, "bubblewrap: namespaces, no network, an empty temporary folder; none: "
              "only limits and a clean environment", ("bubblewrap", "none"), unsafe=("none",)),
    ),
    gold_episode=gold_episode,
)


@hookimpl
def register_environments(register):
    register(ENVIRONMENT)
