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
	return decimal(raw, "ms", maxDelayMs)
}

// hashDelayMs parses the optional delayMs of /hash: absent means 0.
func hashDelayMs(raw string, present bool) (int, error) {
	if !present {
		return 0, nil
	}
	return decimal(raw, "delayMs", maxDelayMs)
}

// hashID parses the id of /hash: a decimal integer naming a corpus file, 0..files-1.
func hashID(raw string, present bool, files int) (int, error) {
	if !present || raw == "" {
		return 0, fmt.Errorf("%w: query parameter id is required, e.g. /hash?id=42", errBadRequest)
	}
	return decimal(raw, "id", files-1)
}

// enrichKey checks the key of /enrich: 1..64 characters of A-Z a-z 0-9 - _.
func enrichKey(raw string) (string, error) {
	bad := fmt.Errorf("%w: key must be 1..64 characters of A-Z a-z 0-9 - _", errBadRequest)
	if len(raw) == 0 || len(raw) > 64 {
		return "", bad
	}
	for _, c := range []byte(raw) {
		ok := (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
		if !ok {
			return "", bad
		}
	}
	return raw, nil
}

func decimal(raw, name string, max int) (int, error) {
	bad := fmt.Errorf("%w: %s must be an integer between 0 and %d", errBadRequest, name, max)
	if len(raw) == 0 || len(raw) > 10 {
		return 0, bad
	}
	v := 0
	for _, c := range []byte(raw) {
		if c < '0' || c > '9' {
			return 0, bad
		}
		v = v*10 + int(c-'0')
	}
	if v > max {
		return 0, bad
	}
	return v, nil
}
