// Package common holds what the Go benchmark programs share with benches/common/mod.rs: CPU
// time, medians, numeric arguments, and the machine-readable RESULT line that benches/run.sh
// parses (the same format the Rust programs print).
package common

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PinProcs fixes GOMAXPROCS to the number of CPUs (Go's default), so an inherited GOMAXPROCS
// in the environment cannot make the Go rows incomparable with the Rust ones.
func PinProcs() {
	runtime.GOMAXPROCS(runtime.NumCPU())
}

// CPUTime is the CPU time of the whole process (every thread), user plus system: reported
// beside wall time, since a spinning receiver can buy wall time with CPU.
func CPUTime() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		panic(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

// UserSystemTime is the process's user and system CPU time apart, as `time` reports them
// (benches/common/mod.rs's user_system_time; seed 003's figures show both).
func UserSystemTime() (user, system time.Duration) {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		panic(err)
	}
	return time.Duration(usage.Utime.Nano()), time.Duration(usage.Stime.Nano())
}

// Median is the median of some measurements (the upper one of an even count, as the Rust
// programs take it).
func Median(values []float64) float64 {
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	return sorted[len(sorted)/2]
}

// NumericArgs are the program's numeric arguments in order; anything else (such as `--bench`,
// which cargo passes to the Rust programs) is skipped, so both take the same command lines.
func NumericArgs() []uint64 {
	var numbers []uint64
	for _, arg := range os.Args[1:] {
		if n, err := strconv.ParseUint(arg, 10, 64); err == nil {
			numbers = append(numbers, n)
		}
	}
	return numbers
}

// Arg is argument i, or fallback when it is missing, and never below min.
func Arg(numbers []uint64, i int, fallback, min uint64) uint64 {
	n := fallback
	if i < len(numbers) {
		n = numbers[i]
	}
	if n < min {
		n = min
	}
	return n
}

// Measure runs f once and returns its wall and CPU seconds.
func Measure(f func()) (wall, cpu float64) {
	cpu0, start := CPUTime(), time.Now()
	f()
	return time.Since(start).Seconds(), (CPUTime() - cpu0).Seconds()
}

// Field is one key=value pair of a RESULT line.
type Field struct {
	Key   string
	Value any
}

// Result prints one machine-readable line: `RESULT key=value ...`, strings quoted when they
// hold a space, floats with enough digits for nanoseconds.
func Result(fields ...Field) {
	var b strings.Builder
	b.WriteString("RESULT")
	for _, f := range fields {
		var v string
		switch x := f.Value.(type) {
		case string:
			v = x
			if strings.ContainsAny(v, " \"") {
				v = strconv.Quote(v)
			}
		case float64:
			v = strconv.FormatFloat(x, 'g', 9, 64)
		default:
			v = fmt.Sprint(x)
		}
		fmt.Fprintf(&b, " %s=%s", f.Key, v)
	}
	fmt.Println(b.String())
}

// Dashes is a markdown table's rule of n dashes.
func Dashes(n int) string {
	return strings.Repeat("-", n)
}
