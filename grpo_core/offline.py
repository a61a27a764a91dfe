"""The Hugging Face hub only when a run needs it: offline mode for local models and data, fast failure without a network."""

from __future__ import annotations

import os
from contextlib import contextmanager
from urllib.parse import urlparse

_TRUE = {"1", "true", "yes", "on"}
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
TELEMETRY_VARIABLES = ("HF_HUB_DISABLE_TELEMETRY", "DISABLE_TELEMETRY", "DO_NOT_TRACK")


def forced_offline() -> bool:
    """The user set ``HF_HUB_OFFLINE`` (or one of its siblings): nothing may be fetched."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in OFFLINE_VARIABLES)


def _set_constants(offline: bool) -> None:
    # The libraries read these variables once, at import; patch the modules already imported.
    import sys

    hub = sys.modules.get("huggingface_hub.constants")
    if hub is not None:
        hub.HF_HUB_OFFLINE = offline
        hub.HF_HUB_DISABLE_TELEMETRY = hub.HF_HUB_DISABLE_TELEMETRY or offline
    config = sys.modules.get("datasets.config")
    if config is not None:
        config.HF_HUB_OFFLINE = config.HF_DATASETS_OFFLINE = offline
    hub_utils = sys.modules.get("transformers.utils.hub")
    if hub_utils is not None and hasattr(hub_utils, "_is_offline_mode"):
        hub_utils._is_offline_mode = offline


def go_offline() -> None:
    """From now on in this process the hub libraries read only local files and send no telemetry."""
    for name in OFFLINE_VARIABLES:
        os.environ[name] = "1"
    for name in TELEMETRY_VARIABLES:
        os.environ[name] = "1"
    _set_constants(True)


@contextmanager
def offline_mode():
    """Offline for the duration of the block (unless it already was), restored after."""
    saved = {name: os.environ.get(name) for name in OFFLINE_VARIABLES + TELEMETRY_VARIABLES}
    go_offline()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _set_constants(forced_offline())


def needs_network(error: BaseException) -> bool:
    """True when ``error`` (or one it was raised from) says the hub could not be reached or was not allowed."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ConnectionError) or type(error).__name__ in {
            "OfflineModeIsEnabled", "LocalEntryNotFoundError", "ConnectError", "ConnectTimeout",
        }:
            return True
        error = error.__cause__ or error.__context__
    return False


def hub_host() -> str:
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    return urlparse(endpoint).hostname or "huggingface.co"


def hub_reachable(timeout: float = 3.0) -> bool:
    """One connection attempt to the hub, given up after ``timeout`` seconds (no retries)."""
    import socket

    if forced_offline():
        return False
    try:
        with socket.create_connection((hub_host(), 443), timeout=timeout):
            return True
    except OSError:
        return False


def cached_model(repo_id: str) -> bool:
    """True when the hub model ``repo_id`` is in the local Hugging Face cache (its config.json is)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except (ValueError, OSError):  # an id the hub library rejects is not cached
        return False
