package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/system"
	"github.com/onekube/onekube/agent/system/systemtest"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// fakeOneGate is an in-memory OneGate for one VM of a service.
type fakeOneGate struct {
	mu      sync.Mutex
	self    int
	vms     map[int]*onegate.VM
	service onegate.Service
	updates [][]onegate.KV
	erased  []string
	actions []string // "<vmid> <perform> <params>", as Action received them
	calls   map[string]int
	// fail, when set, may fail a call (op is "GetVM", "GetVMByID",
	// "GetService", "UpdateVM", "EraseVMKey"; n counts calls of op from 1).
	fail func(op string, n int) error
	// beforeGetVMByID may change the VMs, e.g. make the master ready
	// after some polls.
	beforeGetVMByID func(f *fakeOneGate, id, n int)
	// net is the service's network: the harness listens there for the
	// VM the agent runs as.
	net *testNet
}

var _ OneGate = (*fakeOneGate)(nil)

func (f *fakeOneGate) call(op string) error {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[op]++
	if f.fail != nil {
		return f.fail(op, f.calls[op])
	}
	return nil
}

func (f *fakeOneGate) copyVM(id int) (*onegate.VM, error) {
	vm, ok := f.vms[id]
	if !ok {
		return nil, fmt.Errorf("VM %d not found", id)
	}
	c := *vm
	c.UserTemplate = map[string]string{}
	for k, v := range vm.UserTemplate {
		c.UserTemplate[k] = v
	}
	return &c, nil
}

func (f *fakeOneGate) GetVM(context.Context) (*onegate.VM, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("GetVM"); err != nil {
		return nil, err
	}
	return f.copyVM(f.self)
}

func (f *fakeOneGate) GetVMByID(_ context.Context, id int) (*onegate.VM, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("GetVMByID"); err != nil {
		return nil, err
	}
	if f.beforeGetVMByID != nil {
		f.beforeGetVMByID(f, id, f.calls["GetVMByID"])
	}
	return f.copyVM(id)
}

func (f *fakeOneGate) GetService(context.Context) (*onegate.Service, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("GetService"); err != nil {
		return nil, err
	}
	s := f.service
	return &s, nil
}

// GetServiceExtended returns the service with every node's VM, as
// GET /service?extended=true does.
func (f *fakeOneGate) GetServiceExtended(context.Context) (*onegate.Service, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("GetServiceExtended"); err != nil {
		return nil, err
	}
	s := f.service
	s.Roles = append([]onegate.Role(nil), s.Roles...)
	for i, r := range s.Roles {
		nodes := append([]onegate.Node(nil), r.Nodes...)
		for j, n := range nodes {
			if vm, err := f.copyVM(n.VMID); err == nil {
				nodes[j].VM = vm
			}
		}
		s.Roles[i].Nodes = nodes
	}
	return &s, nil
}

func (f *fakeOneGate) UpdateVM(_ context.Context, kvs ...onegate.KV) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("UpdateVM"); err != nil {
		return err
	}
	f.updates = append(f.updates, kvs)
	for _, kv := range kvs {
		f.vms[f.self].UserTemplate[kv.Key] = kv.Value
	}
	return nil
}

func (f *fakeOneGate) EraseVMKey(_ context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("EraseVMKey"); err != nil {
		return err
	}
	f.erased = append(f.erased, key)
	delete(f.vms[f.self].UserTemplate, key)
	return nil
}

// ut returns a VM's user template value.
// Action is POST /vms/:id/action as OneGate answers a valid request: only
// rename changes the fake.
func (f *fakeOneGate) Action(_ context.Context, vmID int, perform string, params map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Action"); err != nil {
		return err
	}
	if _, err := onegate.ActionBody(perform, params); err != nil {
		return err
	}
	f.actions = append(f.actions, fmt.Sprintf("%d %s %v", vmID, perform, params))
	if vm := f.vms[vmID]; vm != nil && perform == onegate.ActionRename {
		vm.Name = params[onegate.ParamName]
	}
	return nil
}

// ScaleRole is PUT /service/role/:role; the fake only counts it.
func (f *fakeOneGate) ScaleRole(context.Context, string, int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.call("ScaleRole")
}

func (f *fakeOneGate) ut(id int, key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.vms[id].UserTemplate[key]
}

// readyUpdates returns the updates that carried READY.
func (f *fakeOneGate) readyUpdates() [][]onegate.KV {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]onegate.KV
	for _, u := range f.updates {
		for _, kv := range u {
			if kv.Key == vmcontext.KeyReady {
				out = append(out, u)
			}
		}
	}
	return out
}

// newService builds a fake service of one master role and one worker role;
// self is the VM the agent runs as.
func newService(self int, masters, workers []int) *fakeOneGate {
	f := &fakeOneGate{self: self, vms: map[int]*onegate.VM{}, net: &testNet{at: map[string]string{}}}
	f.service = onegate.Service{ID: 7, Name: "k8s", State: 2}
	add := func(role string, ids []int) {
		r := onegate.Role{Name: role, Cardinality: len(ids), State: 2}
		for _, id := range ids {
			r.Nodes = append(r.Nodes, onegate.Node{VMID: id})
			f.vms[id] = &onegate.VM{ID: id, Name: fmt.Sprintf("%s_%d", role, id), State: 3, LCMState: 3,
				STime:        testEpoch.Add(-time.Minute).Unix(), // a first deployment
				UserTemplate: map[string]string{vmcontext.KeyRoleName: role, vmcontext.KeyServiceID: "7"},
				NICs:         []onegate.NIC{{Name: "NIC0", IP: vmIP(id), MAC: vmMAC(id), Network: "k8s"}}}
		}
		f.service.Roles = append(f.service.Roles, r)
	}
	add("master", masters)
	add("worker", workers)
	return f
}

// vmIP and vmMAC are VM id's NIC, as oned leased it.
func vmIP(id int) string  { return fmt.Sprintf("10.0.0.%d", 10+id) }
func vmMAC(id int) string { return fmt.Sprintf("02:00:0a:00:00:%02x", 10+id) }

// publishMasterData makes VM id look like a master that finished.
func (f *fakeOneGate) publishMasterData(id int, token, hash string) {
	ut := f.vms[id].UserTemplate
	ut[vmcontext.KeyPubMaster] = vmIP(id)
	ut[vmcontext.KeyPubPort] = "6443"
	ut[vmcontext.KeyPubToken] = token
	ut[vmcontext.KeyPubHash] = hash
	ut[vmcontext.KeyReady] = "YES"
}

// fakeKubeadm records calls; Init writes a real CA and admin.conf under
// the root, as kubeadm does.
type fakeKubeadm struct {
	mu      sync.Mutex
	root    system.Root
	calls   []string
	configs map[string]string // last config read per command
	version string
	initErr error
	// initErrFrom, when set, makes init fail with what it returns for
	// the config init read (e.g. output quoting the token).
	initErrFrom func(config string) error
	// hang makes init block until its context ends, as a hung kubeadm.
	hang    bool
	joinErr []error // consumed per call
	caPEM   []byte
}

var _ Kubeadm = (*fakeKubeadm)(nil)

func (k *fakeKubeadm) record(ctx context.Context, c string, path string) error {
	k.calls = append(k.calls, c)
	if _, ok := ctx.Deadline(); !ok {
		return fmt.Errorf("kubeadm %s: %w", c, system.ErrNoDeadline)
	}
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("kubeadm %s: reading --config: %w", c, err)
	}
	if k.configs == nil {
		k.configs = map[string]string{}
	}
	k.configs[c] = string(b)
	return nil
}

func (k *fakeKubeadm) Init(ctx context.Context, path string, _ ...vmcontext.Secret) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.record(ctx, "init", path); err != nil {
		return err
	}
	if k.hang {
		<-ctx.Done()
		return fmt.Errorf("kubeadm init: killed after its deadline, %w", ctx.Err())
	}
	if k.initErr != nil {
		return k.initErr
	}
	if k.initErrFrom != nil {
		return k.initErrFrom(k.configs["init"])
	}
	for f, b := range map[string][]byte{CACertFile: k.caPEM, AdminConfFile: []byte("kind: Config\n"),
		KubeletConfFile: []byte("kind: Config\n"), APIServerManifest: []byte("kind: Pod\n")} {
		if err := k.root.WriteFile(f, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (k *fakeKubeadm) Join(ctx context.Context, path string, _ ...vmcontext.Secret) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.record(ctx, "join", path); err != nil {
		return err
	}
	if len(k.joinErr) > 0 {
		err := k.joinErr[0]
		k.joinErr = k.joinErr[1:]
		if err != nil {
			return err
		}
	}
	if strings.Contains(k.configs["join"], "certificateKey:") {
		// A control plane: the certificates come down from kubeadm-certs.
		for f, b := range map[string][]byte{CACertFile: k.caPEM, AdminConfFile: []byte("kind: Config\n"), APIServerManifest: []byte("kind: Pod\n")} {
			if err := k.root.WriteFile(f, b, 0o600); err != nil {
				return err
			}
		}
	}
	return k.root.WriteFile(KubeletConfFile, []byte("kind: Config\n"), 0o600)
}

func (k *fakeKubeadm) Reset(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.record(ctx, "reset", ""); err != nil {
		return err
	}
	for _, f := range kubeadmFiles {
		if err := k.root.Remove(f); err != nil {
			return err
		}
	}
	return nil
}

func (k *fakeKubeadm) Version(ctx context.Context) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.record(ctx, "version", ""); err != nil {
		return "", err
	}
	return k.version, nil
}

func (k *fakeKubeadm) count(c string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, x := range k.calls {
		if x == c {
			n++
		}
	}
	return n
}

// testCA returns a fresh self-signed CA in PEM and its discovery hash.
func testCA(t testing.TB) ([]byte, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	h, err := kubeadm.CACertHash(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, h
}

// harness wires one agent run against fakes.
type harness struct {
	t     *testing.T
	root  system.Root
	og    *fakeOneGate
	kadm  *fakeKubeadm
	exec  *systemtest.FakeExec
	clock *systemtest.Clock
	cfg   Config
	tun   Tunables
	logs  *strings.Builder
	creds vmcontext.Credentials
	opts  Options
	// loadErr / resolveErr simulate a broken context.
	loadErr, resolveErr error
	// resolve, when set, replaces the settings (h.cfg), given this VM and
	// the role discovery found it in.
	resolve func(self *onegate.VM, role string) (Config, error)
	// masterClock is every master's clock as this VM reads it (nil: the
	// same as this VM's, h.clock).
	masterClock *fakeMasterClock
	// newOneGate, when set, replaces og (e.g. the real client against
	// the simulator).
	newOneGate func(OneGateConfig) (OneGate, error)
	// wrapOG, when set, is what the agent gets in place of og.
	wrapOG func(*fakeOneGate) OneGate
}

// imageHostname is the name every VM of the image boots with.
const imageHostname = "onekube-appliance"

var testEpoch = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

const testOneGateToken = "c2VjcmV0LW9uZWdhdGUtdG9rZW4tdmFsdWU="

func newHarness(t *testing.T, og *fakeOneGate) *harness {
	t.Helper()
	root := system.Root(t.TempDir())
	if err := root.WriteFile(system.KernelHostnameFile, []byte(imageHostname+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ca, _ := testCA(t)
	h := &harness{
		t:    t,
		root: root,
		og:   og,
		kadm: &fakeKubeadm{root: root, version: "v1.37.2", caPEM: ca},
		// Every initializing master applies the worker join RBAC
		// (phase_workerrbac.go); tests add replies after this one.
		exec:  (&systemtest.FakeExec{}).On("kubectl", systemtest.Reply{}),
		clock: systemtest.NewClock(testEpoch),
		logs:  &strings.Builder{},
		cfg: Config{
			MasterRole:      "master",
			Address:         netip.MustParseAddr(vmIP(og.self)),
			Port:            6443,
			PodsNetwork:     netip.MustParsePrefix("10.244.0.0/16"),
			ServicesNetwork: netip.MustParsePrefix("10.96.0.0/12"),
			NodeName:        fmt.Sprintf("node-%d", og.self),
			CNI:             CNINone,
			TokenTTL:        24 * time.Hour,
		},
		tun: Tunables{
			MasterTimeout:   30 * time.Minute,
			OneGateTimeout:  10 * time.Minute,
			PollInterval:    2 * time.Second,
			MaxPollInterval: 30 * time.Second,
			CNIDir:          "/usr/share/onekube/cni",
		},
		creds: vmcontext.Credentials{Endpoint: "http://127.0.0.1:5030", VMID: og.self, Token: vmcontext.NewSecret(testOneGateToken)},
	}
	return h
}

func (h *harness) run() error {
	h.t.Helper()
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, h.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	deps := Deps{
		LoadSource: func(context.Context) (*Source, error) {
			if h.loadErr != nil {
				return nil, h.loadErr
			}
			return &Source{Creds: h.creds, Resolve: func(self *onegate.VM, role string) (Config, error) {
				if h.resolve != nil {
					return h.resolve(self, role)
				}
				return h.cfg, h.resolveErr
			}}, nil
		},
		NewOneGate: func(c OneGateConfig) (OneGate, error) {
			if h.newOneGate != nil {
				return h.newOneGate(c)
			}
			if c.Creds.VMID != h.og.self {
				return nil, errors.New("wrong credentials")
			}
			if h.wrapOG != nil {
				return h.wrapOG(h.og), nil
			}
			return h.og, nil
		},
		Kubeadm: h.kadm,
		Exec:    h.exec,
		Clock:   h.clock,
		Log:     log,
	}
	if h.masterClock == nil {
		h.masterClock = &fakeMasterClock{local: h.clock}
	}
	deps.Listen = h.og.net.listen
	deps.MasterClock = h.masterClock
	opts := h.opts
	opts.Root, opts.Tunables = h.root, h.tun
	return Bootstrap(context.Background(), opts, deps)
}

// fakeMasterClock is the masters' clock: this VM's shifted by offset
// (negative when this VM's runs fast), or err.
type fakeMasterClock struct {
	mu     sync.Mutex
	local  *systemtest.Clock
	offset time.Duration
	err    error
	reads  []netip.AddrPort
}

func (c *fakeMasterClock) MasterNow(_ context.Context, api netip.AddrPort, caHash string) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads = append(c.reads, api)
	if c.err != nil {
		return time.Time{}, c.err
	}
	if _, err := kubeadm.ParseHash(caHash); err != nil {
		return time.Time{}, err
	}
	return c.local.Now().Add(c.offset), nil
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// bounded is a context with a deadline, as every command needs.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// testNet stands for the service's network: a listener asked for at a VM
// address listens on loopback, and dial finds it by that address.
type testNet struct {
	mu sync.Mutex
	at map[string]string // "<ip>:<port>" -> loopback address
}

func (n *testNet) listen(network, addr string) (net.Listener, error) {
	ln, err := net.Listen(network, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.at[addr] = ln.Addr().String()
	return ln, nil
}

func (n *testNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	real, ok := n.at[addr]
	n.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("dial %s: connection refused", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, real)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
