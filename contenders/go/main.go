// Lightweight threads on Go: net/http serves each connection on its own goroutine, and the Go
// scheduler multiplexes goroutines onto GOMAXPROCS threads (by default the CPUs this process
// may run on). /delay is time.Sleep, which parks the goroutine, not a thread.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"path"
	"runtime"
	"strconv"
	"time"
)

func text(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func delay(w http.ResponseWriter, r *http.Request) {
	values := r.URL.Query()
	raw, present := values["ms"]
	first := ""
	if present {
		first = raw[0]
	}
	ms, err := delayMs(first, present)
	if err != nil {
		text(w, http.StatusBadRequest, err.Error())
		return
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
	text(w, http.StatusOK, strconv.Itoa(ms))
}

// routes serves the contract. ServeMux answers unclean paths ("/a/../b", "//x") with a
// redirect; the contract wants such input rejected, so they get 400 before the mux sees them.
func routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /plaintext", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, plaintext) })
	mux.HandleFunc("GET /delay", delay)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusNotFound, "not found") })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "" || p != path.Clean(p) {
			text(w, http.StatusBadRequest, "path must be clean: no '.', '..' or empty segments")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func main() {
	port := flag.Int("port", 8080, "port to listen on (127.0.0.1)")
	flag.Parse()

	handler := routes()

	// Go listens with a backlog of the kernel's somaxconn (4096 on the reference machine).
	ln, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	log.Printf("go %s net/http on %s, GOMAXPROCS=%d", runtime.Version(), ln.Addr(), runtime.GOMAXPROCS(0))
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
