# Sourced by scripts/test and scripts/demo: a virtualenv with the project, and the contracts' npm packages.
# Re-running is cheap: each step is skipped when its inputs have not changed since the last run.
set -euo pipefail
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then "$PYTHON" -m venv .venv; fi
stamp=.venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[dev]'
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
