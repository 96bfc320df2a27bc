package certgrant

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"filippo.io/age"
)

func testRecipient(t testing.TB) string {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id.Recipient().String()
}

func TestCheckPresentation(t *testing.T) {
	t.Parallel()
	r := testRecipient(t)
	good := "onekube-cp-recipient/1\nvm 5\nrecipient " + r + "\n"
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"as served", good, true},
		{"no final newline", strings.TrimSuffix(good, "\n"), true},
		{"another VM", strings.Replace(good, "vm 5", "vm 7", 1), false},
		{"leading zero", strings.Replace(good, "vm 5", "vm 05", 1), false},
		{"signed VM ID", strings.Replace(good, "vm 5", "vm +5", 1), false},
		{"unknown format", strings.Replace(good, "/1", "/2", 1), false},
		{"an extra line", good + "recipient " + r + "\n", false},
		{"carriage returns", strings.ReplaceAll(good, "\n", "\r\n"), false},
		{"not a recipient", strings.Replace(good, r, "age1notakey", 1), false},
		{"upper-case recipient", strings.Replace(good, r, strings.ToUpper(r), 1), false},
		{"empty", "", false},
		{"too long", good + strings.Repeat("x", maxPresentation), false},
	} {
		p, err := CheckPresentation([]byte(c.body), 5)
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v", c.name, err)
			continue
		}
		if c.ok && (p.VMID != 5 || p.Recipient != r) {
			t.Errorf("%s: %+v", c.name, p)
		}
	}
}

// FuzzPresentationCheck: whatever an address answers, the check never
// panics, and what it accepts names the VM asked about, carries a
// recipient age can encrypt to, and marshals back to a form it accepts.
func FuzzPresentationCheck(f *testing.F) {
	r := testRecipient(f)
	f.Add([]byte("onekube-cp-recipient/1\nvm 5\nrecipient "+r+"\n"), 5)
	f.Add([]byte("onekube-cp-recipient/1\nvm 5\nrecipient "+r), 5)
	f.Add([]byte("onekube-cp-recipient/1\nvm 5\nrecipient "+r+"\n"), 6)
	f.Add([]byte("onekube-cp-recipient/1\nvm -1\nrecipient age1\n"), -1)
	f.Add([]byte("onekube-cp-recipient/1\nvm 99999999999999999999\nrecipient x\n"), 0)
	f.Add([]byte("\n\n\n"), 0)
	f.Fuzz(func(t *testing.T, b []byte, vmid int) {
		p, err := CheckPresentation(b, vmid)
		if err != nil {
			return
		}
		if p.VMID != vmid {
			t.Fatalf("accepted VM %d when asked about %d", p.VMID, vmid)
		}
		if _, err := age.ParseX25519Recipient(p.Recipient); err != nil {
			t.Fatalf("accepted a recipient age refuses: %v", err)
		}
		q, err := CheckPresentation(p.Marshal(), vmid)
		if err != nil || q != p {
			t.Fatalf("round trip: %+v, %v", q, err)
		}
	})
}

// TestServeFetch: what Serve presents, Fetch reads back over TLS.
func TestServeFetch(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	want := Presentation{VMID: 5, Recipient: testRecipient(t)}
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, want) }()
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, ln.Addr().String())
	}
	got, err := Fetch(ctx, dial, netip.MustParseAddr("10.0.0.5"), 5)
	if err != nil || got != want {
		t.Fatalf("Fetch = %+v, %v", got, err)
	}
	if _, err := Fetch(ctx, dial, netip.MustParseAddr("10.0.0.5"), 7); err == nil || !strings.Contains(err.Error(), "not VM 7") {
		t.Errorf("a presentation of VM 5 read as VM 7's: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
