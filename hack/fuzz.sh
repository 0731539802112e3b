#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME (default 20s) each, one at a time.
# Targets are found by their `func FuzzXxx(f *testing.F)` declarations, so a new one is
# picked up without editing this script. A failing input is written under the package's
# testdata/fuzz/ directory and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-20s}"
assets="$(hack/envtest.sh)"
export KUBEBUILDER_ASSETS="$assets"
found=0
while IFS=: read -r file _ decl; do
	name="$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$decl")"
	pkg="./$(dirname "$file")"
	found=$((found + 1))
	echo "== $pkg $name ($fuzztime)"
	go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -parallel=2 "$pkg"
done < <(git grep -n -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' -- '*_test.go')
if [ "$found" -eq 0 ]; then
	echo "no fuzz targets found" >&2
	exit 1
fi
echo "fuzzed $found targets"
