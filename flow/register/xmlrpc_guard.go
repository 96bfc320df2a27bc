package register

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"

	vmcontext "github.com/onekube/onekube/context"
)

// ErrBadAnswer: oned's answer is not the XML-RPC response it should be.
var ErrBadAnswer = errors.New("not an XML-RPC answer from oned")

// answerError is a failed oned answer, with a short excerpt of it.
type answerError struct {
	err     error
	status  string
	excerpt string
}

func (e *answerError) Error() string {
	s := e.err.Error()
	if e.status != "" {
		s += " (HTTP " + e.status + ")"
	}
	if e.excerpt != "" {
		s += ": " + e.excerpt
	}
	return s
}

func (e *answerError) Unwrap() error { return e.err }

// onedGuard is the transport under goca's XML-RPC client. goca reads the
// whole answer without a bound and indexes the result array without
// checking its length (client.go CallContext: result[0], result[1],
// result[2]), so an answer of fewer than three values panics, and its XML
// decoder recurses once per nested array. The guard reads each answer with
// a bound, and hands goca only an answer of the shape oned sends; anything
// else becomes an error here. Redirects pass through, to be refused by the
// client (safeClient).
type onedGuard struct {
	base  http.RoundTripper
	limit int64
	// user and password are masked in excerpts of failed answers (a
	// proxy's error page may echo the request body) before they are cut.
	user     string
	password vmcontext.Secret
}

func (g onedGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	base := g.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 3 && resp.Header.Get("Location") != "" {
		return resp, nil // refused by the client's CheckRedirect
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, &answerError{err: ErrBadAnswer, status: resp.Status, excerpt: excerpt(redactAuth(readErrorBody(resp.Body), g.user, g.password))}
	}
	if resp.ContentLength > g.limit {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, resp.ContentLength)
	}
	b, err := readBoundedSized(resp.Body, g.limit, resp.ContentLength)
	if err != nil {
		return nil, err
	}
	if err := checkMethodResponse(b); err != nil {
		return nil, &answerError{err: fmt.Errorf("%w: %v", ErrBadAnswer, err), excerpt: excerpt(redactAuth(errorPrefix(b), g.user, g.password))}
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	return resp, nil
}

// Bounds of a well-formed answer: methodResponse, params, param, value,
// array, data, value, string is eight levels; a fault's struct members
// nine. The VM or pool document travels as escaped text, not elements.
const (
	maxXMLDepth    = 10
	maxXMLElements = 64
)

// xnode is an element of a parsed answer, its text reduced to what the
// shape check needs.
type xnode struct {
	name string
	kids []*xnode
	text bool // holds non-blank text
}

// checkMethodResponse accepts what oned answers (xmlrpc-c): a fault, or
// params with one array of at least three scalars, a boolean first and an
// integer third, as goca reads them.
func checkMethodResponse(b []byte) error {
	root, err := parseShallowXML(b)
	if err != nil {
		return err
	}
	if root.name != "methodResponse" || len(root.kids) != 1 || root.text {
		return errors.New("want one <methodResponse> holding <params> or <fault>")
	}
	top := root.kids[0]
	switch top.name {
	case "fault":
		return checkFault(top)
	case "params":
	default:
		return fmt.Errorf("<%s> in <methodResponse>", top.name)
	}
	data, err := path(top, "param", "value", "array", "data")
	if err != nil {
		return err
	}
	if len(data.kids) < 3 {
		return fmt.Errorf("the result array has %d values, oned sends at least 3", len(data.kids))
	}
	for i, v := range data.kids {
		kind, err := scalar(v)
		if err != nil {
			return fmt.Errorf("result value %d: %v", i, err)
		}
		switch {
		case i == 0 && kind != "boolean":
			return fmt.Errorf("result value 0 is %s, want a boolean", kind)
		case i == 2 && !isXMLInt(kind):
			return fmt.Errorf("result value 2 is %s, want an integer", kind)
		}
	}
	return nil
}

// checkFault accepts <fault><value><struct> of scalar members.
func checkFault(f *xnode) error {
	st, err := path(f, "value", "struct")
	if err != nil {
		return err
	}
	for _, m := range st.kids {
		if m.name != "member" {
			return fmt.Errorf("<%s> in a fault's <struct>", m.name)
		}
		for _, k := range m.kids {
			if k.name == "value" {
				if _, err := scalar(k); err != nil {
					return fmt.Errorf("fault member: %v", err)
				}
			}
		}
	}
	return nil
}

// path follows single children named names, one level each.
func path(n *xnode, names ...string) (*xnode, error) {
	for _, name := range names {
		if len(n.kids) != 1 || n.kids[0].name != name || n.text {
			return nil, fmt.Errorf("want exactly one <%s> in <%s>", name, n.name)
		}
		n = n.kids[0]
	}
	return n, nil
}

// scalar checks a <value> holding text or one typed scalar and names it.
func scalar(v *xnode) (string, error) {
	if v.name != "value" {
		return "", fmt.Errorf("<%s>, want <value>", v.name)
	}
	switch {
	case len(v.kids) == 0:
		return "string", nil // untyped text is a string
	case len(v.kids) > 1 || v.text:
		return "", errors.New("a <value> with several parts")
	}
	t := v.kids[0]
	switch {
	case len(t.kids) > 0:
		return "", fmt.Errorf("<%s> is not a scalar", t.name)
	case t.name == "boolean" || t.name == "string" || isXMLInt(t.name):
		return t.name, nil
	}
	return "", fmt.Errorf("unexpected type <%s>", t.name)
}

func isXMLInt(name string) bool { return name == "i4" || name == "int" || name == "i8" }

// parseShallowXML parses a small XML document into elements, refusing one
// deeper than maxXMLDepth or with more than maxXMLElements elements, a
// DOCTYPE, or text outside the root.
func parseShallowXML(b []byte) (*xnode, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	var stack []*xnode
	var root *xnode
	elements := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			elements++
			if len(stack) >= maxXMLDepth || elements > maxXMLElements {
				return nil, fmt.Errorf("more than %d levels or %d elements", maxXMLDepth, maxXMLElements)
			}
			n := &xnode{name: t.Name.Local}
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("two root elements")
				}
				root = n
			} else {
				parent := stack[len(stack)-1]
				parent.kids = append(parent.kids, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(bytes.TrimSpace(t)) == 0 {
				continue
			}
			if len(stack) == 0 {
				return nil, errors.New("text outside the root element")
			}
			stack[len(stack)-1].text = true
		case xml.Directive:
			return nil, errors.New("a <!DOCTYPE> or other directive")
		}
	}
	if root == nil {
		return nil, errors.New("no XML element")
	}
	return root, nil
}
