package main

// CPU profiles for `iobound run --profile`: when IOBOUND_PPROF names a loopback address, the
// standard library's pprof handler is served there (never on the contract's port, and not at
// all otherwise), and iobound fetches /debug/pprof/profile?seconds=N during the measured run.

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

func servePprof() error {
	addr := os.Getenv("IOBOUND_PPROF")
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("IOBOUND_PPROF=%q: give a loopback address, e.g. 127.0.0.1:6060", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("pprof on %s (IOBOUND_PPROF)", addr)
	go func() { log.Print(http.Serve(ln, mux)) }()
	return nil
}
