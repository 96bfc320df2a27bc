package context

import (
	"strings"
	"testing"
	"time"
)

func TestParseTokenTTL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"1h": "", "15m": "", "24h": "", "90m": "",
		"14m59s": "outside 15m to 24h", "24h1s": "outside 15m to 24h", "8760h": "outside 15m to 24h",
		"0": "not a positive duration", "-1h": "not a positive duration", "1 day": "not a positive duration", "": "not a positive duration",
	} {
		d, err := ParseTokenTTL(in)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", in, err)
		case want == "" && d <= 0:
			t.Errorf("%q: got %s", in, d)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
	if d, _ := ParseTokenTTL(DefaultTokenTTL); d != time.Hour {
		t.Errorf("default TTL %s, want 1h", d)
	}
}
