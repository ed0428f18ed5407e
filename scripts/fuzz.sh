#!/usr/bin/env bash
# Runs every fuzz target of the module, each for FUZZTIME (go test -fuzz
# takes one target of one package at a time): the packages with a `func
# Fuzz` in a _test.go file (fuzz/ and a few codec packages' internal ones)
# are found with grep, then `go test -list` names their targets, so two
# packages may each have a target of the same name. A target fails on a
# real finding: Go writes the failing input to
# <pkg>/testdata/fuzz/<target>/ and says so. Go 1.26's coordinator also
# reports a bare "context deadline exceeded" when -fuzztime expires while a
# worker is mid-call on a loaded machine (golang/go#75804, fixed in Go 1.27);
# such a run wrote no input and found nothing, so it is run again, up to
# three times in all. FUZZPARALLEL sets the fuzzing workers (default: one a
# CPU); make test's short runs use one, which leaves a CPU to the
# coordinator and makes the race rare.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-5s}
go=${GO:-go}
parallel=${FUZZPARALLEL:+-parallel=$FUZZPARALLEL}

out=$(mktemp)
trap 'rm -f "$out"' EXIT

# The directories go would build (not testdata, vendor, .x or _x) whose
# tests declare a fuzz target; listing only these keeps -list's compiling
# to a few packages.
pkgs=$(find . \( -name testdata -o -name vendor -o -name '[._]?*' \) -prune -o \
  -name '*_test.go' -type f -print |
  xargs -r grep -l '^func Fuzz' | xargs -r -n1 dirname | sort -u | sed 's|^\.$|./|')
if [ -z "$pkgs" ]; then
  echo "no fuzz targets found" >&2
  exit 1
fi

# go test -list prints a package's matching names, then "ok <import path>".
# Each target becomes "<package dir> <target>", the directory relative to
# the module root.
module=$("$go" list -m)
# shellcheck disable=SC2086 # one argument a package directory
if ! "$go" test -list '^Fuzz' $pkgs >"$out" 2>&1; then
  cat "$out"
  exit 1
fi
targets=$(awk -v mod="$module" '
  /^Fuzz/ { names[n++] = $1; next }
  $1 == "ok" {
    dir = $2 == mod ? "." : "./" substr($2, length(mod) + 2)
    for (i = 0; i < n; i++) print dir, names[i]
    n = 0
  }' "$out")
if [ -z "$targets" ]; then
  cat "$out"
  echo "go test -list found no fuzz targets" >&2
  exit 1
fi

run() { # package dir, target → log in $out; exit status of go test
  "$go" test -run='^$' -fuzz="^$2\$" -fuzztime="$fuzztime" $parallel "$1" </dev/null >"$out" 2>&1
}

while read -r pkg t; do
  echo "fuzz ${pkg#./} $t ($fuzztime)"
  for try in 1 2 3; do
    if run "$pkg" "$t"; then
      continue 2
    fi
    if ! grep -q 'context deadline exceeded' "$out" || grep -q 'Failing input written' "$out"; then
      break
    fi
    echo "  ${pkg#./} $t: the Go fuzz coordinator's deadline race (golang/go#75804), no input written (try $try of 3)"
  done
  cat "$out"
  exit 1
done <<<"$targets"
