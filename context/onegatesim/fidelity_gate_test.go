package onegatesim

import (
	"strings"
	"testing"
)

// Fidelity tests for the OneGate side (onegate-server.rb and oned behind
// it), each named after the real server's behaviour it pins.

// cliReq is a request as the stock Ruby CLI (share/onegate/onegate) sends
// it: a JSON body without a Content-Type, which Net::HTTP labels
// application/x-www-form-urlencoded.
func cliReq(method, path string, vm int, body string) req {
	return req{method: method, path: path, vm: vm, body: body, ctype: "application/x-www-form-urlencoded"}
}

func runningService(t *testing.T, version string) *harness {
	t.Helper()
	h := newHarness(t, Options{Version: version, Cooldown: -1})
	h.instantiate(simpleTemplateV(version, "none", false, 1, 2, ""), "")
	return h
}

// On 7.0 to 7.4 (Sinatra 4, Rack 3) the params parser eats a form-typed
// body and the scale and action routes read "" from request.body: the
// stock CLI's `service scale` gets a 500 (JSON.parse raises) and every
// `vm <action>` a 400 (parse_json rescues). 6.10 (Rack 2 rewinds) serves
// both; a JSON Content-Type works everywhere.
func TestFidelity_70to74_StockCLIScaleGets500AndVMActionGets400(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version            string
		scale, action      int
		scaleBody, actBody string
	}{
		{"7.4", 500, 400, "unexpected end of input at line 1 column 1", "unexpected end of input at line 1 column 1"},
		{"7.0", 500, 400, "<h1>JSON::ParserError at /service/role/worker</h1>", "unexpected end of input at line 1 column 1"},
		{"6.10", 200, 204, "", ""},
	} {
		t.Run(c.version, func(t *testing.T) {
			h := runningService(t, c.version)
			r := h.do(cliReq("PUT", "/service/role/worker", 100, `{"cardinality":"3"}`))
			if r.status != c.scale || !strings.Contains(r.body, c.scaleBody) {
				t.Errorf("CLI service scale = %d %q, want %d %q", r.status, r.body, c.scale, c.scaleBody)
			}
			r = h.do(cliReq("POST", "/vms/102/action", 100, `{"action":{"perform":"resched"}}`))
			if r.status != c.action || r.body != c.actBody {
				t.Errorf("CLI vm resched = %d %q, want %d %q", r.status, r.body, c.action, c.actBody)
			}
			// What onekube's client sends: application/json.
			r = h.do(req{method: "POST", path: "/vms/102/action", vm: 100, body: `{"action":{"perform":"resched"}}`, ctype: "application/json"})
			if r.status != 204 {
				t.Errorf("JSON-typed action = %d %q", r.status, r.body)
			}
			want := 3
			if c.scale != 200 {
				r = h.do(req{method: "PUT", path: "/service/role/worker", vm: 100, body: `{"cardinality":3}`, ctype: "application/json"})
				if r.status != 200 {
					t.Errorf("JSON-typed scale = %d %q", r.status, r.body)
				}
			}
			if n := len(h.sim.RoleVMs(1, "worker")); n != want {
				t.Errorf("%d workers after scaling to 3", n)
			}
		})
	}
}

// From 7.2 the server's "error 500" block answers every explicit halt 500
// with "Internal server error" (there is no exception to report), and an
// unhandled exception with its message, "ERROR:" stripped. Before, the
// halt's own message went out, and an exception got Sinatra's development
// page.
func TestFidelity_72_ExplicitHalt500SaysInternalServerError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ version, parse, erase, action string }{
		{"7.4", "Internal server error", "Internal server error", "Internal server error"},
		{"7.2", "Internal server error", "Internal server error", "Internal server error"},
		{"7.0", `[one.vm.update] Parse error: syntax error, unexpected "','", expecting end of file at line 1, columns 6:7`,
			"attribute not found", "fly action not  available for this resource"},
		{"6.10", `[one.vm.update] Parse error: syntax error, unexpected "','", expecting end of file at line 1, columns 6:7`,
			"attribute not found", "fly action not  available for this resource"},
	} {
		t.Run(c.version, func(t *testing.T) {
			h := runningService(t, c.version)
			for _, x := range []struct {
				r    resp
				want string
			}{
				{h.putForm(100, "/vm", "A=x,y", 1), c.parse},
				{h.putForm(100, "/vm", "NOPE", 2), c.erase},
				{h.do(req{method: "POST", path: "/vms/101/action", vm: 100, body: `{"action":{"perform":"fly"}}`, ctype: "application/json"}), c.action},
			} {
				if x.r.status != 500 || x.r.body != x.want || x.r.ctype != "application/json;charset=utf-8" {
					t.Errorf("got %d %q (%s), want 500 %q", x.r.status, x.r.body, x.r.ctype, x.want)
				}
			}
		})
	}
}

func TestFidelity_72_UncaughtExceptionCarriesItsMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		r     req
		msg72 string // 7.2+: the body
		class string // before: the development page names it
	}{
		{"scale body not JSON", req{method: "PUT", path: "/service/role/worker", vm: 100, body: "not json", ctype: "application/json"},
			"unexpected token 'not' at line 1 column 1", "JSON::ParserError"},
		{"scale body an array", req{method: "PUT", path: "/service/role/worker", vm: 100, body: "[1]", ctype: "application/json"},
			"no implicit conversion of String into Integer", "TypeError"},
		{"erase with a bad XPath", req{method: "PUT", path: "/vm", vm: 100, body: "data=A+B&type=2", ctype: "application/x-www-form-urlencoded"},
			"Invalid expression: USER_TEMPLATE/A B", "Nokogiri::XML::XPath::SyntaxError"},
		{"invalid UTF-8", req{method: "PUT", path: "/vm", vm: 100, body: "data=A%3D%FF", ctype: "application/x-www-form-urlencoded"},
			"invalid byte sequence in UTF-8", "ArgumentError"},
		{"action body an array", req{method: "POST", path: "/vms/101/action", vm: 100, body: "[1]", ctype: "application/json"},
			"undefined method `has_key?' for an instance of Array", "NoMethodError"},
		{"perform a number", req{method: "POST", path: "/vms/101/action", vm: 100, body: `{"action":{"perform":5}}`, ctype: "application/json"},
			"undefined method `downcase' for an instance of Integer", "NoMethodError"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := runningService(t, "7.4")
			if r := h.do(c.r); r.status != 500 || r.body != c.msg72 {
				t.Errorf("7.4: %d %q, want 500 %q", r.status, r.body, c.msg72)
			}
			h = runningService(t, "6.10")
			r := h.do(c.r)
			if r.status != 500 || r.ctype != "text/html;charset=utf-8" || !strings.Contains(r.body, "<h1>"+c.class+" at ") {
				t.Errorf("6.10: %d %s %q, want Sinatra's page for %s", r.status, r.ctype, r.body, c.class)
			}
		})
	}
}

// include/Attribute.h: a name that starts with neither a letter nor '_',
// or starts with "XML", gets "ONE_" in front.
func TestFidelity_OnedPrefixesInvalidXMLNamesWithONE(t *testing.T) {
	t.Parallel()
	h := runningService(t, "7.4")
	if r := h.putForm(100, "/vm", "1A=x\n_B=y\nXMLC=z", 1); r.status != 200 {
		t.Fatalf("PUT: %d %q", r.status, r.body)
	}
	ut := h.sim.UserTemplate(100)
	if ut["ONE_1A"] != "x" || ut["_B"] != "y" || ut["ONE_XMLC"] != "z" {
		t.Errorf("USER_TEMPLATE: %v", ut)
	}
}

// Template::merge (one.vm.update append): every attribute the update
// names is erased first, and an empty vector is not set: E=[] removes E.
func TestFidelity_OnedDropsEmptyVectors(t *testing.T) {
	t.Parallel()
	h := runningService(t, "7.4")
	h.putForm(100, "/vm", `E=[X="1"]`, 1)
	if r := h.do(req{method: "GET", path: "/vm", vm: 100}); !strings.Contains(r.body, `"E":{"X":"1"}`) {
		t.Fatalf("vector not stored: %s", r.body)
	}
	if r := h.putForm(100, "/vm", "E=[]", 1); r.status != 200 {
		t.Fatalf("E=[]: %d %q", r.status, r.body)
	}
	if r := h.do(req{method: "GET", path: "/vm", vm: 100}); strings.Contains(r.body, `"E":`) {
		t.Errorf("E=[] left E in the user template: %s", r.body)
	}
}

// The update helper falls back to the raw body when there is no data
// parameter. A form-typed raw body is there to read on 6.x (Rack 2 rewinds
// after parsing the form) and from 7.2 (the helper rewinds), not on 7.0.
func TestFidelity_610_StoresARawFormBodyWithoutData(t *testing.T) {
	t.Parallel()
	for version, want := range map[string]string{"6.10": "raw", "7.0": "", "7.2": "raw", "7.4": "raw"} {
		h := runningService(t, version)
		r := h.do(req{method: "PUT", path: "/vm", vm: 100, body: "A=raw", ctype: "application/x-www-form-urlencoded"})
		if got := h.sim.UserTemplate(100)["A"]; r.status != 200 || got != want {
			t.Errorf("%s: %d, A=%q, want %q", version, r.status, got, want)
		}
	}
}
