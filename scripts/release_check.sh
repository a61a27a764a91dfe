#!/usr/bin/env bash
# Publishing is one step away: build every sdist and wheel (grpo-core and each folder under plugins/),
# `twine check` them, install the wheels into a clean venv and run `grpo-run check` there.
# The steps are tests/test_packaging.py; this keeps the files it builds in dist/ for `twine upload dist/*`.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}

rm -rf dist
mkdir dist
GRPO_RELEASE_DIR="$PWD/dist" "$python" -m pytest -q -p no:cacheprovider tests/test_packaging.py
echo "release check passed; the distributions are in dist/:"
ls dist
