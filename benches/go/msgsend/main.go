// msgsend over Go channels, the peer of benches/msgsend.rs: `workers` goroutines each send
// size/workers requests of 100 to one server goroutine, which sums them and, once every worker
// is done, replies with the total (checked).
//
// Two implementations: one buffered channel shared by every worker (as Rust's
// msgsend-pipes-shared and the shared peers), and one channel per worker with reflect.Select
// (the analog of pipes' port set and crossbeam's Select).
//
// Run: `go run ./msgsend [SIZE WORKERS [REPEATS]]` (defaults 10000 4 3, as the Rust program).
// Prints the 2012 output for each implementation, a table of medians of REPEATS runs, and one
// RESULT line per implementation for benches/run.sh.
package main

import (
	"fmt"
	"reflect"
	"sync"

	"pipes-bench-go/common"
)

// request is what each request adds (2012 sent `bytes(100)`).
const request = 100

// buffer is the shared channel's capacity: Go has no unbounded channel, and a large buffer is
// what comes closest to the Rust peers' unbounded queues without measuring allocation.
const buffer = 1024

type implementation struct {
	name string
	run  func(size, workers uint64) uint64
}

// spawnWorkers starts the workers, worker i sending its share on send(i), and closes each
// worker's channel through done(i) when it finishes.
func spawnWorkers(size, workers uint64, send func(i uint64) chan<- uint64, done func(i uint64)) {
	for i := uint64(0); i < workers; i++ {
		go func(i uint64) {
			ch := send(i)
			for j := uint64(0); j < size/workers; j++ {
				ch <- request
			}
			done(i)
		}(i)
	}
}

// buffered: one buffered channel shared by every worker; the last worker to finish closes it,
// which ends the server's range loop (Go's channels do not count senders).
func buffered(size, workers uint64) uint64 {
	ch := make(chan uint64, buffer)
	var wg sync.WaitGroup
	wg.Add(int(workers))
	go func() {
		wg.Wait()
		close(ch)
	}()
	spawnWorkers(size, workers, func(uint64) chan<- uint64 { return ch }, func(uint64) { wg.Done() })
	reply := make(chan uint64)
	go func() {
		var total uint64
		for n := range ch {
			total += n
		}
		reply <- total
	}()
	return <-reply
}

// selectPerWorker: one buffered channel per worker, each closed by its worker; the server
// selects over the open ones with reflect.Select (a select over a dynamic number of channels).
func selectPerWorker(size, workers uint64) uint64 {
	chans := make([]chan uint64, workers)
	for i := range chans {
		chans[i] = make(chan uint64, buffer/workers+1)
	}
	spawnWorkers(size, workers, func(i uint64) chan<- uint64 { return chans[i] },
		func(i uint64) { close(chans[i]) })
	reply := make(chan uint64)
	go func() {
		cases := make([]reflect.SelectCase, workers)
		for i, ch := range chans {
			cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)}
		}
		var total uint64
		for len(cases) > 0 {
			index, value, ok := reflect.Select(cases)
			if !ok {
				// This worker is done: its closed channel would be ready for ever after.
				cases[index] = cases[len(cases)-1]
				cases = cases[:len(cases)-1]
				continue
			}
			total += value.Uint()
		}
		reply <- total
	}()
	return <-reply
}

// maxSelectWorkers bounds the reflect.Select variant: each receive scans every open channel,
// so its cost grows with the workers (100,000 messages took 0.9 s at 100 workers and 13 s at
// 1,000 on 2 cores), which would dominate the whole suite; above this it is skipped (and says
// so). 16 covers the 4 and 8 workers.
const maxSelectWorkers = 16

var implementations = []implementation{
	{"go buffered chan", buffered},
	{"go chan per worker + reflect.Select", selectPerWorker},
}

func main() {
	common.PinProcs()
	numbers := common.NumericArgs()
	workers := common.Arg(numbers, 1, 4, 1)
	// Every worker sends the same share, so round the size to a multiple of the workers.
	size := common.Arg(numbers, 0, 10000, 0) / workers
	if size < 1 {
		size = 1
	}
	size *= workers
	repeats := int(common.Arg(numbers, 2, 3, 1))

	type row struct {
		name      string
		wall, cpu float64
	}
	var rows []row
	for _, impl := range implementations {
		if impl.name == implementations[1].name && workers > maxSelectWorkers {
			fmt.Printf("%s: skipped above %d workers (a select scans every channel)\n",
				impl.name, maxSelectWorkers)
			continue
		}
		var walls, cpus []float64
		for r := 0; r < repeats; r++ {
			var total uint64
			wall, cpu := common.Measure(func() { total = impl.run(size, workers) })
			if total != size*request {
				panic(fmt.Sprintf("%s: total %d, expected %d", impl.name, total, size*request))
			}
			walls = append(walls, wall)
			cpus = append(cpus, cpu)
		}
		wall, cpu := common.Median(walls), common.Median(cpus)
		fmt.Printf("%s:\n", impl.name)
		fmt.Printf("Count is %d\n", size*request)
		fmt.Printf("Test took %.6f seconds\n", wall)
		fmt.Printf("Throughput=%.0f per sec\n", float64(size)/wall)
		rows = append(rows, row{impl.name, wall, cpu})
	}

	fmt.Printf("\nmsgsend: %d messages from %d workers, median of %d\n", size, workers, repeats)
	fmt.Printf("| %-36s | %10s | %9s | %14s |\n", "implementation", "wall s", "cpu s", "msg/s")
	fmt.Printf("|%s|%s|%s|%s|\n", common.Dashes(38), common.Dashes(12), common.Dashes(11), common.Dashes(16))
	for _, r := range rows {
		fmt.Printf("| %-36s | %10.4f | %9.4f | %14.0f |\n", r.name, r.wall, r.cpu, float64(size)/r.wall)
	}
	fmt.Println()
	for _, r := range rows {
		common.Result(
			common.Field{Key: "bench", Value: "msgsend"},
			common.Field{Key: "size", Value: size},
			common.Field{Key: "workers", Value: workers},
			common.Field{Key: "impl", Value: r.name},
			common.Field{Key: "wall_s", Value: r.wall},
			common.Field{Key: "cpu_s", Value: r.cpu},
			common.Field{Key: "per_s", Value: float64(size) / r.wall},
		)
	}
}
