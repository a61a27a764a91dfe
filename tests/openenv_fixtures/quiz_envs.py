"""The example OpenEnv environment (examples/environments/openenv_quiz.py) and its buggy twins, served by openenv's own
server (``create_fastapi_app``): one that pays any submission, one whose wrong-answer observation shows the answer,
and one of MCP tools. ``python -m uvicorn quiz_envs:APP`` serves one, ``APP`` named by ``QUIZ_ENV`` (sound,
pays-any, leaky, mcp), with ``QUIZ_SESSIONS`` sessions at once; with ``QUIZ_LIVES``, the server exits after that
many resets. A reset option ``level`` is shown in reset's observation."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "environments"))

from openenv.core.env_server import Observation, State, create_fastapi_app  # noqa: E402
from openenv_quiz import Quiz as Example, QuizObservation, SubmitAction  # noqa: E402

RESETS, LIVES = 0, int(os.environ.get("QUIZ_LIVES", "1000000000"))


class Quiz(Example):
    """The example, counting its resets and showing a reset option."""

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, **row: Any) -> QuizObservation:
        global RESETS
        RESETS += 1
        if RESETS > LIVES:  # the server goes away, as a crashed or redeployed one does
            os._exit(1)
        observation = super().reset(seed, episode_id, **row)
        if "level" in row:
            observation.text += f" Level {row['level']}."
        return observation


class PaysAny(Quiz):
    """The bug: any submission is paid (the comparison was left out)."""

    def paid(self, given: str) -> bool:
        return True


class Leaky(Quiz):
    """The bug: a wrong answer is told the right one and may try again."""

    def step(self, action: SubmitAction, timeout_s: Optional[float] = None, **kwargs: Any) -> QuizObservation:
        if self.paid(action.answer.strip()):
            return QuizObservation(text="right", done=True, reward=1.0)
        return QuizObservation(text=f"wrong: the answer is {self._answer}; try again", reward=0.0)


def _mcp_app():
    from fastmcp import FastMCP
    from openenv.core.env_server import CallToolAction, CallToolObservation
    from openenv.core.env_server.mcp_environment import MCPEnvironment

    class Arithmetic(MCPEnvironment):
        """MCP tools: multiply two whole numbers."""

        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            mcp = FastMCP("arithmetic")
            self._state = State()

            @mcp.tool
            def multiply(a: int, b: int) -> str:
                """Multiply two whole numbers exactly."""
                return str(a * b)

            super().__init__(mcp)

        def reset(self, seed=None, episode_id=None, **row):
            self._state = State(episode_id=episode_id, step_count=0)
            return Observation(done=False, reward=None)

        def _step_impl(self, action, timeout_s=None, **kwargs):
            return Observation(done=False, reward=0.0, metadata={"error": "unknown action"})

        @property
        def state(self):
            return self._state

    return create_fastapi_app(Arithmetic, CallToolAction, CallToolObservation, max_concurrent_envs=64)


KINDS = {"sound": Quiz, "pays-any": PaysAny, "leaky": Leaky}
KIND = os.environ.get("QUIZ_ENV", "sound")
SESSIONS = int(os.environ.get("QUIZ_SESSIONS", "64"))
APP = _mcp_app() if KIND == "mcp" else create_fastapi_app(KINDS[KIND], SubmitAction, QuizObservation,
                                                          max_concurrent_envs=SESSIONS)
