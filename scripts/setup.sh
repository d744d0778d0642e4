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
# Prometheus (prometheus, promtool) and Alertmanager (alertmanager, amtool), for tests/deploy:
# Debian's packages, each only when its tool is missing. Without apt (or root) this warns
# instead of failing, and those tests skip saying why.
apt_get=(env DEBIAN_FRONTEND=noninteractive apt-get)
if [ "$(id -u)" -ne 0 ]; then apt_get=(sudo -n "${apt_get[@]}"); fi
apt_updated=
install_debian_package() {  # install_debian_package PACKAGE TOOL WHAT
  if command -v "$2" >/dev/null 2>&1; then return 0; fi
  if command -v apt-get >/dev/null 2>&1 \
    && { [ -n "$apt_updated" ] || "${apt_get[@]}" update -qq >/dev/null 2>&1; } \
    && apt_updated=1 \
    && "${apt_get[@]}" install -y -qq --no-install-recommends "$1" >/dev/null 2>&1; then
    echo "installed Debian's $1 package ($3) for the tests that need it"
  else
    echo "warning: could not install Debian's $1 package; the tests that need $2 will skip" >&2
  fi
}
install_debian_package prometheus promtool "promtool, prometheus"
install_debian_package prometheus-alertmanager amtool "alertmanager, amtool"
# Debian's chromium, which Playwright drives in the review console's browser test
# (tests/console/test_browser.py; Playwright cannot download its own browsers here).
install_debian_package chromium chromium "chromium"
