package main

// /aggregate: the fan-out. One goroutine per key under an errgroup with a context, the way Go
// services fan out in 2026: the first call to fail cancels the context every other call's
// request carries, which aborts those requests (their connections are closed), and Wait
// returns the first error. The values are answered in key order.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"
)

// maxAggregateKeys is the most keys one /aggregate may name.
const maxAggregateKeys = 16

// aggregateKeys checks the keys of /aggregate: 1..16 comma-separated keys, each as for /enrich.
func aggregateKeys(raw string) ([]string, error) {
	keys := strings.Split(raw, ",")
	if len(keys) > maxAggregateKeys {
		return nil, fmt.Errorf("%w: keys must be 1 to %d comma-separated keys", errBadRequest, maxAggregateKeys)
	}
	for _, k := range keys {
		if _, err := enrichKey(k); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// statusError is a downstream answer that was not 2xx.
type statusError int

func (s statusError) Error() string { return "downstream answered " + strconv.Itoa(int(s)) }

// callDownstream asks the downstream for key's value; ctx aborts the request. /enrich makes the
// same call, under a context that is never cancelled.
func callDownstream(ctx context.Context, key string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, downstreamURL+"/value?key="+key, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", statusError(resp.StatusCode)
	}
	return string(body), nil
}

func aggregate(w http.ResponseWriter, r *http.Request) {
	raw, _ := query(r, "keys")
	keys, err := aggregateKeys(raw)
	if err != nil {
		text(w, http.StatusBadRequest, err.Error())
		return
	}
	values := make([]string, len(keys))
	g, ctx := errgroup.WithContext(r.Context())
	for i, key := range keys {
		g.Go(func() error {
			v, err := callDownstream(ctx, key)
			values[i] = v
			return err
		})
	}
	if err := g.Wait(); err != nil {
		downstreamFailed(w, err)
		return
	}
	body, _ := json.Marshal(values)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
