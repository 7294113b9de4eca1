package main

import (
	"encoding/json"
	"math"
	"runtime"
	"runtime/debug"
)

// runtimeLine is the contract's start-up line, "iobound-runtime {json}": the CPUs the process may
// run on (NumCPU reads its affinity) and GOMAXPROCS, which since Go 1.25 also follows a cgroup's
// CPU quota, so a run under --cpus shows which of the two the scheduler believed.
func runtimeLine() string {
	report := map[string]any{
		"language":   "go",
		"go_version": runtime.Version(),
		"cpus":       runtime.NumCPU(),
		"workers":    runtime.GOMAXPROCS(0),
		"workers_of": "Ps (GOMAXPROCS): threads running goroutines at once",
	}
	// A negative argument reads the soft memory limit without changing it.
	if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
		report["memory_limit_mb"] = limit >> 20
	}
	line, err := json.Marshal(report)
	if err != nil {
		panic(err) // a map of numbers and strings always marshals
	}
	return "iobound-runtime " + string(line)
}
