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

// routeBody is what request.body.read gives a route that does not rewind:
// nothing, on Rack 3, once the params parser has read a form-typed body.
// The stock Ruby CLI (share/onegate/onegate) sends its JSON bodies without a
// Content-Type, so Net::HTTP labels them as forms: on 7.0 to 7.4 its
// `service scale` reads "" (JSON::ParserError, 500) and every `vm <action>`
// too (parse_json rescues it into a 400).
func (s *Sim) routeBody(r *http.Request, body []byte) []byte {
	if s.v.rack3() && isFormBody(r) {
		return nil
	}
	return body
}

// isFormBody: Rack parses a body as a form only for this media type (or for
// a POST with no Content-Type at all). Multipart bodies are not simulated.
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
