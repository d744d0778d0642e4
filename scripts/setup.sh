# Sourced by scripts/test and scripts/demo: a virtualenv with the project, and the contracts' npm
# packages (anvil among them). What only the tests need is in scripts/setup_test_tools.sh.
# Re-running is cheap: each step is skipped when its inputs have not changed since the last run.
set -euo pipefail
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then "$PYTHON" -m venv .venv; fi
# The packages come from the dev lock (exact versions, each file's sha256), the project itself
# with --no-deps: nothing is resolved here, so every machine and CI get the same versions.
# A lock older than pyproject.toml's dependencies stops here, naming the fix (scripts/lock).
.venv/bin/python scripts/lockfile.py check dev
stamp=.venv/.installed-$(cat pyproject.toml requirements/dev.lock | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --require-hashes -r requirements/dev.lock
  # setuptools' warning that an editable install can be shadowed by a folder named oracle/
  # says nothing new here (PYTHONWARNINGS).
  PYTHONWARNINGS=ignore .venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
  rm -f .venv/.installed-*; touch "$stamp"
fi
if [ -f contracts/package-lock.json ]; then
  npm_stamp=contracts/node_modules/.installed-$(sha256sum contracts/package-lock.json | cut -c1-16)
  if [ ! -f "$npm_stamp" ]; then
    (cd contracts && npm ci --no-audit --no-fund --loglevel=error)
    touch "$npm_stamp"
  fi
  export PATH="$PWD/contracts/node_modules/.bin:$PATH"
fi
