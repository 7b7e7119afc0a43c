#!/usr/bin/env bash
# Runs one benchmark built from an earlier commit and from the working tree alternately, twice
# each (before, after, before, after), and prints their RESULT lines under "## before|after
# round N" headers: on a shared, noisy machine, alternating in one session is what makes a
# before/after comparison fair (benches/RESULTS.md's "before and after" sections).
#
# Usage: bash benches/compare.sh BEFORE_REV BENCH [BENCH ARGS...]
#   e.g. bash benches/compare.sh 9acb196 msgsend 1000000 4 3
# The earlier commit is checked out in a worktree at ${TMPDIR:-/tmp}/pipes-compare-REV with its
# own target directory (created once, reused); remove it with `git worktree remove`.
set -euo pipefail

if (($# < 2)); then
    sed -n '2,11p' "$0"
    exit 2
fi
before=$1
bench=$2
shift 2

root=$(cd "$(dirname "$0")/.." && pwd)
rev=$(git -C "$root" rev-parse --short "$before")
work=${TMPDIR:-/tmp}/pipes-compare-$rev
if [ ! -d "$work" ]; then
    git -C "$root" worktree add --detach "$work" "$rev" >/dev/null
fi

# The remote benchmarks need the root crate's `net` feature.
features=()
case $bench in remote_*) features=(-p pipes --features net) ;; esac

# Builds the bench in a checkout and prints the path of its binary.
build() {
    local dir=$1 target=$2
    (cd "$dir" && CARGO_TARGET_DIR=$target cargo bench -q --no-run "${features[@]}" \
        --bench "$bench" --message-format=json 2>/dev/null) |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["bench"]:
        print(m["executable"])' | tail -n 1
}

old=$(build "$work" "$work/target")
new=$(build "$root" "${CARGO_TARGET_DIR:-$root/target}")
for round in 1 2; do
    echo "## before ($rev) round $round"
    (cd "$work" && "$old" --bench "$@" | grep '^RESULT')
    echo "## after (working tree) round $round"
    (cd "$root" && "$new" --bench "$@" | grep '^RESULT')
done
