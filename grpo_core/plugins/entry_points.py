"""The ``grpo`` entry points of the installed distributions, read from their ``.dist-info`` (or ``.egg-info``)
folders as ``importlib.metadata.entry_points`` finds them (the folders of ``sys.path`` in order, a distribution's
first copy only, each folder's distributions in the order the folder lists them), without importing
``importlib.metadata``: its import (the email parser, zipfile, csv) costs a listing more than the reading does.
Where something else could hold distributions (a zip or an egg on ``sys.path``, a finder of its own on
``sys.meta_path``), ``importlib.metadata`` reads them instead."""

from __future__ import annotations

import importlib
import os
import re
import sys
from dataclasses import dataclass
from functools import reduce


@dataclass(frozen=True)
class EntryPoint:
    """One entry point: ``name = module:attribute`` of the distribution ``distribution`` at ``version``."""

    name: str
    value: str
    distribution: str
    version: str

    def load(self):
        """The object the entry point names, imported (``module``, ``module:attribute``; extras are ignored)."""
        module, _, attributes = self.value.partition("[")[0].partition(":")
        return reduce(getattr, filter(None, attributes.strip().split(".")), importlib.import_module(module.strip()))


def entry_points(group: str) -> list[EntryPoint]:
    """Every entry point of ``group``, in the order ``importlib.metadata.entry_points(group=group)`` gives them."""
    folders = _dist_info_folders()
    if folders is None:
        return _from_importlib_metadata(group)
    found = []
    for folder in folders:
        text = _read(folder, "entry_points.txt")
        points = _group(text, group) if text else []
        if points:
            name, version = name_and_version(folder)
            found.extend(EntryPoint(key, value, name, version) for key, value in points)
    return found


def version(distribution: str) -> str:
    """The installed version of ``distribution``, or "" where it is not installed."""
    folders = _dist_info_folders()
    if folders is None:
        from importlib import metadata

        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            return ""
    wanted = _normalize(distribution)
    for folder in folders:
        if _normalize(os.path.basename(folder).lower().rpartition(".")[0].partition("-")[0]) == wanted:
            return name_and_version(folder)[1]
    return ""


def name_and_version(folder: str) -> tuple[str, str]:
    """A distribution's name and version, from the head of its METADATA file (the headers end at the first blank
    line; the email parser, which ``importlib.metadata`` reads the whole file with, is not needed for two fields)."""
    fields: dict[str, str] = {}
    for line in (_read(folder, "METADATA") or _read(folder, "PKG-INFO") or "").splitlines():
        if not line.strip():
            break
        key, colon, value = line.partition(":")
        if colon and key in ("Name", "Version"):
            fields.setdefault(key, value.strip())
    if len(fields) < 2:
        from importlib import metadata
        from pathlib import Path

        dist = metadata.PathDistribution(Path(folder))
        return dist.name, dist.version
    return fields["Name"], fields["Version"]


def _dist_info_folders() -> list[str] | None:
    """Each distribution's ``.dist-info`` (or ``.egg-info``) folder, first copy first, or None where
    importlib.metadata must look."""
    from importlib.machinery import PathFinder

    if any(hasattr(finder, "find_distributions") and finder is not PathFinder for finder in sys.meta_path):
        return None
    folders, seen = [], set()
    for entry in sys.path:
        root = entry or "."
        if os.path.basename(root).lower().endswith(".egg") or os.path.isfile(root):
            return None
        try:
            children = os.listdir(root)
        except OSError:
            continue
        names: dict[str, list[str]] = {}  # grouped by name, in the order each name first appears
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                names.setdefault(_normalize(low.rpartition(".")[0].partition("-")[0]), []).append(child)
        for name, children_of_name in names.items():
            for child in children_of_name:
                if name not in seen:
                    seen.add(name)
                    folders.append(os.path.join(root, child))
    return folders


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _read(folder: str, name: str) -> str | None:
    try:
        with open(os.path.join(folder, name), encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return None


def _group(text: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` lines of section ``[group]`` of an entry_points.txt."""
    points, section = [], None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section == group:
            name, _, value = line.partition("=")
            points.append((name.strip(), value.strip()))
    return points


def _from_importlib_metadata(group: str) -> list[EntryPoint]:
    from importlib import metadata

    found = []
    for point in metadata.entry_points(group=group):
        dist = point.dist
        name, version = (dist.name, dist.version) if dist is not None else ("unknown", "")
        found.append(EntryPoint(point.name, point.value, name, version))
    return found
