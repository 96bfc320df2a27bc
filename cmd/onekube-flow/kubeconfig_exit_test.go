package main

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/flow/access"
	"github.com/onekube/onekube/flow/register/registertest"
)

// onedWith is the fake oned with some methods answered by hand.
type onedWith struct {
	*registertest.Oned
	answer map[string]http.HandlerFunc
}

func (o onedWith) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	for method, h := range o.answer {
		if bytes.Contains(body, []byte("<methodName>"+method+"</methodName>")) {
			r.Header.Set("X-Body", string(body))
			h(w, r)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	o.Oned.ServeHTTP(w, r)
}

// onedFault answers as oned does when a call fails: false, the message
// and the error code (goca errors.OneAuthenticationError is 0x100).
func onedFault(code int, msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><methodResponse><params><param><value><array><data>`+
			`<value><boolean>0</boolean></value><value><string>%s</string></value><value><i4>%d</i4></value>`+
			`</data></array></value></param></params></methodResponse>`, html.EscapeString(msg), code)
	}
}

func onedOK(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprint(w, `<?xml version="1.0"?><methodResponse><params><param><value><array><data>`+
		`<value><boolean>1</boolean></value><value><i4>49</i4></value><value><i4>0</i4></value>`+
		`</data></array></value></param></params></methodResponse>`)
}

// readyMasterXML is master VM 49, RUNNING with READY=YES, whose CONTEXT
// authorizes alice with recipient and gives it an address; userTemplate
// is more of its USER_TEMPLATE.
func readyMasterXML(recipient, userTemplate string) string {
	return `<VM><ID>49</ID><UID>0</UID><NAME>m</NAME><STATE>3</STATE><LCM_STATE>3</LCM_STATE><TEMPLATE><CONTEXT>` +
		`<ETH0_IP>10.0.0.49</ETH0_IP><ETH0_MAC>02:00:0a:00:00:31</ETH0_MAC><ETH0_MASK>255.255.255.0</ETH0_MASK>` +
		`<` + vmcontext.KeyKubeconfigUsers + `><![CDATA[alice:` + recipient + `]]></` + vmcontext.KeyKubeconfigUsers + `>` +
		`</CONTEXT><NIC><MAC>02:00:0a:00:00:31</MAC><NETWORK>k8s</NETWORK><NIC_ID>0</NIC_ID></NIC></TEMPLATE>` +
		`<USER_TEMPLATE><` + vmcontext.KeyReady + `>YES</` + vmcontext.KeyReady + `>` + userTemplate + `</USER_TEMPLATE></VM>`
}

// kubeconfigEnv is a service 12 "lab" whose master is VM 49, with oned's
// and OneFlow's answers open to change, and alice's key on disk.
type kubeconfigEnv struct {
	od        *registertest.Oned
	of        *registertest.OneFlow
	answer    map[string]http.HandlerFunc
	flow      http.HandlerFunc // non-nil: every OneFlow request
	env       map[string]string
	identity  string
	recipient string
}

func newKubeconfigEnv(t *testing.T) *kubeconfigEnv {
	t.Helper()
	keyPath := filepath.Join(t.TempDir(), "age-key.txt")
	id, err := access.CreateIdentity(keyPath, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e := &kubeconfigEnv{
		od:       &registertest.Oned{VMs: map[int]string{49: readyMasterXML(id.Recipient, "")}},
		of:       &registertest.OneFlow{Services: `{"DOCUMENT_POOL":{"DOCUMENT":[{"ID":"12","NAME":"lab"}]}}`, Service: map[int]string{12: statusService(1, 1)}},
		answer:   map[string]http.HandlerFunc{},
		identity: keyPath, recipient: id.Recipient,
	}
	osrv := httptest.NewServer(onedWith{e.od, e.answer})
	fsrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.flow != nil {
			e.flow(w, r)
			return
		}
		e.of.ServeHTTP(w, r)
	}))
	t.Cleanup(osrv.Close)
	t.Cleanup(fsrv.Close)
	e.env = map[string]string{"ONEFLOW_URL": fsrv.URL, "ONE_XMLRPC": osrv.URL + "/RPC2", "file:/home/u/.one/one_auth": "alice:pw\n"}
	return e
}

// masterNeverAnswers makes master 49 keep each request written into it
// (one.vm.update) and answer none, as a master whose serve loop is not
// running does.
func (e *kubeconfigEnv) masterNeverAnswers() {
	var mu sync.Mutex
	var requests string
	reqKey := regexp.MustCompile(`ONEKUBE_KUBECONFIG_REQ_[A-Z0-9]+`)
	e.answer["one.vm.update"] = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for _, k := range reqKey.FindAllString(r.Header.Get("X-Body"), -1) {
			requests += "<" + k + ">pending</" + k + ">"
		}
		mu.Unlock()
		onedOK(w, r)
	}
	e.answer["one.vm.info"] = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		doc := readyMasterXML(e.recipient, requests)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprint(w, `<?xml version="1.0"?><methodResponse><params><param><value><array><data>`+
			`<value><boolean>1</boolean></value><value><string>`+html.EscapeString(doc)+`</string></value><value><i4>0</i4></value>`+
			`</data></array></value></param></params></methodResponse>`)
	}
}

func (e *kubeconfigEnv) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	args = append([]string{"kubeconfig", "lab", "--identity", e.identity, "--store-key=false", "--poll", "10ms"}, args...)
	return runCLI(t, "", e.env, args...)
}

// Exit 3 means "not ready yet: run again later" and only that: the
// service has no master yet, or none is RUNNING with READY=YES. A fault
// that waiting cannot mend (oned refusing the credentials or the call, a
// redirect, an answer that is not oned's, a timeout, the master not
// answering within --timeout) is 1, so a script retrying on 3 does not
// retry a wrong password forever.
func TestKubeconfigExitCodes(t *testing.T) {
	t.Parallel()
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(e *kubeconfigEnv)
		args  []string
		code  int
		says  string
	}{
		{"master not READY", func(e *kubeconfigEnv) {
			e.od.VMs[49] = statusVM(49, "kubeadm-init", false, nil)
		}, nil, exitInProgress, "no master of service 12 (lab) is ready"},
		{"master not running", func(e *kubeconfigEnv) {
			e.od.VMs[49] = registertest.VMXML(registertest.VM{ID: 49, Name: "m", State: 3, LCM: 2})
		}, nil, exitInProgress, "not running"},
		{"no master VM yet", func(e *kubeconfigEnv) {
			e.of.Service[12] = `{"DOCUMENT":{"ID":"12","NAME":"lab","TEMPLATE":{"BODY":{"name":"lab","state":1,"roles":[{"name":"master","state":1,"cardinality":1,"nodes":[]}]}}}}`
		}, nil, exitInProgress, "has no master VM yet"},
		{"oned authentication fault", func(e *kubeconfigEnv) {
			e.answer["one.vm.info"] = onedFault(0x100, "[one.vm.info] User couldn't be authenticated, aborting call.")
		}, nil, exitFailed, "authenticated"},
		{"oned authorization fault", func(e *kubeconfigEnv) {
			e.answer["one.vm.info"] = onedFault(0x200, "[one.vm.info] User [7] : Not authorized to perform USE VM [49].")
		}, nil, exitFailed, "Not authorized"},
		{"oned redirects", func(e *kubeconfigEnv) {
			e.answer["one.vm.info"] = func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://elsewhere.example/RPC2", http.StatusTemporaryRedirect)
			}
		}, nil, exitFailed, "redirect refused"},
		{"not oned's answer", func(e *kubeconfigEnv) {
			e.answer["one.vm.info"] = func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "<html>portal</html>") }
		}, nil, exitFailed, "VM 49"},
		{"oned times out", func(e *kubeconfigEnv) {
			e.answer["one.vm.info"] = hang
		}, []string{"--timeout", "300ms"}, exitFailed, "--timeout 300ms"},
		{"OneFlow refuses the credentials", func(e *kubeconfigEnv) {
			e.flow = func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "Unauthorized", http.StatusUnauthorized) }
		}, nil, exitFailed, "401"},
		{"the master does not answer within --timeout", func(e *kubeconfigEnv) {
			e.masterNeverAnswers()
		}, []string{"--timeout", "300ms"}, exitFailed, "did not answer within"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newKubeconfigEnv(t)
			tc.setup(e)
			code, out, errs := e.run(t, tc.args...)
			t.Logf("exit %d: %s", code, errs)
			if code != tc.code || out != "" || !strings.Contains(errs, tc.says) {
				t.Errorf("code %d, want %d saying %q\n%s%s", code, tc.code, tc.says, out, errs)
			}
		})
	}
}

// A --merge into a symlink to a named pipe is refused at once, before a
// request is written: no hang, no lock left, the pipe still a pipe.
func TestKubeconfigMergeRefusesFIFO(t *testing.T) {
	t.Parallel()
	e := newKubeconfigEnv(t)
	e.answer["one.vm.update"] = onedOK
	dir := t.TempDir()
	fifo, link := filepath.Join(dir, "fifo"), filepath.Join(dir, "config")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Unblock a reader the unfixed code leaves hanging.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := e.run(t, "--kubeconfig", link, "--timeout", "2s")
		done <- result{code, out, errs}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("kubeconfig --merge into a symlink to a named pipe hangs")
	}
	if r.code != exitFailed || !strings.Contains(r.errs, "named pipe") || !strings.Contains(r.errs, "not a regular file") {
		t.Errorf("code %d\n%s%s", r.code, r.out, r.errs)
	}
	for _, c := range e.od.Calls {
		if c.Method == "one.vm.update" {
			t.Errorf("a request was written: %v", c)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", fi.Mode(), err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.lock")); len(m) > 0 {
		t.Errorf("lock left behind: %v", m)
	}
}
