#!/usr/bin/env bash
# Browser tests of the dashboard (web/e2e): installs what they need (Debian's
# Chromium when missing and we are root; playwright-core from package-lock.json,
# never a browser download), then runs the unit tests (overlay, markdown, and
# roles.js against the server's auth/rules.go) and the browser
# tests against a freshly built server (on its demo corpus; annotate.test.mjs
# on notes of its own). Screenshots land in
# web/e2e/screenshots/. Exits non-zero on any failure.
#   web/e2e/run.sh                       from anywhere
#   DEIDCORPUS_BIN=path web/e2e/run.sh   test an already built binary
set -euo pipefail
cd "$(dirname "$0")"

export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "web/e2e: installing Debian's chromium" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "web/e2e: $CHROMIUM is missing; install Debian's chromium (apt-get install chromium) or set CHROMIUM" >&2
    exit 1
  fi
fi
command -v node >/dev/null || { echo "web/e2e: node is missing" >&2; exit 1; }

if [ ! -d node_modules/playwright-core ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
fi

node --test overlay.test.mjs markdown.test.mjs roles.test.mjs
node --test --test-reporter=spec compare.test.mjs
node --test --test-reporter=spec dashboard.test.mjs
node --test --test-reporter=spec annotate.test.mjs
