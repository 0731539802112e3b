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
	log="$(mktemp)"
	if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -parallel=2 "$pkg" 2>&1 | tee "$log"; then
		# Go's fuzzing engine sometimes ends a run with its own "context deadline exceeded"
		# when -fuzztime runs out while a worker is busy; no input failed then, and none was
		# written. Retry that case once; a failing input (written under testdata/fuzz/)
		# fails at once.
		if grep -q "context deadline exceeded" "$log" && ! grep -q "Failing input written" "$log"; then
			echo "== $pkg $name: the fuzzing engine hit its own deadline without a failing input; once more"
			go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -parallel=2 "$pkg"
		else
			rm -f "$log"
			exit 1
		fi
	fi
	rm -f "$log"
done < <(git grep -n -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' -- '*_test.go')
if [ "$found" -eq 0 ]; then
	echo "no fuzz targets found" >&2
	exit 1
fi
echo "fuzzed $found targets"
