package kubeconfig

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestChallengeRoundTripAndProof(t *testing.T) {
	t.Parallel()
	key := newAgeKey(t)
	req := Request{Name: "alice", Role: RoleView, TTL: time.Hour, Recipient: key.Recipient().String()}
	c, err := NewChallenge("REQ0000001", req, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := Seal(b, req.Recipient)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Open(sealed, key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseChallenge(plain)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != c.ID || got.Request != c.Request || !bytes.Equal(got.Nonce, c.Nonce) {
		t.Fatalf("round trip %+v, want %+v", got, c)
	}
	proof, err := got.Proof("REQ0000001", req)
	if err != nil {
		t.Fatal(err)
	}
	proved := req
	proved.Proof = proof
	if v, err := proved.Encode(); err != nil {
		t.Fatal(err)
	} else if back, err := ParseRequest(v); err != nil || back != proved {
		t.Fatalf("a proved request does not round trip: %v", err)
	}
	if !c.Proves("REQ0000001", proved) {
		t.Fatal("the master does not accept the right proof")
	}
	// What a sibling can do to a pending request, and what it cannot prove.
	other, _ := NewChallenge("REQ0000001", req, nil)
	for name, r := range map[string]Request{
		"no proof":        req,
		"longer validity": func() Request { r := proved; r.TTL = MaxTTL; return r }(),
		"higher role":     func() Request { r := proved; r.Role = RoleClusterAdmin; return r }(),
		"another name":    func() Request { r := proved; r.Name = "bob"; return r }(),
		"another key":     func() Request { r := proved; r.Recipient = newAgeKey(t).Recipient().String(); return r }(),
		"a guessed proof": func() Request { r := proved; r.Proof = strings.Repeat("A", proofLen); return r }(),
	} {
		if c.Proves("REQ0000001", r) {
			t.Errorf("%s: proves", name)
		}
	}
	if c.Proves("REQ0000002", proved) {
		t.Error("a proof moved to another request ID proves")
	}
	if other.Proves("REQ0000001", proved) {
		t.Error("a proof proves another challenge")
	}
}

func TestParseChallengeRefuses(t *testing.T) {
	t.Parallel()
	a := newAgeKey(t).Recipient().String()
	nonce := b64.EncodeToString(bytes.Repeat([]byte{1}, NonceSize))
	good := `"request":"2 alice view 3600 - ` + a + `","nonce":"` + nonce + `"`
	if _, err := ParseChallenge([]byte(`{"v":2,"id":"REQ0000001",` + good + `}`)); err != nil {
		t.Fatalf("a good challenge: %v", err)
	}
	for _, s := range []string{
		``, `{}`, `[]`, `{"v":1,"id":"REQ0000001",` + good + `}`,
		`{"v":2,"id":"req",` + good + `}`,
		`{"v":2,"id":"REQ0000001",` + good + `,"x":1}`,
		`{"v":2,"id":"REQ0000001",` + good + `}{}`,
		`{"v":2,"id":"REQ0000001","request":"2 alice view 3600 - ` + a + `","nonce":"AAAA"}`,
		`{"v":2,"id":"REQ0000001","request":"2 alice view 3600 ` + strings.Repeat("A", proofLen) + ` ` + a + `","nonce":"` + nonce + `"}`,
		`{"v":2,"id":"REQ0000001","request":"1 alice view 3600 ` + a + `","nonce":"` + nonce + `"}`,
	} {
		if _, err := ParseChallenge([]byte(s)); err == nil {
			t.Errorf("ParseChallenge(%.60q) accepted", s)
		}
	}
}

func FuzzParseChallenge(f *testing.F) {
	f.Add([]byte(`{"v":2,"id":"REQ0000001","request":"2 alice view 3600 - age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq","nonce":"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE"}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseChallenge(b)
		if err != nil {
			return
		}
		// Whatever parses is well-formed and encodes back to itself.
		again, err := c.Marshal()
		if err != nil {
			t.Fatalf("a parsed challenge does not marshal: %v", err)
		}
		c2, err := ParseChallenge(again)
		if err != nil || c2.ID != c.ID || c2.Request != c.Request || !bytes.Equal(c2.Nonce, c.Nonce) {
			t.Fatalf("re-marshalled challenge does not parse back: %v", err)
		}
		if len(c.Nonce) != NonceSize || c.Request.Proof != "" {
			t.Fatalf("accepted %+v", c)
		}
	})
}
