package main

import (
	"errors"
	"math"
	"net/http/httptest"
	"strings"
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

func TestUncleanPathsAreRejectedNotRedirected(t *testing.T) {
	h := routes(messages{})
	for target, want := range map[string]int{
		"/plaintext":                  200,
		"/delay?ms=1":                 200,
		"/plaintext/../../etc/passwd": 400,
		"//plaintext":                 400,
		"/./plaintext":                400,
		"/nope":                       404,
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "http://127.0.0.1"+target, nil)
		req.URL.Path = strings.SplitN(target, "?", 2)[0] // keep the raw, uncleaned path
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("GET %s = %d, want %d", target, rec.Code, want)
		}
	}
}

func TestHashIDsStayInsideTheCorpus(t *testing.T) {
	if v, err := hashID("9", true, 10); err != nil || v != 9 {
		t.Errorf("hashID(9) = %d, %v", v, err)
	}
	for _, raw := range []string{"", "10", "-1", "abc", "1.bin", "../../etc/passwd", "99999999999999999999", " 1"} {
		if _, err := hashID(raw, true, 10); !errors.Is(err, errBadRequest) {
			t.Errorf("hashID(%q) accepted", raw)
		}
	}
	if _, err := hashID("", false, 10); !errors.Is(err, errBadRequest) {
		t.Errorf("missing id accepted")
	}
	if v, err := hashDelayMs("", false); err != nil || v != 0 {
		t.Errorf("absent delayMs = %d, %v", v, err)
	}
	if _, err := hashDelayMs("", true); !errors.Is(err, errBadRequest) {
		t.Errorf("empty delayMs accepted")
	}
}

func TestEnrichKeysAreChecked(t *testing.T) {
	if k, err := enrichKey("fast-abc_1"); err != nil || k != "fast-abc_1" {
		t.Errorf("enrichKey = %q, %v", k, err)
	}
	for _, raw := range []string{"", strings.Repeat("k", 65), "a b", "../admin", "été", "a/b"} {
		if _, err := enrichKey(raw); !errors.Is(err, errBadRequest) {
			t.Errorf("enrichKey(%q) accepted", raw)
		}
	}
}

func TestMessageInputs(t *testing.T) {
	if n, err := messageLimit("", false); n != 20 || err != nil {
		t.Fatalf("absent limit: %d %v", n, err)
	}
	if n, err := messageLimit("100", true); n != 100 || err != nil {
		t.Fatalf("limit 100: %d %v", n, err)
	}
	for _, bad := range []string{"", "0", "101", "-1", "ten"} {
		if _, err := messageLimit(bad, true); !errors.Is(err, errBadRequest) {
			t.Errorf("limit %q accepted", bad)
		}
	}
	if id, err := messageID("9223372036854775807"); id != math.MaxInt64 || err != nil {
		t.Fatalf("max id: %d %v", id, err)
	}
	for _, bad := range []string{"", "0", "-1", "abc", "1.5", "9223372036854775808", "99999999999999999999"} {
		if _, err := messageID(bad); !errors.Is(err, errBadRequest) {
			t.Errorf("id %q accepted", bad)
		}
	}
	emoji := strings.Repeat("\U0001F600", 1000)
	if text, err := messageText([]byte(`{"text":"` + emoji + `"}`)); text != emoji || err != nil {
		t.Fatalf("1,000 characters: %v", err)
	}
	for _, bad := range []string{`{"text":""}`, `{"text":42}`, `{}`, `["text"]`, `null`, `{"text":"a`, `{"text":"a\u0000b"}`, `{"text":"` + strings.Repeat("a", 1001) + `"}`} {
		if _, err := messageText([]byte(bad)); !errors.Is(err, errBadRequest) {
			t.Errorf("body %.40q accepted", bad)
		}
	}
}

func TestAggregateKeys(t *testing.T) {
	if keys, err := aggregateKeys("a,b-1,C_2"); err != nil || strings.Join(keys, "|") != "a|b-1|C_2" {
		t.Errorf("aggregateKeys = %v, %v", keys, err)
	}
	for _, raw := range []string{"", "a,,b", ",a", "a,../x", strings.Repeat("k,", 16) + "k"} {
		if _, err := aggregateKeys(raw); !errors.Is(err, errBadRequest) {
			t.Errorf("aggregateKeys(%q) accepted", raw)
		}
	}
}
