package main

// Input rules of the iobound contract (contract/README.md).

import (
	"errors"
	"fmt"
)

const plaintext = "Hello, World!"
const maxDelayMs = 60000

var errBadRequest = errors.New("bad request")

// delayMs parses the ms query parameter of /delay: a decimal integer in 0..60000.
func delayMs(raw string, present bool) (int, error) {
	if !present || raw == "" {
		return 0, fmt.Errorf("%w: query parameter ms is required, e.g. /delay?ms=100", errBadRequest)
	}
	bad := fmt.Errorf("%w: ms must be an integer between 0 and %d", errBadRequest, maxDelayMs)
	if len(raw) > 6 {
		return 0, bad
	}
	v := 0
	for _, c := range []byte(raw) {
		if c < '0' || c > '9' {
			return 0, bad
		}
		v = v*10 + int(c-'0')
	}
	if v > maxDelayMs {
		return 0, bad
	}
	return v, nil
}
