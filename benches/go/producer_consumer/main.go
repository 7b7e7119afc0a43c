// producer_consumer over a Go buffered channel, the peer of benches/producer_consumer.rs and
// seed 003's Go program: 5 producer and 5 consumer goroutines share one channel of capacity
// 100; when every producer is done the channel is closed, and the consumers range over it
// until it is empty and closed. I/O-bound mode sleeps 1 ms before each produce, compute-bound
// mode 1 ms after each consume; producer p makes items p, p+5, ... below ITEMS. Every run
// checks that each item was consumed exactly once.
//
// Run: `go run ./producer_consumer [ITEMS [REPEATS]]` (defaults 5000 3, as the Rust program).
// Prints one table per mode with the median total (wall), user and system time of REPEATS
// runs, measured with getrusage around each run, and one RESULT line per mode for
// benches/run.sh.
package main

import (
	"fmt"
	"sync"
	"time"

	"pipes-bench-go/common"
)

const (
	producers = 5
	consumers = 5
	capacity  = 100
	latency   = time.Millisecond
)

type mode int

const (
	ioBound mode = iota
	computeBound
)

// run runs the program once and returns the items each consumer took.
func run(items uint64, m mode) [][]uint64 {
	ch := make(chan uint64, capacity)
	var producing sync.WaitGroup
	producing.Add(producers)
	for p := uint64(0); p < producers; p++ {
		go func(p uint64) {
			defer producing.Done()
			for item := p; item < items; item += producers {
				if m == ioBound {
					time.Sleep(latency)
				}
				ch <- item
			}
		}(p)
	}
	go func() {
		producing.Wait()
		close(ch)
	}()
	results := make(chan []uint64)
	for c := 0; c < consumers; c++ {
		go func() {
			var taken []uint64
			for item := range ch {
				taken = append(taken, item)
				if m == computeBound {
					time.Sleep(latency)
				}
			}
			results <- taken
		}()
	}
	all := make([][]uint64, 0, consumers)
	for c := 0; c < consumers; c++ {
		all = append(all, <-results)
	}
	return all
}

// check panics unless every item below items was taken exactly once.
func check(items uint64, taken [][]uint64) {
	seen := make([]bool, items)
	var count uint64
	for _, list := range taken {
		for _, item := range list {
			if item >= items || seen[item] {
				panic(fmt.Sprintf("item %d taken twice or out of range", item))
			}
			seen[item] = true
			count++
		}
	}
	if count != items {
		panic(fmt.Sprintf("%d items taken, expected %d", count, items))
	}
}

func main() {
	common.PinProcs()
	numbers := common.NumericArgs()
	items := common.Arg(numbers, 0, 5000, 1)
	repeats := int(common.Arg(numbers, 1, 3, 1))
	ideal := float64((items+producers-1)/producers) * latency.Seconds()
	const name = "go buffered chan(100)"

	for _, m := range []struct {
		mode       mode
		name, what string
	}{
		{ioBound, "io", "I/O-bound (1 ms sleep before each produce)"},
		{computeBound, "compute", "compute-bound (1 ms sleep after each consume)"},
	} {
		var walls, users, systems []float64
		for r := 0; r < repeats; r++ {
			user, system := common.UserSystemTime()
			start := time.Now()
			taken := run(items, m.mode)
			wall := time.Since(start).Seconds()
			userAfter, systemAfter := common.UserSystemTime()
			check(items, taken)
			walls = append(walls, wall)
			users = append(users, (userAfter - user).Seconds())
			systems = append(systems, (systemAfter - system).Seconds())
		}
		wall, user, system := common.Median(walls), common.Median(users), common.Median(systems)
		fmt.Printf("\nproducer-consumer, %s: %d items, %d producers, %d consumers, buffer %d, "+
			"median of %d; sleep-bound ideal %.3f s\n", m.what, items, producers, consumers,
			capacity, repeats, ideal)
		fmt.Printf("| %-24s | %8s | %8s | %8s |\n", "implementation", "total s", "user s", "system s")
		fmt.Printf("|%s|%s|%s|%s|\n", common.Dashes(26), common.Dashes(10), common.Dashes(10), common.Dashes(10))
		fmt.Printf("| %-24s | %8.3f | %8.3f | %8.3f |\n", name, wall, user, system)
		common.Result(
			common.Field{Key: "bench", Value: "producer_consumer"},
			common.Field{Key: "mode", Value: m.name},
			common.Field{Key: "items", Value: items},
			common.Field{Key: "impl", Value: name},
			common.Field{Key: "wall_s", Value: wall},
			common.Field{Key: "user_s", Value: user},
			common.Field{Key: "sys_s", Value: system},
			common.Field{Key: "cpu_s", Value: user + system},
			common.Field{Key: "ideal_s", Value: ideal},
		)
	}
}
