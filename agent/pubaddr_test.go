package agent

import (
	"strings"
	"testing"
	"unicode"
)

func TestParsePublishedAddr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw, want, wantErr string
	}{
		{raw: "10.0.0.13", want: "10.0.0.13"},
		{raw: " fd00::5\n", want: "fd00::5"},
		{raw: "::ffff:10.0.0.5", want: "::ffff:10.0.0.5"},
		{raw: "fe80::1%eth0", want: "fe80::1%eth0"},
		{raw: "fe80::1%3", want: "fe80::1%3"},
		{raw: "0000:0000:0000:0000:0000:ffff:255.255.255.255%enp0s31f6abcdef", want: "::ffff:255.255.255.255%enp0s31f6abcdef"},
		{raw: "fe80::1%enp0s31f6abcdefg", wantErr: `"fe80::1%enp0s31f6abcdefg" has a zone that is no interface name`},
		{raw: "fe80::1%a\tb", wantErr: `"fe80::1%a\tb" has a zone that is no interface name`},
		{raw: "fe80::1%é", wantErr: "has a zone that is no interface name"},
		{raw: "10.0.0.5:6443", wantErr: `"10.0.0.5:6443" is not an IP address`},
		{raw: "master.example\nlevel=ERROR", wantErr: `"master.example\nlevel=ERROR" is not an IP address`},
		{raw: "fe80::1%" + strings.Repeat("x\n", 50_000), wantErr: "is not an IP address (100007 bytes)"},
	} {
		a, err := parsePublishedAddr(c.raw)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("parsePublishedAddr(%.40q) = %v, %v; want error %q", c.raw, a, err, c.wantErr)
			}
			continue
		}
		if err != nil || a.String() != c.want {
			t.Errorf("parsePublishedAddr(%q) = %v, %v; want %s", c.raw, a, err, c.want)
		}
	}
}

// FuzzParsePublishedAddr: an address is accepted only with a short,
// printable zone, and a refusal is bounded and printable whatever it read.
func FuzzParsePublishedAddr(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "fd00::5", "fe80::1%eth0", "fe80::1%\n", "::ffff:1.2.3.4", "1.2.3.4:5", "", "fe80::1%" + strings.Repeat("\r\n", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		a, err := parsePublishedAddr(raw)
		if err != nil {
			msg := err.Error()
			if len(msg) > 2*maxAddrText+64 || strings.ContainsFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) }) {
				t.Fatalf("parsePublishedAddr(%q): error not bounded or not printable: %q", raw, msg)
			}
			return
		}
		s := a.String()
		if len(a.Zone()) > maxZone || len(s) > maxAddrText || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) {
			t.Fatalf("parsePublishedAddr(%q) accepted %q", raw, s)
		}
	})
}
