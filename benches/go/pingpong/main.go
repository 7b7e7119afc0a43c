// pingpong over Go channels, the peer of benches/pingpong.rs: two goroutines bounce a counter
// back and forth over two channels, so each round trip is two hand-offs to a goroutine that is
// waiting for it; unbuffered and buffered(1) channels.
//
// Run: `go run ./pingpong [ROUND_TRIPS [REPEATS]]` (defaults 1000000 3, as pingpong.rs). As
// there, a measurement stops after two seconds (the clock read every 1024 round trips), every
// implementation runs once before measuring to warm up, and the table shows medians.
package main

import (
	"fmt"
	"runtime"
	"time"

	"pipes-bench-go/common"
)

// timeLimit is how long one measurement of one implementation may take.
const timeLimit = 2 * time.Second

type implementation struct {
	name     string
	capacity int
}

var implementations = []implementation{
	{"go chan unbuffered", 0},
	{"go chan buffered(1)", 1},
}

// run does up to n round trips, stopping early once limit passes, and returns how many it did.
func run(n uint64, limit time.Time, capacity int) uint64 {
	ping := make(chan uint64, capacity)
	pong := make(chan uint64, capacity)
	echoed := make(chan struct{})
	go func() {
		for x := range ping {
			pong <- x + 1
		}
		close(echoed)
	}()
	var done uint64
	for done < n && !(done%1024 == 0 && !time.Now().Before(limit)) {
		ping <- done
		if got := <-pong; got != done+1 {
			panic(fmt.Sprintf("got %d, expected %d", got, done+1))
		}
		done++
	}
	close(ping)
	<-echoed
	return done
}

type sample struct {
	roundTrips uint64
	wall, cpu  float64 // ns per round trip
}

func measure(impl implementation, n uint64) sample {
	var done uint64
	start := time.Now()
	wall, cpu := common.Measure(func() { done = run(n, start.Add(timeLimit), impl.capacity) })
	if done < 1 {
		done = 1
	}
	return sample{done, wall * 1e9 / float64(done), cpu * 1e9 / float64(done)}
}

func main() {
	common.PinProcs()
	numbers := common.NumericArgs()
	roundTrips := common.Arg(numbers, 0, 1000000, 0)
	repeats := int(common.Arg(numbers, 1, 3, 1))

	// Warm up: the first run of each pays for cold caches and lazy initialisation.
	for _, impl := range implementations {
		measure(impl, 2000)
	}
	samples := make([][]sample, len(implementations))
	for r := 0; r < repeats; r++ {
		for i, impl := range implementations {
			samples[i] = append(samples[i], measure(impl, roundTrips))
		}
	}

	fmt.Printf("pingpong: 2 goroutines, GOMAXPROCS %d, median of %d; ns per round trip (two hand-offs)\n",
		runtime.GOMAXPROCS(0), repeats)
	fmt.Printf("| %-28s | %11s | %12s | %11s |\n", "implementation", "round trips", "wall ns/rt", "cpu ns/rt")
	fmt.Printf("|%s|%s|%s|%s|\n", common.Dashes(30), common.Dashes(13), common.Dashes(14), common.Dashes(13))
	type row struct {
		name      string
		n         uint64
		wall, cpu float64
	}
	var rows []row
	for i, impl := range implementations {
		var ns, walls, cpus []float64
		for _, s := range samples[i] {
			ns = append(ns, float64(s.roundTrips))
			walls = append(walls, s.wall)
			cpus = append(cpus, s.cpu)
		}
		r := row{impl.name, uint64(common.Median(ns)), common.Median(walls), common.Median(cpus)}
		rows = append(rows, r)
		fmt.Printf("| %-28s | %11d | %12.0f | %11.0f |\n", r.name, r.n, r.wall, r.cpu)
	}
	fmt.Println()
	for _, r := range rows {
		common.Result(
			common.Field{Key: "bench", Value: "pingpong"},
			common.Field{Key: "impl", Value: r.name},
			common.Field{Key: "round_trips", Value: r.n},
			common.Field{Key: "wall_ns", Value: r.wall},
			common.Field{Key: "cpu_ns", Value: r.cpu},
			common.Field{Key: "per_s", Value: 1e9 / r.wall},
		)
	}
}
