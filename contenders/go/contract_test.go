package main

import (
	"errors"
	"testing"
)

func TestAcceptsTheWholeRange(t *testing.T) {
	for raw, want := range map[string]int{"0": 0, "100": 100, "60000": 60000, "007": 7} {
		got, err := delayMs(raw, true)
		if err != nil || got != want {
			t.Errorf("delayMs(%q) = %d, %v; want %d", raw, got, err, want)
		}
	}
}

func TestRejectsEverythingElse(t *testing.T) {
	if _, err := delayMs("", false); !errors.Is(err, errBadRequest) {
		t.Errorf("missing ms: %v", err)
	}
	for _, raw := range []string{"", "-1", "+5", "1.5", "abc", "60001", "99999999999999999999", " 5", "５", "1e3"} {
		if _, err := delayMs(raw, true); !errors.Is(err, errBadRequest) {
			t.Errorf("delayMs(%q) accepted", raw)
		}
	}
}
