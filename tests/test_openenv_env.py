"""``--env http://HOST:PORT``: an environment written with openenv's own classes, served by openenv's own server on
127.0.0.1, read as a TRL environment class; checked (a sound one passes, one that pays any submission and one that
shows the answer fail, naming the property), trained, refused at capacity, and gone mid-episode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("openenv")

from cli_helpers import invoke  # noqa: E402
from serve_helpers import Server  # noqa: E402

from grpo_core.plugins import openenv_client  # noqa: E402
from grpo_core.plugins.loading import load_environments  # noqa: E402
from grpo_core.testing import free_port  # noqa: E402

FIXTURES = Path(__file__).parent / "openenv_fixtures"
ROW = {"prompt": [{"role": "user", "content": "What is 6 * 7?"}], "answer": "42"}


class OpenEnvServer:
    """``quiz_envs:APP`` of kind ``kind`` under uvicorn on a free loopback port."""

    def __init__(self, kind: str, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "quiz_envs:APP", "--port", str(self.port), "--log-level", "warning"],
            cwd=FIXTURES, env={**os.environ, "QUIZ_ENV": kind, **env}, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)

    def wait(self) -> "OpenEnvServer":
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the OpenEnv server exited: {self.process.stderr.read()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2):
                    return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the OpenEnv server did not answer /health within 120 s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self.process.stderr.close()


@pytest.fixture(scope="module")
def servers():
    started = {"sound": OpenEnvServer("sound"), "pays-any": OpenEnvServer("pays-any"),
               "leaky": OpenEnvServer("leaky"), "mcp": OpenEnvServer("mcp"),
               "one-session": OpenEnvServer("sound", QUIZ_SESSIONS="1")}
    try:
        yield {kind: server.wait() for kind, server in started.items()}
    finally:
        for server in started.values():
            server.stop()


def test_a_server_is_an_environment_whose_tool_is_its_action(servers):
    from transformers.utils.chat_template_utils import get_json_schema

    url = servers["sound"].url
    [environment] = load_environments([url])
    assert environment.name == "quiz" and environment.spec.tool_names() == ["submit"]
    assert environment.spec.bounds == (0.0, 1.0)  # the observation's reward: ge=0, le=1
    described = get_json_schema(environment.make().submit)["function"]
    assert described["description"] == "Submit the final answer to the question."
    assert described["parameters"]["properties"]["answer"] == {"type": "string",
                                                                 "description": "the final answer, a number"}
    episode = environment.make()
    assert episode.reset(**ROW) == "Submit your answer with the submit tool."
    assert episode.submit(answer="41") == "wrong"
    assert episode.submit(answer="42") == "error: the episode is over; give your answer"  # done: never sent
    assert episode.get_reward() == 0.0
    episode.reset(**ROW)
    assert (episode.submit("42"), episode.get_reward()) == ("right", 1.0)
    episode.reset(**ROW)
    assert episode.get_reward() == 0.0  # an episode with no step earns nothing


def test_a_refused_action_is_answered_with_the_servers_error_and_reset_options_reach_the_server(servers):
    url = servers["sound"].url
    [environment] = load_environments([url], {url: {"level": "3"}})
    episode = environment.make()
    assert episode.reset(**ROW).endswith("Level 3.")  # --env-arg URL.level=3, read as JSON: 3
    refused = episode.submit(answer=["not", "text"])
    assert refused == "error: Invalid message (code: VALIDATION_ERROR)"  # openenv's words, never an exception
    assert episode.submit(answer="42") == "right"  # the session goes on after a refusal


def test_mcp_tools_are_the_tools(servers):
    [environment] = load_environments([servers["mcp"].url])
    assert environment.spec.tool_names() == ["multiply"]
    episode = environment.make()
    episode.reset(**ROW)
    assert episode.multiply(a=6, b=7) == "42"
    assert episode.multiply(a="six", b=7).startswith("error")  # the tool's error is text the model reads
    assert episode.get_reward() == 0.0


@pytest.mark.parametrize("kind, status, named", [
    ("sound", 0, None),
    ("pays-any", 1, "do-nothing violated: an episode that does no work earns at most the low bound 0; this one "
                    "(submit with empty strings) earned 1.0"),
    ("leaky", 1, "the output of submit holds the row's gold answer"),
])
def test_check_passes_a_sound_server_and_names_what_a_buggy_one_pays_for(servers, kind, status, named):
    code, output = invoke("check", "--env", servers[kind].url, "--dataset", "arithmetic", "--max-examples", "30",
                          "--seed", "1")
    assert code == status, output
    if named:
        assert named in " ".join(output.split())
    assert "an OpenEnv server declares no gold episode" in " ".join(output.split())


def test_a_server_at_capacity_is_waited_for_then_named(servers, monkeypatch):
    monkeypatch.setattr(openenv_client, "CAPACITY_WAIT_S", 0.5)
    [environment] = load_environments([servers["one-session"].url])
    first, second = environment.make(), environment.make()
    first.reset(**ROW)
    with pytest.raises(openenv_client.OpenEnvUnreachable, match="at capacity, with 1 episode.*max_concurrent_envs"):
        second.reset(**ROW)
    first.get_reward()  # the episode's session ends with its reward
    second.reset(**ROW)
    assert second.submit(answer="42") == "right"


def test_a_process_that_ends_mid_episode_exits_and_frees_its_session(servers, monkeypatch):
    url = servers["one-session"].url
    script = ("import sys\nfrom grpo_core.plugins.loading import load_environments\n"
              f"[environment] = load_environments([{url!r}])\nepisode = environment.make()\n"
              f"episode.reset(**{ROW!r})\nprint('left mid-episode')\n")
    ended = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert ended.returncode == 0 and "left mid-episode" in ended.stdout, ended.stderr
    monkeypatch.setattr(openenv_client, "CAPACITY_WAIT_S", 5.0)  # the server notices the closed socket
    [environment] = load_environments([url])
    episode = environment.make()
    episode.reset(**ROW)  # the only session is free again
    assert episode.submit(answer="42") == "right"


def test_a_server_gone_mid_episode_is_named_within_seconds():
    server = OpenEnvServer("sound").wait()
    try:
        [environment] = load_environments([server.url])
        episode = environment.make()
        episode.reset(**ROW)
        server.stop()
        started = time.monotonic()
        with pytest.raises(openenv_client.OpenEnvUnreachable, match=f"the OpenEnv server at {server.url} stopped"):
            episode.submit(answer="42")
        with pytest.raises(openenv_client.OpenEnvUnreachable, match=server.url):
            environment.make().reset(**ROW)
        assert time.monotonic() - started < 15
    finally:
        server.stop()


def test_no_server_at_the_url_is_exit_2_in_one_sentence_and_nothing_written(tmp_path):
    url, out = f"http://127.0.0.1:{free_port()}", tmp_path / "out"
    code, output = invoke("check", "--env", url, "--dataset", "arithmetic")
    assert code == 2 and f"environment '{url}': no OpenEnv server answers /schema there" in output, output
    code, output = invoke("--env", url, "--dataset", "arithmetic", "--model", "tiny-random", "--output-dir", out)
    assert code == 2 and "start the server, or check the URL" in output and not out.exists(), output


def test_without_openenv_the_url_is_exit_2_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "openenv", None)
    code, output = invoke("check", "--env", f"http://127.0.0.1:{free_port()}", "--dataset", "arithmetic")
    assert code == 2 and 'needs openenv: pip install "grpo-core[openenv]"' in output, output


def test_a_reset_option_that_is_not_a_name_is_exit_2(servers):
    code, output = invoke("check", "--env", servers["sound"].url, "--dataset", "arithmetic",
                          "--env-arg", f"{servers['sound'].url}.not a name=3")
    assert code == 2 and "is not a name a reset option can have" in output, output


def _training(url: str, out: Path, *extra: str, dataset: str = "products") -> tuple[int, str]:
    return invoke("--env", url, "--dataset", dataset, "--dataset-arg", "size=16", "--model", "tiny-random",
                  "--output-dir", out, "--set", "num_generations=2", "--set", "per_device_train_batch_size=2",
                  "--set", "max_completion_length=24", *extra)


@pytest.mark.slow
def test_grpo_cores_calculator_served_with_openenv_is_checked_and_trained_through_its_url(tmp_path, cache_dir):
    served = Server("--env", "calculator", token=None)
    try:
        code, output = invoke("check", "--env", served.url, "--dataset", "products", "--max-examples", "20")
        assert code == 0, output
        out = tmp_path / "out"
        code, output = _training(served.url, out, "--max-steps", "2")
        assert code == 0, output
        steps = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
        steps = [r for r in steps if "step" in r and "loss" in r]
        assert len(steps) == 2 and all("rewards/calculator/mean" in r and "tools/call_frequency" in r for r in steps)
    finally:
        served.stop()


@pytest.mark.slow
def test_an_environment_written_with_openenvs_classes_trains_two_steps(servers, tmp_path, cache_dir):
    out = tmp_path / "out"
    code, output = _training(servers["sound"].url, out, "--max-steps", "2", dataset="arithmetic")
    assert code == 0, output
    assert "preflight: math, xml-format, quiz: no property failed" in " ".join(output.split()), output
    steps = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in steps if "step" in r and "loss" in r]
    assert len(steps) == 2 and all("rewards/quiz/mean" in r and "tools/call_frequency" in r for r in steps)


@pytest.mark.slow
def test_a_server_gone_mid_run_ends_it_with_a_checkpoint_and_one_line_naming_the_url(tmp_path, cache_dir):
    server = OpenEnvServer("sound", QUIZ_LIVES="2").wait()  # step 1's two episodes, then it exits
    try:
        out = tmp_path / "out"
        code, output = _training(server.url, out, "--max-steps", "3", "--no-preflight")
        assert code != 0 and f"the OpenEnv server at {server.url}" in output, output
        assert "checkpoint of step 1 saved" in output and (out / "checkpoint-1").is_dir(), output
    finally:
        server.stop()
