# Sourced by scripts/test after scripts/setup.sh: the programs only the tests need, never
# the demo. Prometheus (prometheus, promtool), Alertmanager (alertmanager, amtool),
# podman and Chromium: Debian's packages, each only when its tool is missing. Without apt
# (or root) this warns instead of failing, and those tests skip saying why.
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
# podman (with runc) and debootstrap, for tests/deploy/test_image.py: deploy/Dockerfile built
# and run for real, on a stand-in for its base image.
install_debian_package podman podman "podman, to build and run the image"
install_debian_package runc runc "runc, the container runtime podman uses there"
install_debian_package debootstrap debootstrap "debootstrap, for the image's stand-in base"
# Debian's chromium, which Playwright drives in the review console's browser test
# (tests/console/test_browser.py; Playwright cannot download its own browsers here).
install_debian_package chromium chromium "chromium"
