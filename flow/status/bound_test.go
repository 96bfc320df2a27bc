package status

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register/registertest"
)

// TestPublishedValuesBounded: a VM that publishes megabytes (an error, a
// serve error, a list) costs the output a few kilobytes per value, each cut
// value says so, and a token at the cut leaves no part behind.
func TestPublishedValuesBounded(t *testing.T) {
	t.Parallel()
	_, od, f := fakes(t)
	huge := strings.Repeat("kubeadm said no; ", 60_000) // 1 MB
	big := huge[:200_000]
	// The cut falls inside a token: none of it may show.
	atCut := strings.Repeat(" ", MaxValue-len(CutMark)-12) + token + strings.Repeat(" y", 1000)
	od.VMs[49] = registertest.VMXML(registertest.VM{ID: 49, Name: strings.Repeat("n ", 20_000), State: 3, LCM: 3, IP: "10.0.0.5",
		UserTemplate: map[string]string{
			vmcontext.KeyPubPhase: "done", vmcontext.KeyReady: "YES", vmcontext.KeyPubNodeName: big,
			vmcontext.KeyPubMaster: "10.0.0.5", vmcontext.KeyPubToken: token, vmcontext.KeyPubServe: "acting",
			vmcontext.KeyPubServeError: big, vmcontext.KeyPubWaiting: strings.Repeat("50 ", 70_000),
			vmcontext.KeyPubNodesWithoutVM: atCut, vmcontext.KeyPubEtcdError: big, vmcontext.KeyPubKind: "init",
		}})
	od.VMs[50] = registertest.VMXML(registertest.VM{ID: 50, Name: "worker_0_(service_12)", State: 3, LCM: 3, IP: "10.0.0.6",
		UserTemplate: map[string]string{vmcontext.KeyPubPhase: "failed", vmcontext.KeyPubError: huge}})
	r, err := f.Fetch(context.Background(), 12)
	if err != nil {
		t.Fatal(err)
	}
	var table, js bytes.Buffer
	if err := WriteTable(&table, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	t.Logf("table %d bytes, json %d bytes", table.Len(), js.Len())
	if table.Len() > 64<<10 || js.Len() > 64<<10 {
		t.Errorf("table %d bytes, json %d bytes: a VM's values are not bounded", table.Len(), js.Len())
	}
	var doc any
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	cut := 0
	walkStrings(doc, func(s string) {
		// A reason or an acting master's name adds a short label to a value.
		if len(s) > MaxValue+64 {
			t.Errorf("a %d-byte value in --json: %.80q…", len(s), s)
		}
		if strings.HasSuffix(s, CutMark) {
			cut++
		}
	})
	if cut < 6 {
		t.Errorf("%d values marked as cut, want every long one:\n%.2000s", cut, js.String())
	}
	for name, out := range map[string]string{"table": table.String(), "json": js.String()} {
		if m := anyTokenPart.FindString(out); m != "" || strings.Contains(out, "abcdef.") {
			t.Errorf("%s shows part of a token at a cut: %q", name, m)
		}
	}
}

func walkStrings(v any, f func(string)) {
	switch v := v.(type) {
	case string:
		f(v)
	case []any:
		for _, e := range v {
			walkStrings(e, f)
		}
	case map[string]any:
		for _, e := range v {
			walkStrings(e, f)
		}
	}
}
