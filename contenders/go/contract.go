package main

// Input rules of the iobound contract (contract/README.md).

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
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

const (
	defaultLimit = 20
	maxLimit     = 100
	maxText      = 1000
	maxBodyBytes = 64 * 1024
)

// messageLimit parses the limit of GET /messages: absent means 20, otherwise 1..100.
func messageLimit(raw string, present bool) (int, error) {
	if !present {
		return defaultLimit, nil
	}
	n, err := decimal(raw, "limit", maxLimit)
	if err == nil && n < 1 {
		err = fmt.Errorf("%w: limit must be an integer between 1 and %d", errBadRequest, maxLimit)
	}
	return n, err
}

// messageID parses the id in /messages/{id}: 1..19 decimal digits, at least 1, within 64 bits.
func messageID(raw string) (int64, error) {
	bad := fmt.Errorf("%w: id must be a positive integer", errBadRequest)
	if len(raw) == 0 || len(raw) > 19 {
		return 0, bad
	}
	var v int64
	for _, c := range []byte(raw) {
		if c < '0' || c > '9' {
			return 0, bad
		}
		d := int64(c - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, bad
		}
		v = v*10 + d
	}
	if v < 1 {
		return 0, bad
	}
	return v, nil
}

// messageText reads the text of a create/update body: a JSON object whose "text" is a string
// of 1..1000 characters (code points).
func messageText(body []byte) (string, error) {
	var parsed map[string]any
	if err := json.Unmarshal(body, &parsed); err != nil || parsed == nil {
		return "", fmt.Errorf("%w: body must be a JSON object with \"text\"", errBadRequest)
	}
	text, ok := parsed["text"].(string)
	// U+0000 cannot be stored in PostgreSQL text: refused like any other invalid text.
	if !ok || text == "" || utf8.RuneCountInString(text) > maxText || strings.ContainsRune(text, 0) {
		return "", fmt.Errorf("%w: \"text\" must be a string of 1..%d characters", errBadRequest, maxText)
	}
	return text, nil
}
