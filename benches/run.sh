#!/usr/bin/env bash
# Runs the whole benchmark suite (the Rust programs in benches/, and the Go programs in
# benches/go when `go` is installed), then benches/report.py turns the RESULT lines they print
# into benches/results/latest.md (machine, commands, tables of medians with ratios to
# crossbeam-channel) and one SVG chart per benchmark.
#
# Usage: bash benches/run.sh [--quick]
#   --quick: one repeat and smaller sizes (under a minute), to check the suite end to end;
#            the numbers are then only indicative, and latest.md says so.
# Without it every configuration is repeated 5 times (the programs' REPEATS argument: each
# program prints medians) and the run takes about 8-9 minutes on 2 cores (288 s measured with
# the machine loaded before the seeds' workloads, which add about 2 minutes, and the remote
# benchmarks about 1.5 more).
#
# Raw output of every command goes to benches/results/raw/, so a table can be traced back to
# the lines it came from. Honours CARGO_TARGET_DIR.
set -euo pipefail

quick=0
for arg in "$@"; do
    case "$arg" in
        --quick) quick=1 ;;
        -h | --help)
            sed -n '2,14p' "$0"
            exit 0
            ;;
        *)
            echo "run.sh: unknown argument $arg (only --quick)" >&2
            exit 2
            ;;
    esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
results=benches/results
raw=$results/raw
rm -rf "$raw"
mkdir -p "$raw"
commands=$results/commands.txt
: >"$commands"
started=$(date +%s)

if ((quick)); then
    repeats=1
    pingpong_trips=100000
    sessions=100000
    port_set_messages=100000
    msgsend_sweep_size=100000
    msgsend_workers="1 2 4 8 100 1000"
    # tasks:laps for the ring, a tenth of the full run's laps.
    ring_configs="2:2000 8:500 100:100 503:5"
    # The seeds' workloads: farm SMALL LARGE MAX_WORKERS, pipeline ELEMENTS MAX_STAGES, and
    # producer-consumer item counts (each a sleep-bound 1 ms x items / 5 per mode and program).
    farm_args="10000 20 4"
    pipeline_args="200000 8"
    producer_consumer_items="500"
    # Remote sessions over loopback: round trips, and messages from 4 workers.
    remote_trips=20000
    remote_messages=200000
else
    repeats=5
    pingpong_trips=1000000
    sessions=1000000
    port_set_messages=1000000
    msgsend_sweep_size=1000000
    # Not 2012's 10000 workers: crossbeam's Select, rebuilt over every open channel for each
    # message, takes ~40 s a run there (3.8 s at 1000), minutes of the suite for one row.
    msgsend_workers="1 2 4 8 100 1000"
    # Laps chosen so that the slowest peer's token ring (std mpsc and flume park on every hop,
    # ~15 us; kanal's is ~180 us a hop at 503 threads) stays within a few seconds a run.
    ring_configs="2:20000 8:5000 100:1000 503:50"
    # The seeds' sizes, except the large farm grain (100 elements of 5 ms, not 50,000: that
    # would be minutes a run) and producer-consumer's 50,000 items (11 s a run, over 2 minutes
    # even at one repeat; RESULTS.md has a run of it by hand).
    farm_args="50000 100 4"
    pipeline_args="1000000 16"
    producer_consumer_items="500 5000"
    remote_trips=100000
    remote_messages=1000000
fi

# Runs one command, recording it in commands.txt and its output in raw/NAME.txt.
run() {
    local name=$1
    shift
    echo "\$ $*" | tee -a "$commands"
    local t0=$SECONDS
    "$@" >"$raw/$name.txt" 2>"$raw/$name.stderr" || {
        echo "run.sh: '$*' failed; see $raw/$name.stderr" >&2
        exit 1
    }
    echo "  ($((SECONDS - t0)) s)"
    # Empty stderr files (the usual case) are noise in the results directory.
    [[ -s "$raw/$name.stderr" ]] || rm -f "$raw/$name.stderr"
}

# Build everything first, so no benchmark's first run pays for compilation.
echo "building the Rust benchmarks..."
cargo bench --no-run -q 2>"$raw/build.stderr" || {
    cat "$raw/build.stderr" >&2
    exit 1
}
# The remote benchmarks need the root crate's `net` feature (pipes-net, on tokio).
cargo bench --no-run -q --features net --bench remote_pingpong --bench remote_msgsend \
    2>"$raw/build.stderr" || {
    cat "$raw/build.stderr" >&2
    exit 1
}
rm -f "$raw/build.stderr"

have_go=0
gobin=
if command -v go >/dev/null 2>&1; then
    have_go=1
    gobin=$(mktemp -d)
    trap 'rm -rf "$gobin"' EXIT
    echo "building the Go benchmarks..."
    for program in msgsend ring pingpong producer_consumer; do
        (cd benches/go && go build -o "$gobin/$program" "./$program")
    done
    echo "(Go programs are built from benches/go with 'go build'; their commands show as go/NAME)" >>"$commands"
else
    echo "go is not installed: the Go programs (benches/go) are skipped" | tee -a "$commands"
fi

# A Go program, named as in commands.txt (go/NAME) rather than by its temporary path.
go_run() {
    local name=$1 program=$2
    shift 2
    echo "\$ go/$program $*" | tee -a "$commands"
    local t0=$SECONDS
    "$gobin/$program" "$@" >"$raw/$name.txt" 2>"$raw/$name.stderr" || {
        echo "run.sh: go/$program $* failed; see $raw/$name.stderr" >&2
        exit 1
    }
    echo "  ($((SECONDS - t0)) s)"
    [[ -s "$raw/$name.stderr" ]] || rm -f "$raw/$name.stderr"
}

run pingpong cargo bench -q --bench pingpong -- "$pingpong_trips" "$repeats"
if ((have_go)); then go_run go-pingpong pingpong "$pingpong_trips" "$repeats"; fi

# What a session costs to make and end (one thread; no Go peer).
run sessions cargo bench -q --bench sessions -- "$sessions" "$repeats"

# msgsend: the issue's default and 2012 configurations, then a sweep of workers at one size
# for the chart (8 workers at 1000000 is both, so it is not run twice).
msgsend_configs="10000:4"
for w in $msgsend_workers; do
    msgsend_configs+=" $msgsend_sweep_size:$w"
done
[[ " $msgsend_configs " == *" 1000000:8 "* ]] || msgsend_configs+=" 1000000:8"
for config in $msgsend_configs; do
    size=${config%:*} workers=${config#*:}
    run "msgsend-$size-$workers" cargo bench -q --bench msgsend -- "$size" "$workers" "$repeats"
    if ((have_go)); then go_run "go-msgsend-$size-$workers" msgsend "$size" "$workers" "$repeats"; fi
done

for config in $ring_configs; do
    tasks=${config%:*} laps=${config#*:}
    run "ring-$tasks" cargo bench -q --bench ring -- "$tasks" "$laps" "$repeats"
    if ((have_go)); then go_run "go-ring-$tasks" ring "$tasks" "$laps" "$repeats"; fi
done

run port_set cargo bench -q --bench port_set -- "$port_set_messages" "$repeats"

# Seed 000 (FastFlow's task-farm and pipeline with feedback) and seed 003 (producer-consumer,
# whose Go program is the seed's own).
# shellcheck disable=SC2086 # the argument lists split on purpose
run farm cargo bench -q --bench farm -- $farm_args "$repeats"
# shellcheck disable=SC2086
run pipeline cargo bench -q --bench pipeline -- $pipeline_args "$repeats"
for items in $producer_consumer_items; do
    run "producer_consumer-$items" cargo bench -q --bench producer_consumer -- "$items" "$repeats"
    if ((have_go)); then
        go_run "go-producer_consumer-$items" producer_consumer "$items" "$repeats"
    fi
done

# Remote sessions over loopback TCP (issue 15): pipes-net against the same programs written by
# hand with tokio, tokio-util's codec and postcard.
run remote_pingpong cargo bench -q --features net --bench remote_pingpong -- \
    "$remote_trips" "$repeats"
run remote_msgsend cargo bench -q --features net --bench remote_msgsend -- \
    "$remote_messages" 4 "$repeats"

# The machine the numbers come from.
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "commit: $(git rev-parse --short HEAD) ($(git log -1 --format=%s | cut -c1-80))"
    if [[ -n "$(git status --porcelain -- src benches/*.rs benches/common benches/fastflow benches/go Cargo.toml 2>/dev/null)" ]]; then
        echo "working tree: uncommitted changes to the measured code"
    fi
    echo "uname: $(uname -srm)"
    echo "rustc: $(rustc --version)"
    if ((have_go)); then echo "go: $(go version)"; else echo "go: not installed (Go rows skipped)"; fi
    echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "lscpu:"
    lscpu | grep -E '^(Architecture|CPU\(s\)|Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Hypervisor vendor|L1d cache|L2 cache|L3 cache|CPU max MHz)' | sed 's/^/  /'
} >"$results/machine.txt"

elapsed=$(($(date +%s) - started))
quick_flag=()
((quick)) && quick_flag=(--quick)
python3 benches/report.py "$results" --seconds "$elapsed" --repeats "$repeats" "${quick_flag[@]}"
echo "wrote $results/latest.md and the charts in $results/ (${elapsed} s)"
