package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestTheRuntimeLineCarriesWhatTheSchedulerUses(t *testing.T) {
	line := runtimeLine()
	body, found := strings.CutPrefix(line, "iobound-runtime ")
	if !found {
		t.Fatalf("no prefix: %q", line)
	}
	var got struct {
		CPUs      int    `json:"cpus"`
		Workers   int    `json:"workers"`
		WorkersOf string `json:"workers_of"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("not JSON: %v (%q)", err, body)
	}
	if got.CPUs != runtime.NumCPU() || got.Workers != runtime.GOMAXPROCS(0) || got.WorkersOf == "" {
		t.Errorf("got %+v; want cpus %d, workers %d", got, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	}
}
