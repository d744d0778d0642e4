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
# Prometheus' server and promtool, for tests/deploy (Debian's package), only when missing.
# Without apt (or root) this warns instead of failing, and those tests skip saying why.
if ! command -v promtool >/dev/null 2>&1; then
  apt_get=(env DEBIAN_FRONTEND=noninteractive apt-get)
  if [ "$(id -u)" -ne 0 ]; then apt_get=(sudo -n "${apt_get[@]}"); fi
  if command -v apt-get >/dev/null 2>&1 \
    && "${apt_get[@]}" update -qq >/dev/null 2>&1 \
    && "${apt_get[@]}" install -y -qq --no-install-recommends prometheus >/dev/null 2>&1; then
    echo "installed Debian's prometheus package (promtool, prometheus) for tests/deploy"
  else
    echo "warning: could not install Debian's prometheus package; tests/deploy will skip" >&2
  fi
fi
