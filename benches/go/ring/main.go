// ring over Go channels, the peer of benches/ring.rs (msgsend-ring-pipes, 2012): num_tasks
// goroutines in a ring, each sending to its right neighbour and receiving from its left,
// msg_per_task times, in the same two modes:
//   - throughput: every goroutine sends, then receives, so one message per link is in flight;
//   - token (the benchmarks-game thread-ring): one message circulates, measuring hand-off latency.
//
// Links are channels of capacity 1: throughput mode needs a slot per link (every goroutine
// sends before it receives, so unbuffered links would deadlock), and one slot is all either
// mode ever uses. Token mode also runs over unbuffered channels, the benchmarks-game setup.
//
// Run: `go run ./ring [NUM_TASKS MSG_PER_TASK [REPEATS]]` (defaults 100 1000 3, as ring.rs).
package main

import (
	"fmt"

	"pipes-bench-go/common"
)

type mode int

const (
	throughput mode = iota
	token
)

type implementation struct {
	name     string
	capacity int
	// Whether the implementation runs in throughput mode (unbuffered links cannot).
	throughput bool
}

var implementations = []implementation{
	{"go chan(1)", 1, true},
	{"go chan(0)", 0, false},
}

// run runs the ring and returns the sum of what goroutine 0 received (checked by the caller).
func run(tasks int, laps uint64, m mode, capacity int) uint64 {
	// Link i goes from goroutine i to goroutine i + 1.
	links := make([]chan uint64, tasks)
	for i := range links {
		links[i] = make(chan uint64, capacity)
	}
	sums := make([]chan uint64, tasks)
	for i := 0; i < tasks; i++ {
		sums[i] = make(chan uint64, 1)
		go func(i int, right chan<- uint64, left <-chan uint64) {
			var received uint64
			for lap := uint64(0); lap < laps; lap++ {
				if m == throughput || (i == 0 && lap == 0) {
					right <- uint64(i) * lap
				}
				n := <-left
				received += n
				if m == token && !(i == 0 && lap+1 == laps) {
					right <- n + 1
				}
			}
			sums[i] <- received
		}(i, links[i], links[(i+tasks-1)%tasks])
	}
	results := make([]uint64, tasks)
	for i := range sums {
		results[i] = <-sums[i]
	}
	return results[0]
}

// expected is what goroutine 0 must have received, the same formula as ring.rs.
func expected(tasks int, laps uint64, m mode) uint64 {
	var sum uint64
	for k := uint64(0); k < laps; k++ {
		if m == throughput {
			sum += uint64(tasks-1) * k
		} else {
			sum += k*uint64(tasks) + uint64(tasks) - 1
		}
	}
	return sum
}

func main() {
	common.PinProcs()
	numbers := common.NumericArgs()
	tasks := int(common.Arg(numbers, 0, 100, 2))
	laps := common.Arg(numbers, 1, 1000, 1)
	repeats := int(common.Arg(numbers, 2, 3, 1))
	messages := uint64(tasks) * laps

	for _, m := range []mode{throughput, token} {
		title, modeName := "throughput (a message per link in flight)", "throughput"
		if m == token {
			title, modeName = "token (one message circulates)", "token"
		}
		type row struct {
			name      string
			wall, cpu float64
		}
		var rows []row
		for _, impl := range implementations {
			if m == throughput && !impl.throughput {
				continue
			}
			var walls, cpus []float64
			for r := 0; r < repeats; r++ {
				var sum uint64
				wall, cpu := common.Measure(func() { sum = run(tasks, laps, m, impl.capacity) })
				if want := expected(tasks, laps, m); sum != want {
					panic(fmt.Sprintf("%s: sum %d, expected %d", impl.name, sum, want))
				}
				walls = append(walls, wall)
				cpus = append(cpus, cpu)
			}
			rows = append(rows, row{impl.name, common.Median(walls), common.Median(cpus)})
		}
		first := rows[0].wall
		fmt.Printf("\nring, %s: %d tasks x %d messages, median of %d\n", title, tasks, laps, repeats)
		fmt.Printf("Sent %d messages in %.6f seconds\n", messages, first)
		fmt.Printf("  %.0f messages / second\n", float64(messages)/first)
		fmt.Printf("  %.3f µs / message\n", first*1e6/float64(messages))
		fmt.Printf("| %-20s | %10s | %9s | %12s | %10s |\n", "implementation", "wall s", "cpu s", "msg/s", "µs/msg")
		fmt.Printf("|%s|%s|%s|%s|%s|\n", common.Dashes(22), common.Dashes(12), common.Dashes(11), common.Dashes(14), common.Dashes(12))
		for _, r := range rows {
			fmt.Printf("| %-20s | %10.4f | %9.4f | %12.0f | %10.3f |\n",
				r.name, r.wall, r.cpu, float64(messages)/r.wall, r.wall*1e6/float64(messages))
		}
		for _, r := range rows {
			common.Result(
				common.Field{Key: "bench", Value: "ring"},
				common.Field{Key: "mode", Value: modeName},
				common.Field{Key: "tasks", Value: tasks},
				common.Field{Key: "laps", Value: laps},
				common.Field{Key: "impl", Value: r.name},
				common.Field{Key: "wall_s", Value: r.wall},
				common.Field{Key: "cpu_s", Value: r.cpu},
				common.Field{Key: "per_s", Value: float64(messages) / r.wall},
				common.Field{Key: "us_per_msg", Value: r.wall * 1e6 / float64(messages)},
			)
		}
	}
}
