package kubeconfig

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/context/onegate"
)

func TestRequestRoundTrip(t *testing.T) {
	t.Parallel()
	a := newAgeKey(t).Recipient().String()
	_, sshLine := newSSHKey(t)
	for _, r := range []Request{
		{Name: "alice", Role: RoleClusterAdmin, TTL: DefaultTTL, Recipient: a},
		{Name: "bob@example.org", Role: RoleView, TTL: MinTTL, Recipient: sshLine},
		{Name: "c", Role: RoleView, TTL: MaxTTL, Recipient: a},
		{Name: "d", Role: RoleView, TTL: MaxTTL, Recipient: sshLine, Proof: strings.Repeat("A", 43)},
	} {
		v, err := r.Encode()
		if err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
		if err := onegate.CheckValue("K", v); err != nil {
			t.Fatalf("request value is not OneGate-safe: %v", err)
		}
		got, err := ParseRequest(v)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		want := r
		want.Recipient, _ = NormalizeRecipient(r.Recipient)
		if got != want {
			t.Errorf("round trip %+v, want %+v", got, want)
		}
	}
}

func TestParseRequestRefuses(t *testing.T) {
	t.Parallel()
	a := newAgeKey(t).Recipient().String()
	for _, v := range []string{
		"", Done, "2 alice cluster-admin 86400 -", "2 alice cluster-admin 86400 " + a, "3 alice view 600 - " + a,
		"2 alice admin 86400 - " + a, "2 alice view 59 - " + a, "2 alice view 604801 - " + a,
		"2 alice view +60 - " + a, "2 alice view 060 - " + a, "2 alice view 1e3 - " + a,
		"2 system:masters view 600 - " + a, "2 alice view 600 - age1xyz", "2  alice view 600 - " + a,
		"2 alice view 600 - " + strings.Repeat("x", 3000), "2 alice view 600 x " + a,
		"2 alice view 600 " + strings.Repeat("A", 42) + " " + a, "2 alice view 600 " + strings.Repeat("+", 43) + " " + a,
	} {
		if _, err := ParseRequest(v); err == nil {
			t.Errorf("ParseRequest(%.40q) accepted", v)
		}
	}
	if _, err := (Request{Name: "alice", Role: RoleView, TTL: 90 * time.Second / 7, Recipient: a}).Encode(); err == nil {
		t.Error("a validity of a fraction of a second was encoded")
	}
	// An old CLI's request gets an error that says what to do.
	if _, err := ParseRequest("1 alice cluster-admin 86400 " + a); !errors.Is(err, ErrOldProtocol) || !strings.Contains(err.Error(), "upgrade onekube-flow") {
		t.Errorf("a protocol 1 request: %v", err)
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	id, err := NewID(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{RequestKey(id), AnswerKey(id)} {
		if err := onegate.CheckKey(k); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	if kind, got, ok := ParseKey(RequestKey(id)); !ok || kind != KindRequest || got != id {
		t.Errorf("ParseKey(request) = %s %s %v", kind, got, ok)
	}
	if kind, got, ok := ParseKey(AnswerKey(id)); !ok || kind != KindAnswer || got != id {
		t.Errorf("ParseKey(answer) = %s %s %v", kind, got, ok)
	}
	for _, k := range []string{"READY", RequestKey(""), RequestKey("abc"), RequestKey(strings.Repeat("A", 17)), AnswerKey("A_B")} {
		if _, _, ok := ParseKey(k); ok {
			t.Errorf("ParseKey(%q) accepted", k)
		}
	}
	if _, err := NewID(bytes.NewReader(nil)); err == nil {
		t.Error("NewID with no randomness succeeded")
	}
}

func TestAnswerRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Unix(1767225600, 0).UTC()
	id := newAgeKey(t)
	sealed, err := Seal([]byte("x"), id.Recipient().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []Answer{
		{At: at, Sealed: sealed},
		{At: at, Sealed: sealed, Challenge: true},
		{At: at, Reason: `user "bob" is not authorized, see [docs]`},
		{At: at, Reason: `user "bob" is not authorized, see [docs]`, Legacy: true},
	} {
		v, err := a.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := onegate.CheckValue("K", v); err != nil {
			t.Fatalf("answer value is not OneGate-safe: %v", err)
		}
		got, err := ParseAnswer(v)
		if err != nil {
			t.Fatal(err)
		}
		if !got.At.Equal(at) || got.Sealed != a.Sealed || got.Granted() != a.Granted() || got.Challenge != a.Challenge || got.Legacy != a.Legacy {
			t.Errorf("round trip %+v, want %+v", got, a)
		}
		if a.Sealed == "" && got.Reason != "user 'bob' is not authorized; see ;docs;" {
			t.Errorf("reason %q", got.Reason)
		}
	}
	if v, _ := (Answer{At: at, Reason: "upgrade", Legacy: true}).Encode(); v != "1 refused 1767225600 upgrade" {
		t.Errorf("a refusal for an old CLI is %q", v)
	}
	for _, v := range []string{"", "2 ok 12", "2 maybe 12 x", "2 ok -1 abc", "2 ok 12 a+b", "3 ok 12 abc", "2 ok 12 ",
		"1 ok 12 abc", "1 challenge 12 abc", "2 challenge 12 a+b"} {
		if _, err := ParseAnswer(v); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseAnswer(%q): %v", v, err)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add("2 alice cluster-admin 86400 - age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq")
	f.Add("2 bob view 60 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDuAJnDPFm1r9fKKJfTByMWhgrwMHbjHaYsJ7H6ElOaD")
	f.Add("1 alice cluster-admin 86400 age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq")
	f.Add(Done)
	f.Fuzz(func(t *testing.T, v string) {
		r, err := ParseRequest(v)
		if err != nil {
			return
		}
		// Whatever parses is within bounds and encodes back to itself.
		if CheckName(r.Name) != nil || CheckRole(r.Role) != nil || CheckTTL(r.TTL) != nil {
			t.Fatalf("accepted out of bounds: %+v", r)
		}
		again, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if r2, err := ParseRequest(again); err != nil || r2 != r {
			t.Fatalf("re-encoded %q does not parse back: %v", again, err)
		}
	})
}

func FuzzParseAnswer(f *testing.F) {
	f.Add("2 ok 1767225600 YWdlLWVuY3J5cHRpb24")
	f.Add("2 challenge 1767225600 YWdlLWVuY3J5cHRpb24")
	f.Add("2 refused 1767225600 user bob is not authorized")
	f.Add("1 refused 1767225600 request: malformed")
	f.Fuzz(func(t *testing.T, v string) {
		a, err := ParseAnswer(v)
		if err != nil {
			return
		}
		enc, err := a.Encode()
		if err != nil {
			t.Fatalf("parsed answer does not encode: %v", err)
		}
		if err := onegate.CheckValue("K", enc); err != nil {
			t.Fatalf("re-encoded answer is not OneGate-safe: %v", err)
		}
	})
}
