#!/usr/bin/env bash
# Installs what `make test` needs beyond Go and the envtest binaries, before any test runs:
# headless Chromium for the Katalog inspector's browser test. As root with apt-get it installs
# it; otherwise it stops at once and prints the one command that does. A test never skips.
set -euo pipefail

have_chromium() { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }

if have_chromium; then
	exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "testdeps: installing chromium (the Katalog inspector's browser test needs it) ..." >&2
	{ apt-get install -y -qq chromium || { apt-get update -qq && apt-get install -y -qq chromium; }; } >&2
	have_chromium && exit 0
fi
echo "testdeps: chromium is missing, and the Katalog inspector's browser test needs it; install it with:" >&2
echo "  sudo apt-get install -y chromium" >&2
exit 1
