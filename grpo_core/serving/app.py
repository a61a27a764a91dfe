"""The ASGI application of ``grpo-run serve`` (FastAPI, run by uvicorn): the endpoints, the size cap, the token.

Scoring runs in threads off the event loop (``Reward.score`` waits on the shared worker pool), so requests that
arrive together are scored together, on every core.
"""

from __future__ import annotations

import asyncio
import hmac

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.requests import ClientDisconnect

from grpo_core.errors import RewardError
from grpo_core.rewards.reward import Reward
from grpo_core.serving.protocol import RequestError, answer, batch_for, catalogue_entry, openrlhf_batches, parse_json

OPENRLHF_PATH = "/get_reward"


def create_app(rewards: dict[str, Reward], openrlhf: list[tuple[Reward, float]], *, max_bytes: int,
               token: str | None = None, environments: dict[str, str] | None = None) -> FastAPI:
    """The server of ``rewards`` (by name); ``openrlhf`` is what ``POST /get_reward`` sums, each with its weight.
    ``environments`` (name -> path) are the OpenEnv apps mounted beside, which ``/health`` lists."""
    app = FastAPI(title="grpo-run serve", docs_url=None, redoc_url=None, openapi_url=None)
    expected = f"Bearer {token}".encode() if token else None

    @app.exception_handler(RequestError)
    async def refused(request: Request, error: RequestError) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=error.status)

    @app.exception_handler(ClientDisconnect)
    async def gone(request: Request, error: ClientDisconnect) -> Response:
        return Response(status_code=400)  # nobody is left to read it

    @app.exception_handler(Exception)
    async def failed(request: Request, error: Exception) -> JSONResponse:
        return JSONResponse({"error": f"the server failed on this request: {type(error).__name__}: {error}"},
                            status_code=500)

    def authorize(request: Request) -> None:
        given = request.headers.get("authorization", "").encode()
        if expected is not None and not hmac.compare_digest(given, expected):
            raise RequestError(401, "this server needs its token: send the header 'Authorization: Bearer TOKEN'")

    async def read_json(request: Request):
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > max_bytes):
            raise RequestError(413, f"the body is {length} bytes, over this server's limit of {max_bytes}; send "
                                    "smaller batches or start the server with a larger --max-request-mb")
        body = bytearray()
        async for chunk in request.stream():  # counted as it arrives: a body without a length is capped too
            body += chunk
            if len(body) > max_bytes:
                raise RequestError(413, f"the body is over this server's limit of {max_bytes} bytes; send smaller "
                                        "batches or start the server with a larger --max-request-mb")
        return parse_json(bytes(body))

    async def score(reward: Reward, completions: list, prompts: list | None, columns: dict) -> tuple[list, list]:
        try:
            return await asyncio.to_thread(reward.score_with_reasons, prompts, completions, None, **columns)
        except RewardError as error:
            raise RequestError(422, str(error)) from None

    @app.get("/health")
    async def health() -> JSONResponse:
        return JSONResponse({"status": "ok", "rewards": sorted(rewards),
                             **({"environments": environments} if environments else {})})

    @app.get("/rewards")
    async def catalogue(request: Request) -> JSONResponse:
        authorize(request)
        return JSONResponse({"rewards": [catalogue_entry(reward) for reward in rewards.values()],
                             "openrlhf": [{"name": r.__name__, "weight": weight} for r, weight in openrlhf]})

    @app.post("/rewards/{name}")
    async def score_one(name: str, request: Request) -> JSONResponse:
        authorize(request)
        reward = rewards.get(name)
        if reward is None:
            raise RequestError(404, f"reward '{name}' is not served here; served: {', '.join(sorted(rewards))} "
                                    f"(start the server with --reward {name})")
        completions, prompts, columns = batch_for(reward, await read_json(request))
        return JSONResponse(answer(*await score(reward, completions, prompts, columns)))

    @app.post(OPENRLHF_PATH)
    async def get_reward(request: Request) -> JSONResponse:
        authorize(request)
        if not openrlhf:
            raise RequestError(404, f"no rewards are summed for {OPENRLHF_PATH}; start the server with "
                                    "--openrlhf-reward NAME[=WEIGHT] (or name them with --reward)")
        data = await read_json(request)
        batches = openrlhf_batches(data, [reward for reward, _ in openrlhf])
        results = await asyncio.gather(*(score(reward, *batch) for (reward, _), batch in zip(openrlhf, batches)))
        total = [0.0] * len(data["query"])
        logs = {}
        for (reward, weight), (scores, reasons) in zip(openrlhf, results):
            # OpenRLHF needs a number per item: an unscored reward adds nothing (as TRL's sum), and says so
            logs[reward.__name__] = [0.0 if s is None else s for s in scores]
            logs[f"{reward.__name__}/unscored"] = [0.0 if reason is None else 1.0 for reason in reasons]
            for index, value in enumerate(scores):
                if value is not None:
                    total[index] += weight * value
        return JSONResponse({"rewards": total, "scores": total, "extra_logs": logs})

    return app
