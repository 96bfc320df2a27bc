package onegate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	vmcontext "github.com/onekube/onekube/context"
)

// Config configures a Client. Endpoint, VMID and Token come from the VM
// context (vmcontext.Load).
type Config struct {
	Endpoint string // ONEGATE_ENDPOINT, http or https, may carry a path prefix
	VMID     int
	Token    vmcontext.Secret
	// Timeout bounds every request, connection to last byte; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// CAFile adds a PEM CA bundle to the system roots for https endpoints
	// (a OneGate behind a private CA); CAPEM does the same from memory.
	CAFile string
	CAPEM  []byte
	// InsecureSkipVerify disables certificate checks, as the Ruby client does.
	InsecureSkipVerify bool
	// HTTPClient replaces the built-in client (then CAFile, CAPEM,
	// InsecureSkipVerify and the proxy rule are the caller's business).
	// Timeout still applies to each request, and redirects are refused
	// all the same (the client works on a copy).
	HTTPClient *http.Client
	UserAgent  string // "" means "onekube"
}

// DefaultTimeout bounds a request when Config.Timeout is zero.
const DefaultTimeout = 15 * time.Second

// Response bodies are bounded: a VM document is a few KiB, an extended
// service a few hundred; an error message is one line.
const (
	maxBody      = 8 << 20
	maxErrorBody = 1024
)

// Client talks to OneGate as one VM. It is safe for concurrent use. It
// neither retries nor logs: callers classify errors with IsRetryable and log
// what they choose; the token never appears in an error.
type Client struct {
	base    string // endpoint without trailing slash
	vmid    string
	token   vmcontext.Secret
	timeout time.Duration
	ua      string
	hc      *http.Client
}

// New checks cfg and builds a Client.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("onegate endpoint: not an http(s) URL")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("onegate endpoint: must not have a query or fragment")
	}
	if cfg.VMID < 0 {
		return nil, fmt.Errorf("onegate: VM ID %d is negative", cfg.VMID)
	}
	if cfg.Token.IsZero() {
		return nil, errors.New("onegate: empty token")
	}
	if strings.ContainsAny(cfg.Token.Reveal(), "\r\n") {
		return nil, errors.New("onegate: token contains a line break")
	}
	c := &Client{
		base:    strings.TrimRight(cfg.Endpoint, "/"),
		vmid:    strconv.Itoa(cfg.VMID),
		token:   cfg.Token,
		timeout: cfg.Timeout,
		ua:      cfg.UserAgent,
		hc:      cfg.HTTPClient,
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.ua == "" {
		c.ua = "onekube"
	}
	if c.hc == nil {
		if c.hc, err = newHTTPClient(Config{CAFile: cfg.CAFile, CAPEM: cfg.CAPEM, InsecureSkipVerify: cfg.InsecureSkipVerify, Timeout: c.timeout}); err != nil {
			return nil, fmt.Errorf("onegate: %w", err)
		}
	} else {
		hc := *c.hc
		c.hc = &hc
	}
	// Never follow a redirect: net/http would resend X-ONEGATE-TOKEN (it
	// only strips Authorization and cookies across hosts) and, on 307/308,
	// the body with the join token, to wherever Location points. OneGate
	// itself never redirects.
	c.hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c, nil
}

// VMID is the ID of the VM the client speaks for.
func (c *Client) VMID() int { n, _ := strconv.Atoi(c.vmid); return n }

// errRequestTimeout marks the client's own deadline, to tell it from the
// caller's cancellation.
var errRequestTimeout = errors.New("onegate request deadline")

// do sends one request and returns the body of a 2xx response.
func (c *Client) do(ctx context.Context, method, path, contentType, body string) ([]byte, error) {
	rctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errRequestTimeout)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(rctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("onegate: %s %s: %w", method, path, err)
	}
	req.Header.Set("X-ONEGATE-TOKEN", c.token.Reveal())
	req.Header.Set("X-ONEGATE-VMID", c.vmid)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.ua)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, rctx, method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody)) // keep the connection reusable
		body := errorText(resp.Header.Get("Content-Type"), msg, c.token)
		if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
			body = "redirect to " + redirectTarget(resp.Header.Get("Location")) + " not followed"
		}
		return nil, &Error{Method: method, Path: path, Status: resp.StatusCode, Body: body}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, c.transportError(ctx, rctx, method, path, err)
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("onegate: %s %s: response larger than %d bytes", method, path, maxBody)
	}
	return data, nil
}

// transportError wraps a failure to get a response. The caller's own
// cancellation is returned as such (not retryable); the client's deadline
// becomes ErrTimeout (retryable).
func (c *Client) transportError(ctx, rctx context.Context, method, path string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("onegate: %s %s: %w", method, path, context.Cause(ctx))
	}
	var ne net.Error
	if errors.Is(context.Cause(rctx), errRequestTimeout) || errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("onegate: %s %s: %w after %s", method, path, ErrTimeout, c.timeout)
	}
	// *url.Error repeats the method and URL (never headers); unwrap it to
	// keep one prefix.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("onegate: %s %s: %w", method, path, err)
}

// redirectTarget shows where a redirect pointed, without its query (which
// could carry anything).
func redirectTarget(loc string) string {
	u, err := url.Parse(loc)
	if err != nil || loc == "" {
		return "an unreadable location"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return strconv.Quote(u.String())
}

// getVM reads one VM and checks the answer is the VM asked for: a proxy or
// server mix-up must not make the agent act on another VM's data.
func (c *Client) getVM(ctx context.Context, path string, want int) (*VM, error) {
	data, err := c.do(ctx, http.MethodGet, path, "", "")
	if err != nil {
		return nil, err
	}
	vm, err := DecodeVM(data)
	if err != nil {
		return nil, fmt.Errorf("onegate: GET %s: %w", path, err)
	}
	if vm.ID != want {
		return nil, fmt.Errorf("onegate: GET %s: %w: answered with VM %d, want VM %d", path, ErrWrongVM, vm.ID, want)
	}
	return vm, nil
}

// GetVM reads this VM (GET /vm).
func (c *Client) GetVM(ctx context.Context) (*VM, error) { return c.getVM(ctx, "/vm", c.VMID()) }

// GetVMByID reads another VM of the same service (GET /vms/:id). A 400
// means the VM is not in this VM's service.
func (c *Client) GetVMByID(ctx context.Context, id int) (*VM, error) {
	if id < 0 {
		return nil, fmt.Errorf("%w: VM ID %d", ErrInvalid, id)
	}
	return c.getVM(ctx, "/vms/"+strconv.Itoa(id), id)
}

// GetService reads this VM's service in the short form (GET /service, no
// extended parameter: the server treats any value, even false, as extended).
func (c *Client) GetService(ctx context.Context) (*Service, error) {
	return c.getService(ctx, "/service")
}

// GetServiceExtended reads the service with every node's full VM
// (GET /service?extended=true, 5.12+). It costs the server one VM lookup
// per node; prefer GetService plus GetVMByID for the nodes you need.
func (c *Client) GetServiceExtended(ctx context.Context) (*Service, error) {
	return c.getService(ctx, "/service?extended=true")
}

func (c *Client) getService(ctx context.Context, path string) (*Service, error) {
	data, err := c.do(ctx, http.MethodGet, path, "", "")
	if err != nil {
		return nil, err
	}
	s, err := DecodeService(data)
	if err != nil {
		return nil, fmt.Errorf("onegate: GET %s: %w", path, err)
	}
	return s, nil
}

const formType = "application/x-www-form-urlencoded"

// UpdateVM merges kvs into this VM's USER_TEMPLATE in one PUT /vm, so a
// reader sees all of them or none. Values are checked first (CheckValue);
// nothing is sent if any is refused.
func (c *Client) UpdateVM(ctx context.Context, kvs ...KV) error {
	return c.update(ctx, "/vm", kvs)
}

// UpdateVMByID is UpdateVM on another VM of the same service (PUT /vms/:id).
func (c *Client) UpdateVMByID(ctx context.Context, id int, kvs ...KV) error {
	if id < 0 {
		return fmt.Errorf("%w: VM ID %d", ErrInvalid, id)
	}
	return c.update(ctx, "/vms/"+strconv.Itoa(id), kvs)
}

func (c *Client) update(ctx context.Context, path string, kvs []KV) error {
	body, err := EncodeUpdate(kvs)
	if err != nil {
		return fmt.Errorf("onegate: PUT %s: %w", path, err)
	}
	_, err = c.do(ctx, http.MethodPut, path, formType, body)
	return err
}

// EraseVMKey deletes key from this VM's USER_TEMPLATE (type=2). The server
// answers 500 "attribute not found" when the key is absent.
func (c *Client) EraseVMKey(ctx context.Context, key string) error {
	body, err := EncodeErase(key)
	if err != nil {
		return fmt.Errorf("onegate: PUT /vm: %w", err)
	}
	_, err = c.do(ctx, http.MethodPut, "/vm", formType, body)
	return err
}

// ScaleRole sets the cardinality of a role of this VM's service
// (PUT /service/role/:role with a JSON body).
func (c *Client) ScaleRole(ctx context.Context, role string, cardinality int) error {
	if role == "" || strings.ContainsAny(role, "/?#%\x00") {
		return fmt.Errorf("onegate: scale: %w: bad role name", ErrInvalid)
	}
	if cardinality < 0 {
		return fmt.Errorf("onegate: scale %s: %w: cardinality %d", role, ErrInvalid, cardinality)
	}
	body := `{"cardinality":` + strconv.Itoa(cardinality) + `}`
	_, err := c.do(ctx, http.MethodPut, "/service/role/"+url.PathEscape(role), "application/json", body)
	return err
}
