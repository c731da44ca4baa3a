#!/bin/sh
# `npm test`'s pre-step (package.json "pretest"): installs the Debian/Ubuntu programs the tests drive when one is
# missing, so that the README's one test command passes on a fresh machine; .ci/run runs the same `npm test`.
# Each such test FAILS (never skips) without its program. Does nothing when all are there.
# Before installing it says what it will install, as root, and which tests need each package. To decline, set
# HL_DEADMAN_TEST_DEPS=print: it prints the install command and stops (exit 1) without installing anything.
# It needs root or a password-less sudo (sudo -n); without either it names the command to run and fails.
set -eu

need=""
why=""
has() { command -v "$1" >/dev/null 2>&1; }
want() { need="$need $1"; why="$why
  $1: $2"; }
has systemd-analyze || want systemd "systemd-analyze verifies the unit files (test/deploy/systemd.test.ts, the README recipe in test/docs/recipe.test.ts)"
{ has promtool && has prometheus; } ||
  want prometheus "promtool checks the alert rules; a live Prometheus scrapes a daemon (test/observability, test/docs/alerts.test.ts)"
has amtool || want prometheus-alertmanager "amtool checks the Alertmanager example (test/observability)"
{ has chromium || has chromium-browser; } ||
  want chromium "loads the status page headless and takes a screenshot (test/surface)"
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] ||
  want fonts-dejavu-core "the status page's screenshot needs a font (test/surface)"
faketime_lib=""
for f in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
  [ -e "$f" ] && faketime_lib="$f"
done
[ -n "$faketime_lib" ] ||
  want faketime "libfaketime sets the daemon's wall clock while the monotonic clock stays real (clock tests)"
has etcd || want etcd-server "a real etcd for the replica-coordination tests (test/app/coordination.test.ts)"
has socat || want socat "runs the shell engine of docs/operations.md (test/deploy/engine-snippets.test.ts)"
has python3 ||
  want python3 "runs the Python engine module engines/python/ (test/deploy/engine-snippets.test.ts, python-engine.test.ts, test/docs/recipe.test.ts)"

[ -z "$need" ] && exit 0

command="apt-get install -y --no-install-recommends$need"
if [ "${HL_DEADMAN_TEST_DEPS:-}" = "print" ]; then
  echo "hl-deadman tests: these Debian packages are missing; the tests that drive them fail without them:$why" >&2
  echo "HL_DEADMAN_TEST_DEPS=print: nothing installed. To install them yourself:" >&2
  echo "  sudo apt-get update && sudo $command" >&2
  exit 1
fi
if ! has apt-get; then
  echo "hl-deadman tests: missing Debian packages:$need, and no apt-get here to install them." >&2
  echo "Install the programs they provide (see scripts/test-deps.sh), then run npm test again." >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  as=""
elif has sudo && sudo -n true 2>/dev/null; then
  as="sudo -n"
else
  echo "hl-deadman tests: missing Debian packages:$need" >&2
  echo "Installing them needs root (or a password-less sudo), which this shell does not have. Run:" >&2
  echo "  sudo apt-get update && sudo $command" >&2
  echo "then npm test again." >&2
  exit 1
fi
echo "hl-deadman tests: installing as root, with apt-get, the Debian packages the tests drive:$why" >&2
echo "(to decline: HL_DEADMAN_TEST_DEPS=print npm test prints the command and installs nothing)" >&2
$as apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $as apt-get install -y -qq --no-install-recommends $need >/dev/null
