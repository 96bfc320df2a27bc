package register

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	vmcontext "github.com/onekube/onekube/context"
)

// Document is a named OpenNebula object (a service or VM template) and its
// owner. UID is -1 when the server did not say.
type Document struct {
	ID    int
	Name  string
	UID   int
	UName string
}

// ServiceTemplates is what Create needs of OneFlow.
type ServiceTemplates interface {
	List(ctx context.Context) ([]Document, error)
	Create(ctx context.Context, body []byte) (int, error)
	Update(ctx context.Context, id int, body []byte) error
}

// FlowClient speaks OneFlow's REST API for service templates.
type FlowClient struct {
	BaseURL  string // e.g. http://localhost:2474
	User     string
	Password vmcontext.Secret
	HTTP     *http.Client // with a timeout
}

var _ ServiceTemplates = (*FlowClient)(nil)

// HTTPError is a non-2xx answer. OneFlow's error bodies are plain text
// ("Mandatory document key 'type' is missing"); Body keeps a short
// one-line excerpt of it, credentials masked (a proxy's 401 page may echo
// the Authorization header).
type HTTPError struct {
	Method, Path string
	Status       string
	Body         string
}

func (e *HTTPError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("oneflow: %s %s: %s", e.Method, e.Path, e.Status)
	}
	return fmt.Sprintf("oneflow: %s %s: %s: %s", e.Method, e.Path, e.Status, e.Body)
}

// List returns the service templates (GET /service_template).
func (c *FlowClient) List(ctx context.Context) ([]Document, error) {
	return c.pool(ctx, "/service_template", "service template")
}

// pool reads a DOCUMENT_POOL answer (GET /service_template, GET /service)
// into IDs and names.
func (c *FlowClient) pool(ctx context.Context, path, what string) ([]Document, error) {
	b, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	var pool struct {
		Pool struct {
			Document json.RawMessage `json:"DOCUMENT"`
		} `json:"DOCUMENT_POOL"`
	}
	if err := json.Unmarshal(b, &pool); err != nil {
		return nil, fmt.Errorf("oneflow: decoding the %s pool: %w", what, err)
	}
	raw := bytes.TrimSpace(pool.Pool.Document)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	// The pool is XML turned into JSON: one template is an object, more
	// are an array.
	if raw[0] == '{' {
		raw = append(append([]byte("["), raw...), ']')
	}
	var docs []flowDoc
	if err := json.Unmarshal(raw, &docs); err != nil {
		return nil, fmt.Errorf("oneflow: decoding the %s pool: %w", what, err)
	}
	out := make([]Document, 0, len(docs))
	for _, d := range docs {
		id, err := d.id()
		if err != nil {
			return nil, err
		}
		out = append(out, Document{ID: id, Name: d.Name, UID: d.uid(), UName: d.UName})
	}
	return out, nil
}

// Create registers a service template (POST /service_template) and returns
// its ID.
func (c *FlowClient) Create(ctx context.Context, body []byte) (int, error) {
	b, err := c.do(ctx, http.MethodPost, "/service_template", body)
	if err != nil {
		return 0, err
	}
	var resp struct {
		Document flowDoc `json:"DOCUMENT"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return 0, fmt.Errorf("oneflow: decoding the created service template: %w", err)
	}
	return resp.Document.id()
}

// Update replaces a service template's body (PUT /service_template/:id, as
// oneflow-template update does).
func (c *FlowClient) Update(ctx context.Context, id int, body []byte) error {
	_, err := c.do(ctx, http.MethodPut, "/service_template/"+strconv.Itoa(id), body)
	return err
}

type flowDoc struct {
	ID    json.RawMessage `json:"ID"`
	Name  string          `json:"NAME"`
	UID   json.RawMessage `json:"UID"`
	UName string          `json:"UNAME"`
}

// uid reads the owner's ID like id, -1 when absent or not a number.
func (d flowDoc) uid() int {
	uid, err := strconv.Atoi(strings.Trim(string(d.UID), `"`))
	if err != nil || uid < 0 {
		return -1
	}
	return uid
}

// id reads ID, a string in OneFlow's XML-derived JSON, a number elsewhere.
func (d flowDoc) id() (int, error) {
	s := strings.Trim(string(d.ID), `"`)
	id, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("oneflow: document ID %s is not a number", d.ID)
	}
	return id, nil
}

func (c *FlowClient) do(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, fmt.Errorf("oneflow: %s %s: %w", method, path, err)
	}
	req.SetBasicAuth(c.User, c.Password.Reveal())
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := safeClient(c.HTTP).Do(req)
	if err != nil {
		msg := fmt.Sprintf("oneflow: %s %s: %s", method, path, oneLine(redactAuth(err.Error(), c.User, c.Password), maxErrorLine))
		return nil, &callError{msg, err}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, &HTTPError{Method: method, Path: path, Status: oneLine(resp.Status, 60),
			Body: excerpt(redactAuth(readErrorBody(resp.Body), c.User, c.Password))}
	}
	b, err := readBounded(resp.Body, MaxAnswer)
	if err != nil {
		return nil, fmt.Errorf("oneflow: %s %s: reading the answer: %w", method, path, err)
	}
	return b, nil
}
