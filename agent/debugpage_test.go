package agent

import (
	"bytes"
	"html"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/state"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// sinatraDebugPage is what the 6.10.5 OneGate, in Sinatra's development
// mode (its systemd unit sets no environment), answers to an unhandled
// error: ~124 KB of HTML whose rack env table echoes X-ONEGATE-TOKEN,
// HTML-escaped (Rack escapes '/' as &#x2F;) and percent-encoded.
func sinatraDebugPage(token string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html>\n<head>\n  <title>NoMethodError at /vms/3</title>\n</head>\n<body>\n")
	for b.Len() < 124<<10 {
		b.WriteString("<tr><td>HTTP_X_ONEGATE_TOKEN</td><td><div>" + html.EscapeString(token) + "</div></td></tr>\n")
		b.WriteString("<tr><td>QUERY</td><td>" + strings.ReplaceAll(token, "/", "&#x2F;") + " " + url.QueryEscape(token) + "</td></tr>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// tokenPart returns an 8-character part of token that s shows, raw,
// HTML-unescaped or percent-decoded, "" when none.
func tokenPart(s, token string) string {
	forms := []string{s, html.UnescapeString(s)}
	if u, err := url.QueryUnescape(s); err == nil {
		forms = append(forms, u)
	}
	for i := 0; i+8 <= len(token); i++ {
		for _, f := range forms {
			if strings.Contains(f, token[i:i+8]) {
				return token[i : i+8]
			}
		}
	}
	return ""
}

// TestOneGateDebugPageStaysOut: a worker whose every read of the master
// gets OneGate's development-mode debug page, echoing its own token, fails
// at the master timeout; nothing of the page but its title reaches the
// log, state.json, `status` or what it publishes to OneGate.
func TestOneGateDebugPageStaysOut(t *testing.T) {
	t.Parallel()
	sim := onegatesim.New(onegatesim.Options{Dir: t.TempDir(), Version: "6.10"})
	endpoint, err := sim.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	sid, err := sim.Instantiate([]byte(`{"name":"k8s","deployment":"none","ready_status_gate":true,"roles":[
 {"name":"master","type":"vm","vm_template":1,"cardinality":1},
 {"name":"worker","type":"vm","vm_template":2,"cardinality":1}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	worker := sim.RoleVMs(sid, "worker")[0]
	token := worker.Token.Reveal()
	// Make sure the page shows the token in the forms that escape a plain
	// replace: a '/' in it (oned's tokens are base64).
	sim.InjectFault(onegatesim.Fault{Kind: onegatesim.FaultStatus, Status: 500, ContentType: "text/html;charset=utf-8",
		Body: sinatraDebugPage(token + "/" + token), Routes: []string{"GET /vms/:id"}})

	h := newHarness(t, newService(worker.ID, nil, []int{worker.ID}))
	h.creds = vmcontext.Credentials{Endpoint: endpoint, VMID: worker.ID, Token: worker.Token}
	h.cfg.Address = worker.IP
	h.tun.MasterTimeout = 3 * time.Minute
	h.newOneGate = NewOneGateClient
	err = h.run()
	if err == nil {
		t.Fatal("the worker joined without a master")
	}
	if !strings.Contains(err.Error(), "NoMethodError at /vms/3") {
		t.Errorf("the error does not name the server's failure: %v", err)
	}
	var st, status bytes.Buffer
	raw, rerr := h.root.ReadFile(state.StateFile)
	if rerr != nil {
		t.Fatal(rerr)
	}
	st.Write(raw)
	s, serr := ReadStatus(h.root)
	if serr != nil {
		t.Fatal(serr)
	}
	_ = s.WriteText(&status)
	_ = s.WriteJSON(&status)
	var published strings.Builder
	for k, v := range sim.UserTemplate(worker.ID) {
		published.WriteString(k + "=" + v + "\n")
	}
	if !strings.Contains(published.String(), "NoMethodError") {
		t.Errorf("the failure was not published:\n%s", published.String())
	}
	for what, text := range map[string]string{
		"the error": err.Error(), "the log": h.logs.String(), "state.json": st.String(),
		"status": status.String(), "OneGate": published.String(),
	} {
		if p := tokenPart(text, token); p != "" {
			t.Errorf("%s shows %q, part of the OneGate token", what, p)
		}
		if strings.Contains(text, "HTTP_X_ONEGATE_TOKEN") || len(text) > 64<<10 {
			t.Errorf("%s holds the debug page (%d bytes)", what, len(text))
		}
	}
}
