package onegatesim

import (
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// rackParam is one request parameter as Sinatra sees it after Rack merged
// the query string and a form body: nil (present without '=') is distinct
// from the empty string, and the last occurrence wins, body over query.
type rackParam struct {
	value   string
	present bool // the key occurred
	isNil   bool // it occurred without '=' (Ruby nil, which is falsy)
}

// params parses r's query and, for form-encoded bodies, body.
func params(r *http.Request, body []byte) (map[string]rackParam, bool) {
	out := map[string]rackParam{}
	parseRack(r.URL.RawQuery, out)
	form := isFormBody(r)
	if form {
		parseRack(string(body), out)
	}
	return out, form
}

// isFormBody: Rack parses a body as a form only for this media type (or for
// a POST with no Content-Type at all).
func isFormBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return r.Method == http.MethodPost
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

func parseRack(raw string, into map[string]rackParam) {
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, hasEq := strings.Cut(part, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			key = k
		}
		if !hasEq {
			into[key] = rackParam{present: true, isNil: true}
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			val = v
		}
		into[key] = rackParam{value: val, present: true}
	}
}
