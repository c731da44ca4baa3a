#!/bin/sh
# `npm test`'s pre-step (package.json "pretest"): installs the Debian/Ubuntu programs the tests drive when one is
# missing, so that the README's one test command passes on a fresh machine; .ci/run runs the same `npm test`.
# Each such test FAILS (never skips) without its program. Does nothing when all are there.
#   systemd-analyze (systemd)               verifies the systemd unit files
#   promtool, prometheus (prometheus)       check and unit-test the alert rules; a live Prometheus scrapes a daemon
#   amtool (prometheus-alertmanager)        checks the Alertmanager example
#   chromium (+ fonts-dejavu-core)          loads the status page headless and takes a screenshot
#   libfaketime (faketime)                  steps the daemon's wall clock while the monotonic clock stays real
#   etcd (etcd-server)                      the replica-coordination tests (test/app/coordination.test.ts)
#   socat (socat)                           runs the shell engine snippet of docs/operations.md ("Cancel on disconnect")
#   rustc (rustc)                           compiles and runs that section's Rust engine snippet
# It needs root or a password-less sudo (sudo -n); without either it names the command to run and fails.
set -eu

need=""
has() { command -v "$1" >/dev/null 2>&1; }
has systemd-analyze || need="$need systemd"
{ has promtool && has prometheus; } || need="$need prometheus"
has amtool || need="$need prometheus-alertmanager"
{ has chromium || has chromium-browser; } || need="$need chromium"
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need="$need fonts-dejavu-core"
faketime_lib=""
for f in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
  [ -e "$f" ] && faketime_lib="$f"
done
[ -n "$faketime_lib" ] || need="$need faketime"
has etcd || need="$need etcd-server"
has socat || need="$need socat"
has rustc || need="$need rustc"

[ -z "$need" ] && exit 0

command="apt-get install -y --no-install-recommends$need"
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
echo "hl-deadman tests: installing$need (apt-get; the tests drive these programs)" >&2
$as apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $as apt-get install -y -qq --no-install-recommends $need >/dev/null
