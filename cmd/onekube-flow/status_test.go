package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register"
	"github.com/onekube/onekube/flow/register/registertest"
)

const joinToken = "abcdef.0123456789abcdef"

func statusService(state, workerState int) string {
	return fmt.Sprintf(`{"DOCUMENT":{"ID":"12","NAME":"lab","TEMPLATE":{"BODY":{"name":"lab","state":%d,"roles":[
	{"name":"master","state":2,"cardinality":1,"nodes":[{"deploy_id":49,"vm_info":{"VM":{"ID":"49","NAME":"m"}}}]},
	{"name":"worker","state":%d,"cardinality":1,"nodes":[{"deploy_id":50,"vm_info":{"VM":{"ID":"50","NAME":"w"}}}]}]}}}}`, state, workerState)
}

func statusVM(id int, phase string, ready bool, extra map[string]string) string {
	ut := map[string]string{vmcontext.KeyPubPhase: phase}
	if ready {
		ut[vmcontext.KeyReady] = "YES"
	}
	for k, v := range extra {
		ut[k] = v
	}
	return registertest.VMXML(registertest.VM{ID: id, Name: fmt.Sprintf("vm-%d", id), State: 3, LCM: 3, IP: fmt.Sprintf("10.0.0.%d", id), UserTemplate: ut})
}

var masterKeys = map[string]string{
	vmcontext.KeyPubToken: joinToken, vmcontext.KeyPubMaster: "10.0.0.49", vmcontext.KeyPubPort: "6443",
	vmcontext.KeyPubNodeName: "lab-master", vmcontext.KeyPubHash: strings.Repeat("cd", 32),
}

type statusEnv struct {
	of  *registertest.OneFlow
	od  *registertest.Oned
	env map[string]string
}

func newStatusEnv(t *testing.T) *statusEnv {
	t.Helper()
	e := &statusEnv{
		of: &registertest.OneFlow{
			Services: `{"DOCUMENT_POOL":{"DOCUMENT":[{"ID":"12","NAME":"lab"},{"ID":"13","NAME":"dup"},{"ID":"14","NAME":"dup"}]}}`,
			Service:  map[int]string{12: statusService(1, 1)},
		},
		od: &registertest.Oned{VMs: map[int]string{
			49: statusVM(49, "done", true, masterKeys),
			50: statusVM(50, "wait-master", false, nil),
		}},
	}
	fsrv, osrv := httptest.NewServer(e.of), httptest.NewServer(e.od)
	t.Cleanup(fsrv.Close)
	t.Cleanup(osrv.Close)
	e.env = map[string]string{"ONEFLOW_URL": fsrv.URL, "ONE_XMLRPC": osrv.URL + "/RPC2", "file:/home/u/.one/one_auth": "alice:pw\n"}
	return e
}

func (e *statusEnv) run(t *testing.T, sleep func(context.Context, time.Duration) error, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb, sleep: sleep,
		env: register.Env{
			Getenv: func(k string) string { return e.env[k] },
			ReadFile: func(p string) ([]byte, error) {
				if s, ok := e.env["file:"+p]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			},
			Home: "/home/u",
		},
	}
	code := a.run(args)
	for _, s := range []string{out.String(), errb.String()} {
		if strings.Contains(s, joinToken) || strings.Contains(s, "0123456789abcdef") {
			t.Errorf("the join token leaked:\n%s", s)
		}
	}
	return code, out.String(), errb.String()
}

func TestStatus(t *testing.T) {
	t.Parallel()
	e := newStatusEnv(t)

	// In progress: exit 3, the table on stdout.
	code, out, errs := e.run(t, nil, "status", "lab")
	if code != exitInProgress || errs != "" {
		t.Fatalf("code %d, stderr %s", code, errs)
	}
	for _, want := range []string{
		"service lab (ID 12): DEPLOYING, 1 of 2 VMs ready: in-progress",
		"master  49  vm-49  RUNNING  done         yes    lab-master  10.0.0.49  -",
		"worker  50  vm-50  RUNNING  wait-master  no     -           10.0.0.50  -",
		"in-progress: VM 50 (worker): phase wait-master",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	wantReqs := []registertest.FlowRequest{
		{Method: "GET", Path: "/service", User: "alice", Password: "pw"},
		{Method: "GET", Path: "/service/12", User: "alice", Password: "pw"},
	}
	if !slices.Equal(e.of.Requests, wantReqs) {
		t.Errorf("oneflow requests %+v", e.of.Requests)
	}
	calls := slices.Clone(e.od.Calls)
	slices.SortFunc(calls, func(a, b registertest.RPCCall) int { return strings.Compare(a.Params[1], b.Params[1]) })
	if len(calls) != 2 || len(e.od.Bad) > 0 ||
		!slices.Equal(calls[0].Params, []string{"alice:pw", "49", "bool:0"}) || !slices.Equal(calls[1].Params, []string{"alice:pw", "50", "bool:0"}) ||
		calls[0].Method != "one.vm.info" || calls[1].Method != "one.vm.info" {
		t.Errorf("oned calls %q, bad %q", calls, e.od.Bad)
	}

	// --json by ID: no name lookup, the documented document.
	e.of.Requests = nil
	code, out, _ = e.run(t, nil, "status", "12", "--json")
	var doc struct {
		Version int    `json:"version"`
		Outcome string `json:"outcome"`
		VMs     []struct {
			ID             int    `json:"id"`
			Master         string `json:"master"`
			TokenPublished bool   `json:"token_published"`
		} `json:"vms"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitInProgress {
		t.Fatalf("code %d, %v:\n%s", code, err, out)
	}
	if doc.Version != 1 || doc.Outcome != "in-progress" || len(doc.VMs) != 2 || !doc.VMs[0].TokenPublished || doc.VMs[0].Master != "10.0.0.49:6443" {
		t.Errorf("json %+v", doc)
	}
	if len(e.of.Requests) != 1 || e.of.Requests[0].Path != "/service/12" {
		t.Errorf("requests %+v", e.of.Requests)
	}
}

func TestStatusExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		service    string
		worker     string
		args       []string
		code       int
		inStdout   string
		inStderr   string
		serviceOff bool
	}{
		{"ready", statusService(2, 2), statusVM(50, "done", true, nil), nil, 0, "2 of 2 VMs ready: ready", "", false},
		{"agent failed", statusService(1, 1), statusVM(50, "failed", false, map[string]string{vmcontext.KeyPubError: "kubeadm join: token " + joinToken + " rejected"}), nil, 1,
			"failed: VM 50 (worker): agent failed: kubeadm join: token <redacted> rejected", "", false},
		{"service failed", statusService(7, 7), statusVM(50, "render-join", false, nil), nil, 1, "failed: service is FAILED_DEPLOYING", "", false},
		{"ambiguous name", "", "", []string{"dup"}, 1, "", `ambiguous service name: 2 services are named "dup" (IDs 13, 14); pass the ID`, false},
		{"missing name", "", "", []string{"nope"}, 1, "", `no such service named "nope"`, false},
		{"missing ID", "", "", []string{"99"}, 1, "", "reading service 99: oneflow: GET /service/99: 404 Not Found", false},
		{"no argument", "", "", []string{}, 2, "", "status takes one argument", false},
		{"two arguments", "", "", []string{"a", "b"}, 2, "", "status takes one argument", false},
		{"negative wait", "", "", []string{"12", "--wait", "-1s"}, 2, "", "--wait -1s", false},
		{"bad timeout", "", "", []string{"12", "--timeout", "0s"}, 2, "", "--timeout 0s", false},
		{"help", "", "", []string{"--help"}, 0, "3 in progress", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStatusEnv(t)
			if tc.service != "" {
				e.of.Service[12] = tc.service
				e.od.VMs[50] = tc.worker
			}
			args := tc.args
			if args == nil {
				args = []string{"12"}
			}
			code, out, errs := e.run(t, nil, append([]string{"status"}, args...)...)
			if code != tc.code || !strings.Contains(out, tc.inStdout) || !strings.Contains(errs, tc.inStderr) {
				t.Errorf("code %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
		})
	}
}

func TestStatusNoCredentials(t *testing.T) {
	t.Parallel()
	e := newStatusEnv(t)
	delete(e.env, "file:/home/u/.one/one_auth")
	if code, _, errs := e.run(t, nil, "status", "12"); code != 1 || !strings.Contains(errs, "no OpenNebula credentials") {
		t.Errorf("code %d: %s", code, errs)
	}
}

func TestStatusWait(t *testing.T) {
	t.Parallel()
	e := newStatusEnv(t)
	polls := 0
	// Each pause moves the cluster on: the worker joins, then OneFlow
	// marks the service RUNNING.
	sleep := func(ctx context.Context, d time.Duration) error {
		if d < 4*time.Second || d > 6*time.Second {
			t.Errorf("poll interval %s", d)
		}
		polls++
		switch polls {
		case 1:
			e.od.VMs[50] = statusVM(50, "done", true, nil)
		case 2:
			e.of.Service[12] = statusService(2, 2)
		}
		return ctx.Err()
	}
	code, out, errs := e.run(t, sleep, "status", "lab", "--wait", "10m")
	if code != 0 || polls != 2 || !strings.Contains(out, "2 of 2 VMs ready: ready") || strings.Count(out, "service lab") != 1 {
		t.Errorf("code %d after %d polls\nstdout: %s\nstderr: %s", code, polls, out, errs)
	}
	want := "waiting: service DEPLOYING, 1 of 2 VMs ready; service is DEPLOYING; VM 50 (worker): phase wait-master\n" +
		"waiting: service DEPLOYING, 2 of 2 VMs ready; service is DEPLOYING\n"
	if errs != want {
		t.Errorf("stderr:\n%s\nwant\n%s", errs, want)
	}

	// The duration passes first: the last view, exit 3.
	e = newStatusEnv(t)
	code, out, errs = e.run(t, func(ctx context.Context, _ time.Duration) error { return context.DeadlineExceeded }, "status", "12", "--wait", "1m")
	if code != exitInProgress || !strings.Contains(out, "in-progress") || !strings.HasSuffix(errs, "onekube-flow: not ready after 1m0s\n") {
		t.Errorf("timeout: code %d\n%s\n%s", code, out, errs)
	}
}

// TestStatusMasksTokenHalves: a worker's error holding the secret half of
// a token nobody published is masked in the table and in --json.
func TestStatusMasksTokenHalves(t *testing.T) {
	t.Parallel()
	e := newStatusEnv(t)
	e.od.VMs[50] = statusVM(50, "failed", false, map[string]string{
		vmcontext.KeyPubError: "kubeadm join: token 7h3x9k.q1w2e3r4t5y6u7i8 rejected (secret q1w2e3r4t5y6u7i8)"})
	for _, tc := range []struct {
		args []string
		mask string
	}{{[]string{"status", "12"}, vmcontext.Mask}, {[]string{"status", "12", "--json"}, `\u003credacted\u003e`}} {
		args := tc.args
		code, out, _ := e.run(t, nil, args...)
		if code != exitFailed {
			t.Errorf("%v: exit %d", args, code)
		}
		if strings.Contains(out, "q1w2e3r4t5y6u7i8") || strings.Contains(out, "7h3x9k.") {
			t.Errorf("%v: token part in output:\n%s", args, out)
		}
		if !strings.Contains(out, "kubeadm join: token "+tc.mask) {
			t.Errorf("%v: masked error missing:\n%s", args, out)
		}
	}
}
