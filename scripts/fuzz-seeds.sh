#!/usr/bin/env bash
# fuzz-seeds.sh: every Fuzz target under core/ for a few seconds each (make fuzz-seeds).
#
# A duration-bound `go test -fuzz` on Go 1.26 can fail with a bare "context
# deadline exceeded" at the -fuzztime boundary and no failing input: a race in
# Go's fuzzing coordinator (go.dev/issue/75804, fixed in Go 1.27), seen here on
# a loaded machine. A count bound (-fuzztime Nx) avoids it but the targets run
# at 100 to 400,000 execs a second, so no one count fits. Instead a run that
# fails with exactly that message and wrote no new input under testdata/fuzz is
# run once more; any other failure, or a failing input written, fails at once.
set -euo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}

# corpus DIR T: a digest of the failing inputs go test has written for T.
corpus() { { ls -R "$1/testdata/fuzz/$2" 2>/dev/null || true; } | md5sum; }

for t in $($GO test -list '^Fuzz' ./core/... | grep '^Fuzz'); do
  pkg= dir=
  while read -r p d; do
    if grep -l "func $t(" "$d"/*_test.go >/dev/null 2>&1; then pkg=$p dir=$d; break; fi
  done < <($GO list -f '{{.ImportPath}} {{.Dir}}' ./core/...)
  [ -n "$pkg" ] || { echo "fuzz-seeds: no package declares $t" >&2; exit 1; }
  for attempt in 1 2; do
    echo "fuzz $pkg $t"
    before=$(corpus "$dir" "$t")
    out=$(mktemp)
    if $GO test -run '^$' -fuzz "^$t\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 2s "$pkg" 2>&1 | tee "$out"; then
      rm -f "$out"; break
    fi
    after=$(corpus "$dir" "$t")
    if [ "$attempt" = 1 ] && [ "$before" = "$after" ] && grep -qx '    context deadline exceeded' "$out"; then
      echo "fuzz-seeds: $t stopped on Go's fuzztime race (go.dev/issue/75804) with no failing input; running it once more"
      rm -f "$out"; continue
    fi
    rm -f "$out"; exit 1
  done
done
