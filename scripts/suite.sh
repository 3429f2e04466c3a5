# Sourced by the heavy test suites (make test-windows, test-vscode, test-e2e, test-neovim,
# test-vsix, test-agents). Each suite installs what it needs where it can (into $VTCODE_CACHE, or
# with apt-get as root). What it cannot get on this machine, it reports in one line that says what
# is missing and how to run it, and the suite passes without running: a contributor without root
# or network still gets a clear result from make test. With CI=true (CI is root with the
# registries reachable) nothing may be missing: the same line is an error and the suite fails.
#
# The suite sets SUITE (its make target) and SUITE_HOW (how to run it) before calling these.

# suite_ci: whether this run is CI, which runs every suite.
suite_ci() {
  case ${CI:-} in true | TRUE | True | 1 | yes) return 0 ;; esac
  return 1
}

# suite_unavailable WHAT: WHAT is missing and cannot be installed here. Ends the suite: exit 0
# with one line on stdout, or, in CI, exit 1 with the line on stderr.
suite_unavailable() {
  if suite_ci; then
    echo "$SUITE: FAIL: CI runs every suite, but this one cannot run here: it needs $1" >&2
    exit 1
  fi
  echo "$SUITE: not run: it needs $1; to run it: $SUITE_HOW"
  exit 0
}

# suite_can_install: whether apt-get can install system packages here (root, or sudo without a
# password) and apt-get exists.
suite_can_install() {
  command -v apt-get >/dev/null || return 1
  [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null
}

# SUITE_CANNOT_INSTALL is the exit status of an install script (editors/scripts/install-*.sh,
# editors/vscode/scripts/prepare.sh) that could not get what a suite needs from this machine,
# as opposed to a failure of the code under test.
SUITE_CANNOT_INSTALL=3
