package status

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/OpenNebula/one/src/oca/go/src/goca/schemas/vm"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/register"
	"github.com/onekube/onekube/flow/register/registertest"
)

const (
	user  = "oneadmin"
	pass  = "s3cret-pass"
	token = "abcdef.0123456789abcdef"
)

// clusterVMs: a master that published everything, a worker mid-join, and
// VM 51 that oned does not know.
func clusterVMs() map[int]string {
	return map[int]string{
		49: registertest.VMXML(registertest.VM{ID: 49, Name: "master_0_(service_12)", State: 3, LCM: 3, IP: "10.0.0.5",
			UserTemplate: map[string]string{
				vmcontext.KeyPubPhase: "done", vmcontext.KeyReady: "YES", vmcontext.KeyPubNodeName: "k8s-master",
				vmcontext.KeyPubMaster: "10.0.0.5", vmcontext.KeyPubPort: "6443", vmcontext.KeyPubToken: token,
				vmcontext.KeyPubHash: strings.Repeat("ab", 32),
			}}),
		50: registertest.VMXML(registertest.VM{ID: 50, Name: "worker_0_(service_12)", State: 3, LCM: 3, IP: "10.0.0.6",
			UserTemplate: map[string]string{vmcontext.KeyPubPhase: "failed", vmcontext.KeyPubError: "join with " + token + " refused"}}),
	}
}

func fakes(t *testing.T) (*registertest.OneFlow, *registertest.Oned, *Fetcher) {
	t.Helper()
	doc, err := os.ReadFile("testdata/service7.json")
	if err != nil {
		t.Fatal(err)
	}
	of := &registertest.OneFlow{Service: map[int]string{12: string(doc)},
		Services: `{"DOCUMENT_POOL":{"DOCUMENT":[{"ID":"12","NAME":"kubernetes"},{"ID":"13","NAME":"twin"},{"ID":"14","NAME":"twin"}]}}`}
	od := &registertest.Oned{VMs: clusterVMs()}
	fs, os := httptest.NewServer(of), httptest.NewServer(od)
	t.Cleanup(fs.Close)
	t.Cleanup(os.Close)
	hc := &http.Client{Timeout: 10 * time.Second}
	return of, od, &Fetcher{
		Flow:    &register.FlowClient{BaseURL: fs.URL, User: user, Password: vmcontext.NewSecret(pass), HTTP: hc},
		VMs:     register.NewOnedVMs(os.URL+"/RPC2", user, vmcontext.NewSecret(pass), hc),
		Timeout: 5 * time.Second,
	}
}

func TestFetch(t *testing.T) {
	t.Parallel()
	of, od, f := fakes(t)
	r, err := f.Fetch(context.Background(), 12)
	if err != nil {
		t.Fatal(err)
	}
	if want := []registertest.FlowRequest{{Method: "GET", Path: "/service/12", User: user, Password: pass}}; !slices.Equal(of.Requests, want) {
		t.Errorf("oneflow requests %+v", of.Requests)
	}
	calls := slices.Clone(od.Calls)
	slices.SortFunc(calls, func(a, b registertest.RPCCall) int { return strings.Compare(a.Params[1], b.Params[1]) })
	var want []registertest.RPCCall
	for _, id := range []string{"49", "50", "51"} {
		want = append(want, registertest.RPCCall{Method: "one.vm.info", Params: []string{user + ":" + pass, id, "bool:0"}})
	}
	if !reflect.DeepEqual(calls, want) || len(od.Bad) > 0 {
		t.Errorf("oned calls %q, bad %q", calls, od.Bad)
	}
	if r.Outcome != Failed || r.ServiceName != "kubernetes" || r.ServiceState != "DEPLOYING" || len(r.VMs) != 3 {
		t.Fatalf("report %+v", r)
	}
	m, w0, w1 := r.VMs[0], r.VMs[1], r.VMs[2]
	if m.Role != "master" || m.ID != 49 || !m.Ready || m.Phase != "done" || m.IP != "10.0.0.5" || m.NodeName != "k8s-master" ||
		m.Master != "10.0.0.5:6443" || !m.TokenPublished || m.State != "ACTIVE" || m.LCMState != "RUNNING" {
		t.Errorf("master row %+v", m)
	}
	if w0.ID != 50 || w0.Phase != "failed" || w0.Error != "join with "+vmcontext.Mask+" refused" || w0.TokenPublished {
		t.Errorf("worker row %+v", w0)
	}
	if w1.ID != 51 || !strings.Contains(w1.ReadError, "Error getting virtual machine [51]") || strings.Contains(w1.ReadError, pass) {
		t.Errorf("unreadable row %+v", w1)
	}
}

// TestTokenNeverShown: the join token a master published appears in no
// output, even when a VM's error text echoes it.
func TestTokenNeverShown(t *testing.T) {
	t.Parallel()
	_, _, f := fakes(t)
	r, err := f.Fetch(context.Background(), 12)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteTable(&out, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&out, r); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "%v %+v %#v", r, r, r)
	for _, secret := range []string{token, "0123456789abcdef", pass} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("%q in output:\n%s", secret, out.String())
		}
	}
	if !strings.Contains(out.String(), `"token_published": true`) {
		t.Errorf("token_published missing:\n%s", out.String())
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	of, _, f := fakes(t)
	for _, tc := range []struct {
		ref  string
		id   int
		err  error
		text string
	}{
		{"12", 12, nil, ""},
		{"kubernetes", 12, nil, ""},
		{"twin", 0, ErrAmbiguousService, `2 services are named "twin" (IDs 13, 14); pass the ID`},
		{"nope", 0, ErrNoService, `no such service named "nope"`},
		{"", 0, ErrNoService, "empty service name"},
	} {
		id, err := f.Resolve(context.Background(), tc.ref)
		if id != tc.id || !errors.Is(err, tc.err) || (err != nil && !strings.Contains(err.Error(), tc.text)) {
			t.Errorf("Resolve(%q) = %d, %v", tc.ref, id, err)
		}
	}
	for _, r := range of.Requests {
		if r.Method != "GET" || r.Path != "/service" || r.User != user || r.Password != pass {
			t.Errorf("request %+v", r)
		}
	}
	if len(of.Requests) != 3 {
		t.Errorf("%d requests, want one per name", len(of.Requests))
	}
	// One service is an object, not an array, in OneFlow's XML-derived JSON.
	of.Services = `{"DOCUMENT_POOL":{"DOCUMENT":{"ID":"7","NAME":"solo"}}}`
	if id, err := f.Resolve(context.Background(), "solo"); id != 7 || err != nil {
		t.Errorf("single document pool: %d, %v", id, err)
	}
}

func TestFetchServiceErrors(t *testing.T) {
	t.Parallel()
	of, _, f := fakes(t)
	if _, err := f.Fetch(context.Background(), 99); err == nil || !strings.Contains(err.Error(), "reading service 99: oneflow: GET /service/99: 404 Not Found") {
		t.Errorf("missing service: %v", err)
	}
	of.Service[5] = `{"DOCUMENT_POOL":{}}`
	if _, err := f.Fetch(context.Background(), 5); !errors.Is(err, ErrNotService) {
		t.Errorf("not a service: %v", err)
	}
}

// memVMs answers Info from a map, optionally blocking, and records the
// most calls in flight at once.
type memVMs struct {
	vms           map[int]*vm.VM
	block         map[int]bool
	inFlight, max atomic.Int32
	mu            sync.Mutex
	calls         int
}

func (m *memVMs) Info(ctx context.Context, id int) (*vm.VM, error) {
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		old := m.max.Load()
		if n <= old || m.max.CompareAndSwap(old, n) {
			break
		}
	}
	m.mu.Lock()
	m.calls++
	m.mu.Unlock()
	time.Sleep(2 * time.Millisecond) // let others pile up
	if m.block[id] {
		<-ctx.Done()
		return nil, fmt.Errorf("oned: reading VM %d: %w", id, ctx.Err())
	}
	v, ok := m.vms[id]
	if !ok {
		return nil, fmt.Errorf("oned: no VM %d", id)
	}
	return v, nil
}

// memFlow answers Service with each of docs in turn, the last one forever.
type memFlow struct {
	mu   sync.Mutex
	docs []string
	errs []error
	n    int
}

func (m *memFlow) Services(context.Context) ([]register.Document, error) { return nil, nil }

func (m *memFlow) Service(context.Context, int) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := min(m.n, len(m.docs)-1)
	m.n++
	var err error
	if i < len(m.errs) {
		err = m.errs[i]
	}
	return []byte(m.docs[i]), err
}

func serviceDoc(state int, ids ...int) string {
	var nodes []string
	for _, id := range ids {
		nodes = append(nodes, fmt.Sprintf(`{"deploy_id":%d,"vm_info":{"VM":{"ID":"%d"}}}`, id, id))
	}
	return fmt.Sprintf(`{"DOCUMENT":{"ID":"1","NAME":"k","TEMPLATE":{"BODY":{"state":%d,"roles":[{"name":"worker","state":%d,"cardinality":%d,"nodes":[%s]}]}}}}`,
		state, state, len(ids), strings.Join(nodes, ","))
}

func onedVM(t *testing.T, v registertest.VM) *vm.VM {
	t.Helper()
	var out vm.VM
	if err := xml.Unmarshal([]byte(registertest.VMXML(v)), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func readyVM(t *testing.T, id int) *vm.VM {
	return onedVM(t, registertest.VM{ID: id, State: 3, LCM: 3, UserTemplate: map[string]string{"READY": "yes", vmcontext.KeyPubPhase: "done"}})
}

func TestFetchBoundsAndTimeouts(t *testing.T) {
	t.Parallel()
	var ids []int
	m := &memVMs{vms: map[int]*vm.VM{}, block: map[int]bool{7: true}}
	for id := range 20 {
		ids = append(ids, id)
		m.vms[id] = readyVM(t, id)
	}
	m.vms[3] = readyVM(t, 4) // oned answering for the wrong VM
	f := &Fetcher{Flow: &memFlow{docs: []string{serviceDoc(2, ids...)}}, VMs: m, Timeout: 50 * time.Millisecond, Parallel: 3}
	r, err := f.Fetch(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.max.Load(); got > 3 || got < 2 {
		t.Errorf("%d calls in flight at once, want at most 3 (and some parallelism)", got)
	}
	if m.calls != 20 || len(r.VMs) != 20 || r.ReadyVMs() != 18 || r.Outcome != InProgress {
		t.Errorf("calls %d, rows %d, ready %d, outcome %s", m.calls, len(r.VMs), r.ReadyVMs(), r.Outcome)
	}
	if !strings.Contains(r.VMs[7].ReadError, "deadline exceeded") || r.VMs[3].ReadError != "oned answered with VM 4" {
		t.Errorf("rows 3 and 7: %+v / %+v", r.VMs[3], r.VMs[7])
	}
}

func TestWait(t *testing.T) {
	t.Parallel()
	m := &memVMs{vms: map[int]*vm.VM{1: readyVM(t, 1)}}
	flow := &memFlow{docs: []string{serviceDoc(1), serviceDoc(1, 1), "garbage", serviceDoc(2, 1)}}
	f := &Fetcher{Flow: flow, VMs: m}
	var slept []time.Duration
	var lines []string
	r, err := f.Wait(context.Background(), 1, Poll{
		Interval: time.Second,
		Sleep:    func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil },
		Jitter:   func(d time.Duration) time.Duration { return d + 1 },
		Progress: func(r Report, err error) { lines = append(lines, fmt.Sprintf("%s %v", r.ServiceState, err != nil)) },
	})
	if err != nil || r.Outcome != Ready {
		t.Fatalf("%+v, %v", r, err)
	}
	wantLines := []string{"DEPLOYING false", "DEPLOYING false", "DEPLOYING true"}
	if !reflect.DeepEqual(lines, wantLines) || len(slept) != 3 || slept[0] != time.Second+1 {
		t.Errorf("progress %q, slept %v", lines, slept)
	}

	// The deadline passes: the last view comes back, still in progress.
	ctx, cancel := context.WithCancel(context.Background())
	f = &Fetcher{Flow: &memFlow{docs: []string{serviceDoc(1)}}, VMs: m}
	polls := 0
	r, err = f.Wait(ctx, 1, Poll{Sleep: func(ctx context.Context, _ time.Duration) error {
		if polls++; polls == 3 {
			cancel()
		}
		return ctx.Err()
	}})
	if err != nil || r.Outcome != InProgress || polls != 3 {
		t.Errorf("deadline: %s after %d polls, %v", r.Outcome, polls, err)
	}

	// A failure ends the wait at once; the first read failing is an error.
	f = &Fetcher{Flow: &memFlow{docs: []string{serviceDoc(7)}}, VMs: m}
	if r, err := f.Wait(context.Background(), 1, Poll{Sleep: func(context.Context, time.Duration) error { t.Error("slept"); return nil }}); err != nil || r.Outcome != Failed {
		t.Errorf("failed: %s, %v", r.Outcome, err)
	}
	f = &Fetcher{Flow: &memFlow{docs: []string{""}, errs: []error{errors.New("refused")}}, VMs: m}
	if _, err := f.Wait(context.Background(), 1, Poll{}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("first read: %v", err)
	}
}

func TestJitter(t *testing.T) {
	t.Parallel()
	for range 1000 {
		if d := jitter(5 * time.Second); d < 4*time.Second || d > 6*time.Second {
			t.Fatalf("jitter(5s) = %s", d)
		}
	}
}

func TestFromOnedStates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		state, lcm int
		st, l      string
	}{
		{3, 3, "ACTIVE", "RUNNING"},
		{3, 36, "ACTIVE", "BOOT_FAILURE"},
		{1, 0, "PENDING", "LCM_INIT"},
		{8, 0, "POWEROFF", "LCM_INIT"},
		{3, 999, "ACTIVE", "LCM_STATE_999"},
		{99, 0, "STATE_99", "LCM_STATE_0"},
	} {
		v := FromOned(onedVM(t, registertest.VM{ID: 1, State: tc.state, LCM: tc.lcm}))
		if v.State != tc.st || v.LCMState != tc.l {
			t.Errorf("%d/%d: %s/%s, want %s/%s", tc.state, tc.lcm, v.State, v.LCMState, tc.st, tc.l)
		}
	}
	v := FromOned(onedVM(t, registertest.VM{ID: 2, State: 3, LCM: 3, UserTemplate: map[string]string{"READY": "no", "ONEGATE_K8S_MASTER": "10.1.1.1"}}))
	if v.Ready || v.Master != "10.1.1.1" || v.IP != "" || v.TokenPublished {
		t.Errorf("%+v", v)
	}
}

// Wrong oned credentials fail every VM read: that ends the command with the
// reason at once instead of waiting for a state that cannot come.
func TestFetchNoVMReadable(t *testing.T) {
	t.Parallel()
	f := &Fetcher{Flow: &memFlow{docs: []string{serviceDoc(1, 5, 6)}}, VMs: &memVMs{vms: map[int]*vm.VM{}}}
	_, err := f.Fetch(context.Background(), 1)
	if !errors.Is(err, ErrNoVMReadable) || !strings.Contains(err.Error(), "VM 5") {
		t.Fatalf("err = %v, want ErrNoVMReadable naming VM 5", err)
	}
	_, err = f.Wait(context.Background(), 1, Poll{Sleep: func(context.Context, time.Duration) error {
		t.Fatal("Wait slept although no VM can be read")
		return nil
	}})
	if !errors.Is(err, ErrNoVMReadable) {
		t.Fatalf("Wait: err = %v", err)
	}

	// One readable VM is enough: the other is a row with its error.
	f.VMs = &memVMs{vms: map[int]*vm.VM{6: readyVM(t, 6)}}
	r, err := f.Fetch(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.VMs) != 2 {
		t.Errorf("%d rows, want 2", len(r.VMs))
	}
}
