package testbed

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strconv"
	"strings"

	"github.com/onekube/onekube/context/onegate"
)

// Attacker is root on one VM of a service, as issue 20's threat model
// has it: its OneGate token, its own network stack, nothing else. A test
// scripts it. Every OneGate request goes from inside the VM, with curl
// and the token one-context left in /run/one-context/one_env, in the
// stock onegate client's form (PUT bodies `data=...&type=1|2`,
// form-encoded; reference onegate.md), so the simulator's checks apply
// as the real server's would: the restricted-attribute check and its
// bypass, Options.Deny (a hardened onegate-server.conf), sibling writes
// and actions. Nothing here reaches into the simulator.
type Attacker struct {
	ID int
	VM *VM
}

// Attacker takes over a VM of the service that has booted.
func (s *Service) Attacker(vmid int) (*Attacker, error) {
	vm := s.VM(vmid)
	if vm == nil {
		return nil, fmt.Errorf("VM %d never booted", vmid)
	}
	return &Attacker{ID: vmid, VM: vm}, nil
}

// Run runs a command as root in the attacker's VM (its network namespace
// included: listen on a port, curl a sibling).
func (a *Attacker) Run(ctx context.Context, name string, args ...string) (string, error) {
	return a.VM.Run(ctx, name, args...)
}

// Listen listens in the attacker's network namespace, on its own
// addresses: a server root on the VM could run (a forged presentation,
// say).
func (a *Attacker) Listen(network, addr string) (net.Listener, error) {
	pid := a.VM.Pid()
	if pid == 0 {
		return nil, fmt.Errorf("VM %d is powered off", a.ID)
	}
	var ln net.Listener
	err := inNetns(pid, func() error {
		var err error
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// OneGateError is an answer outside 2xx.
type OneGateError struct {
	Route  string
	Status int
	Body   string
}

func (e *OneGateError) Error() string {
	return fmt.Sprintf("OneGate %s: HTTP %d: %s", e.Route, e.Status, strings.TrimSpace(e.Body))
}

// curlScript sends one request with the VM's own credentials; the body,
// if any, comes on stdin, and the status follows the body on a last line.
const curlScript = `. /run/one-context/one_env
set -- "$1" "$2" "$ONEGATE_ENDPOINT$3"
if [ -n "$2" ]; then
  exec curl -sS --max-time 20 -X "$1" -H "X-ONEGATE-TOKEN: $TOKENTXT" -H "X-ONEGATE-VMID: $VMID" -H "Content-Type: $2" --data-binary @- -w '\n%{http_code}' "$3"
fi
exec curl -sS --max-time 20 -X "$1" -H "X-ONEGATE-TOKEN: $TOKENTXT" -H "X-ONEGATE-VMID: $VMID" -w '\n%{http_code}' "$3"`

// OneGate sends one request to OneGate from inside the VM and returns
// the body of a 2xx answer, or a *OneGateError.
func (a *Attacker) OneGate(ctx context.Context, method, path, ctype, body string) ([]byte, error) {
	cmd, err := a.VM.Command(ctx, nil, "sh", "-c", curlScript, "onegate", method, ctype, path)
	if err != nil {
		return nil, err
	}
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return nil, fmt.Errorf("VM %d: curl %s %s: %v %s", a.ID, method, path, err, msg)
	}
	s := string(out)
	i := strings.LastIndexByte(s, '\n')
	code, err := strconv.Atoi(strings.TrimSpace(s[i+1:]))
	if i < 0 || err != nil {
		return nil, fmt.Errorf("VM %d: curl %s %s: no status in %q", a.ID, method, path, s)
	}
	if code < 200 || code > 299 {
		return nil, &OneGateError{Route: method + " " + path, Status: code, Body: s[:i]}
	}
	return []byte(s[:i]), nil
}

// Put sends data as the stock client's `onegate vm update [ID] --data`:
// PUT /vm (id < 0) or PUT /vms/:id, type 1 merges, type 2 erases. data
// goes as typed: `\tROLE_NAME=master` is the restricted-attribute bypass.
func (a *Attacker) Put(ctx context.Context, id int, data string, typ int) error {
	path := "/vm"
	if id >= 0 {
		path = "/vms/" + strconv.Itoa(id)
	}
	body := url.Values{"data": {data}, "type": {strconv.Itoa(typ)}}.Encode()
	_, err := a.OneGate(ctx, "PUT", path, "application/x-www-form-urlencoded", body)
	return err
}

// Publish merges key=value lines into the attacker's own USER_TEMPLATE.
func (a *Attacker) Publish(ctx context.Context, lines ...string) error {
	return a.Put(ctx, -1, strings.Join(lines, "\n"), 1)
}

// Action performs a VM action on a sibling (POST /vms/:id/action).
func (a *Attacker) Action(ctx context.Context, id int, action string) error {
	b, _ := json.Marshal(map[string]any{"action": map[string]string{"perform": action}})
	_, err := a.OneGate(ctx, "POST", "/vms/"+strconv.Itoa(id)+"/action", "application/json", string(b))
	return err
}

// ReadExtended reads GET /service?extended=true: every sibling's whole VM
// document, CONTEXT included.
func (a *Attacker) ReadExtended(ctx context.Context) (*onegate.Service, error) {
	b, err := a.OneGate(ctx, "GET", "/service?extended=true", "", "")
	if err != nil {
		return nil, err
	}
	return onegate.DecodeService(b)
}

// ReadVM reads a sibling (GET /vms/:id), or itself (id < 0, GET /vm).
func (a *Attacker) ReadVM(ctx context.Context, id int) (*onegate.VM, error) {
	path := "/vm"
	if id >= 0 {
		path = "/vms/" + strconv.Itoa(id)
	}
	b, err := a.OneGate(ctx, "GET", path, "", "")
	if err != nil {
		return nil, err
	}
	return onegate.DecodeVM(b)
}
