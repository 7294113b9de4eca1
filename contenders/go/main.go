// Lightweight threads on Go: net/http serves each connection on its own goroutine, and the Go
// scheduler multiplexes goroutines onto GOMAXPROCS threads (by default the CPUs this process
// may run on). /delay is time.Sleep, which parks the goroutine, not a thread; /hash reads with
// os.ReadFile (a blocking syscall: the runtime hands the thread's other goroutines to another
// thread meanwhile); /enrich uses a shared net/http Client with a keep-alive pool.
package main

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
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

// query returns a parameter's first value and whether it was given.
func query(r *http.Request, name string) (string, bool) {
	v, ok := r.URL.Query()[name]
	if !ok {
		return "", false
	}
	return v[0], true
}

var (
	corpusDir      = os.Getenv("IOBOUND_CORPUS_DIR")
	corpusFiles, _ = strconv.Atoi(os.Getenv("IOBOUND_CORPUS_FILES"))
	downstreamURL  = envOr("IOBOUND_DOWNSTREAM_URL", "http://127.0.0.1:8081")
	timeoutMs, _   = strconv.Atoi(envOr("IOBOUND_DOWNSTREAM_TIMEOUT_MS", "2000"))
	// The default transport keeps only 2 idle connections per host; a service calling one
	// downstream under load raises it, as net/http's documentation suggests.
	client = &http.Client{
		Timeout:   time.Duration(timeoutMs) * time.Millisecond,
		Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 90 * time.Second},
	}
)

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func hash(w http.ResponseWriter, r *http.Request) {
	raw, present := query(r, "id")
	id, err := hashID(raw, present, corpusFiles)
	if err == nil {
		raw, present = query(r, "delayMs")
		var wait int
		if wait, err = hashDelayMs(raw, present); err == nil {
			time.Sleep(time.Duration(wait) * time.Millisecond)
		}
	}
	if err != nil {
		text(w, http.StatusBadRequest, err.Error())
		return
	}
	// The file name comes from the parsed number, never from the input.
	bytes, err := os.ReadFile(filepath.Join(corpusDir, strconv.Itoa(id)+".bin"))
	if err != nil {
		text(w, http.StatusInternalServerError, "cannot read file "+strconv.Itoa(id))
		return
	}
	sum := sha512.Sum512(bytes)
	text(w, http.StatusOK, hex.EncodeToString(sum[:]))
}

func enrich(w http.ResponseWriter, r *http.Request) {
	raw, _ := query(r, "key")
	key, err := enrichKey(raw)
	if err != nil {
		text(w, http.StatusBadRequest, err.Error())
		return
	}
	// Not tied to the request's context: the call runs to its end or its timeout.
	value, err := callDownstream(context.Background(), key)
	if err != nil {
		downstreamFailed(w, err)
		return
	}
	text(w, http.StatusOK, key+"="+value)
}

// downstreamFailed answers 502 when the downstream answered non-2xx or the call failed, 504
// when it timed out.
func downstreamFailed(w http.ResponseWriter, err error) {
	var ne net.Error
	var status statusError
	switch {
	case errors.As(err, &status):
		text(w, http.StatusBadGateway, status.Error())
	case errors.As(err, &ne) && ne.Timeout():
		text(w, http.StatusGatewayTimeout, fmt.Sprintf("downstream did not answer within %d ms", timeoutMs))
	default:
		text(w, http.StatusBadGateway, "downstream failed: "+err.Error())
	}
}

// routes serves the contract. ServeMux answers unclean paths ("/a/../b", "//x") with a
// redirect; the contract wants such input rejected, so they get 400 before the mux sees them.
func routes(db messages) http.Handler {
	mux := http.NewServeMux()
	db.register(mux)
	mux.HandleFunc("GET /plaintext", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, plaintext) })
	mux.HandleFunc("GET /delay", delay)
	mux.HandleFunc("GET /hash", hash)
	mux.HandleFunc("GET /enrich", enrich)
	mux.HandleFunc("GET /aggregate", aggregate)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusNotFound, "not found") })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "" || p != path.Clean(p) {
			text(w, http.StatusBadRequest, "path must be clean: no '.', '..' or empty segments")
			return
		}
		// URL.Query drops a parameter it cannot decode ("delayMs=%"), which would read as
		// "not given"; a malformed query is bad input instead.
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			text(w, http.StatusBadRequest, "malformed query string: "+err.Error())
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func main() {
	address := flag.String("address", "127.0.0.1", "IPv4 address to listen on (iobound passes the contender host's)")
	port := flag.Int("port", 8080, "port to listen on")
	version := flag.Bool("version", false, "print the Go runtime's version and exit")
	flag.Parse()
	if *version {
		fmt.Println(runtime.Version())
		return
	}

	if err := servePprof(); err != nil {
		log.Fatalf("profiling endpoint: %v", err)
	}
	pool, err := openPool()
	if err != nil {
		log.Fatalf("database pool: %v", err)
	}
	handler := routes(messages{pool})

	// Go listens with a backlog of the kernel's somaxconn (4096 on the reference machine).
	ln, err := net.Listen("tcp4", net.JoinHostPort(*address, strconv.Itoa(*port)))
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	log.Printf("go %s net/http on %s, GOMAXPROCS=%d", runtime.Version(), ln.Addr(), runtime.GOMAXPROCS(0))
	fmt.Println(runtimeLine())
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
