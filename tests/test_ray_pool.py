"""The Ray backend on a real local cluster (`ray start --head` on 127.0.0.1, joined by address): the same results
as the local worker pool, hard per-item limits, threads, a killed actor, an unreachable head, Ray never imported
by `import grpo_core`."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import ray_pool_fixtures as fx
from grpo_core.rewards.pool import TIMEOUT, Failure, WorkerPool
from grpo_core.testing import free_port

if "ray" not in sys.modules:  # Ray reads its authentication mode once, when imported; the head gets the same
    os.environ.setdefault("RAY_AUTH_MODE", "token")
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
ray = pytest.importorskip("ray", reason='the Ray backend is tested with its extra: pip install -e ".[test,ray]"')

from grpo_core.rewards import ray_pool  # noqa: E402
from grpo_core.rewards.ray_pool import RayPool, connect  # noqa: E402

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def wait_for_port(port: int, head: subprocess.Popen, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if head.poll() is not None:
            raise RuntimeError(f"ray start exited with {head.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the Ray head did not open port {port} in {seconds} s")


@pytest.fixture(scope="module")
def cluster():
    """A head node of two CPUs started like a user's (`ray start --head`), in its own temp folder, joined by address
    with a token of this session (the head listens on every interface)."""
    port = free_port()
    temp = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # Ray's socket paths must stay short
    ray_cli = str(Path(sys.executable).parent / "ray")
    head = subprocess.Popen(
        [ray_cli, "start", "--head", "--block", "--port", str(port), "--node-ip-address", "127.0.0.1",
         "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", temp],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_port(port, head)
        address = f"127.0.0.1:{port}"
        connect(address)
        yield address
    finally:
        ray.shutdown()
        head.send_signal(signal.SIGTERM)  # --block stops every process of the head when it is stopped
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def pool(cluster):
    pool = RayPool(cluster)
    pool.map(fx.square, [((0,), {})] * pool.size, 60)  # actors up and workers started before anything is timed
    yield pool
    pool.close()


@pytest.mark.slow
def test_a_run_configured_for_ray_scores_its_rewards_there_with_the_local_pool_s_scores(cluster):
    # Before the module's `pool` takes the cluster's two CPUs: this run's pool needs them (and frees them after).
    from grpo_core import configure_scoring, load_rewards
    from grpo_core.rewards.backend import scoring_pool

    (math,) = load_rewards(["math"])
    batch = {"prompts": ["q"] * 6, "answer": ["\\frac{1}{2}", "\\frac{1}{2}", "(1, 2]", "(1, 2]", "7", "x^2"],
             "completions": ["$\\boxed{2/4}$", "$\\boxed{\\frac{1}{3}}$", "$\\boxed{(1,2]}$", "$\\boxed{[1,2]}$",
                             "<answer>7</answer>", "$\\boxed{x\\cdot x}$"]}
    local = math.score(**batch)
    configure_scoring(backend="ray", ray_address=cluster)
    try:
        assert isinstance(scoring_pool(), RayPool)
        assert math.score(**batch) == local == [1.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    finally:
        configure_scoring()
    assert isinstance(scoring_pool(), WorkerPool)
    end = time.monotonic() + 30  # its actors are gone once the cluster has its CPUs back
    while ray.available_resources().get("CPU", 0) < 2 and time.monotonic() < end:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == 2


@pytest.mark.slow
def test_the_pool_is_sized_from_the_clusters_cpus(pool):
    assert pool.size == 2
    assert len(pool.pids()) == 2


@pytest.mark.slow
def test_results_are_identical_to_the_local_pool_with_failures_and_timeouts(pool):
    kinds = ["square"] * 3 + ["reject"] + ["square"] * 2 + ["hang"] + ["square"] * 3 + ["reject"]
    calls = [((kind, x), {}) for x, kind in enumerate(kinds)]
    local = WorkerPool(2)
    try:
        expected = local.map(fx.mixed, calls, 1.0)
        hung_alone = local.map(fx.hang, [((0,), {})], 1.0)
    finally:
        local.close()
    assert expected[3] == Failure("ValueError: no score for 3") and expected[6] is TIMEOUT and expected[9] == 81
    assert pool.map(fx.mixed, calls, 1.0) == expected
    start = time.monotonic()
    hung = pool.map(fx.hang, [((0,), {})], 1.0)
    elapsed = time.monotonic() - start
    assert hung == hung_alone and hung[0] is TIMEOUT
    assert elapsed < 1.0 + 3.0, f"a hung call ran {elapsed:.1f} s against a 1 s limit"
    assert pool.map(fx.square, [((7,), {})], 5.0) == [49]  # the timed-out worker was replaced


@pytest.mark.slow
def test_two_threads_mapping_at_once_get_their_own_results(pool):
    results, spans = {}, {}

    def score(name, offset):
        start = time.monotonic()
        results[name] = pool.map(fx.slow_square, [((offset + x,), {"seconds": 0.05}) for x in range(12)], 10.0)
        spans[name] = (start, time.monotonic())

    threads = [threading.Thread(target=score, args=(name, offset)) for name, offset in (("a", 0), ("b", 100))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert results == {"a": [x * x for x in range(12)], "b": [(100 + x) ** 2 for x in range(12)]}
    assert spans["a"][0] < spans["b"][1] and spans["b"][0] < spans["a"][1], "the two maps did not overlap"


@pytest.mark.slow
def test_the_next_map_after_an_interrupted_one_gets_its_own_results(pool):
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt):  # cut off with an item running and one queued on each actor
            pool.map(fx.slow_square, [((1000 + x,), {"seconds": 1.0}) for x in range(6)], 30.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert pool.map(fx.square, [((x,), {}) for x in range(8)], 30.0) == [x * x for x in range(8)]
    assert pool.map(fx.mixed, [(("hang", 1), {}), (("square", 2), {}), (("square", 3), {})], 1.0) == [TIMEOUT, 4, 9]


@pytest.mark.slow
def test_an_actor_killed_mid_batch_has_its_item_retried_and_the_scores_stay_right(pool):
    victim = pool.pids()[0][0]
    retries = pool.retries
    calls = [((x,), {"seconds": 0.3}) for x in range(10)]
    results = []
    batch = threading.Thread(target=lambda: results.append(pool.map(fx.slow_square, calls, 10.0)))
    batch.start()
    time.sleep(0.5)  # both actors are inside an item
    os.kill(victim, signal.SIGKILL)
    batch.join(60)
    assert results == [[x * x for x in range(10)]]
    assert pool.retries == retries + 1
    for _ in range(50):  # replaced for later calls, once the cluster reports the dead actor's CPU free again
        assert pool.map(fx.square, [((2,), {})], 5.0) == [4]
        actors = [actor for actor, _ in pool.pids()]
        if len(actors) == pool.size:
            break
        time.sleep(0.1)
    assert victim not in actors and len(actors) == pool.size


@pytest.mark.slow
def test_a_pool_larger_than_the_cluster_starts_no_actor_that_cannot_be_placed(pool, monkeypatch):
    """As after a node is lost: an unplaceable actor would hold the items given to it until the deadline."""
    monkeypatch.setattr(ray_pool, "GRACE", 3.0)
    monkeypatch.setattr(pool, "size", pool.size + 1)
    start = time.monotonic()
    assert pool.map(fx.square, [((x,), {}) for x in range(6)], 1.0) == [x * x for x in range(6)]
    assert time.monotonic() - start < 3.0
    assert len(pool.pids()) == 2


@pytest.mark.slow
def test_an_item_whose_actor_dies_on_both_tries_is_a_failure_that_says_so(pool):
    results = pool.map(fx.kill_my_actor, [((1,), {})], 10.0)
    assert len(results) == 1 and isinstance(results[0], Failure), results
    assert results[0].error.startswith("ray worker died on both tries at this item (ActorDiedError")
    assert pool.map(fx.square, [((3,), {}), ((4,), {})], 5.0) == [9, 16]


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout)


CONNECT = """
import sys, time
from grpo_core.errors import UsageError
from grpo_core.rewards.ray_pool import connect
start = time.monotonic()
try:
    connect({address!r})
except UsageError as error:
    print(f"{{time.monotonic() - start:.2f}}"); print(error)
"""


@pytest.mark.slow
@pytest.mark.parametrize("host", ["127.0.0.1", "203.0.113.1"], ids=["refused", "unroutable"])
def test_an_unreachable_cluster_is_a_usage_error_in_seconds_naming_the_address(host):
    address = f"{host}:{free_port()}"
    result = run_python(CONNECT.format(address=address))
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stdout + result.stderr[-2000:]
    assert float(lines[0]) < 5.0
    assert lines[1].startswith(f"cannot reach a Ray cluster at {address} (")
    assert "ray start --head" in lines[1]


def test_without_ray_installed_the_backend_names_the_extra():
    result = run_python("import sys; sys.modules['ray'] = None\n" + CONNECT.format(address="127.0.0.1:6379"))
    assert result.stdout.splitlines()[1] == 'the Ray reward backend needs Ray: pip install "grpo-core[ray]"'


def test_a_malformed_address_is_a_usage_error():
    result = run_python(CONNECT.format(address="head-node"))
    assert result.stdout.splitlines()[1] == ("Ray address 'head-node' is not HOST:PORT; pass the head node's address, "
                                             "e.g. 10.0.0.5:6379")


def test_importing_grpo_core_and_its_rewards_does_not_import_ray():
    result = run_python("import sys, grpo_core, grpo_core.rewards.reward, grpo_core.rewards.ray_pool; "
                        "print('ray' in sys.modules)")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "False"


def test_grpo_run_with_an_unreachable_cluster_stops_before_the_model_loads(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    port = free_port()
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "grpo_core", "--reward", "math", "--dataset", "arithmetic", "--model", "tiny-random",
         "--reward-backend", "ray", "--ray-address", f"127.0.0.1:{port}", "--output-dir", str(out)],
        capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"), timeout=120)
    assert result.returncode == 2, result.stderr
    assert time.monotonic() - started < 60
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: cannot reach a Ray cluster at 127.0.0.1:{port} (Connection refused): start its head there with "
        "`ray start --head`, or pass the address that command printed")
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    assert "Loading" not in result.stderr and "profile:" not in result.stderr
