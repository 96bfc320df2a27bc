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

// Document is a named OpenNebula object (a service or VM template).
type Document struct {
	ID   int
	Name string
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
// ("Mandatory document key 'type' is missing"), kept verbatim.
type HTTPError struct {
	Method, Path string
	Status       string
	Body         string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("oneflow: %s %s: %s: %s", e.Method, e.Path, e.Status, strings.TrimSpace(e.Body))
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
		out = append(out, Document{ID: id, Name: d.Name})
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
	ID   json.RawMessage `json:"ID"`
	Name string          `json:"NAME"`
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
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oneflow: %s %s: %s", method, path, vmcontext.Redact(err.Error(), c.Password))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("oneflow: %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &HTTPError{Method: method, Path: path, Status: resp.Status, Body: vmcontext.Redact(string(b), c.Password)}
	}
	return b, nil
}
