package onegate_test

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/onekube/onekube/context/onegate"
)

// serverDecode reads a PUT body the way the OneGate server and oned do for
// a pre-quoted body: the data and type form fields, one KEY="value" per
// line, the quotes stripped. It fails on anything the server would not read
// back as the same pairs.
func serverDecode(t *testing.T, body string) []onegate.KV {
	t.Helper()
	form, err := url.ParseQuery(body)
	if err != nil {
		t.Fatalf("body is not a form: %v", err)
	}
	if form.Get("type") != "1" || len(form["data"]) != 1 {
		t.Fatalf("form = %q", form)
	}
	var kvs []onegate.KV
	for _, line := range strings.Split(form.Get("data"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
			t.Fatalf("line %q is not KEY=\"value\"", line)
		}
		v = v[1 : len(v)-1]
		if strings.ContainsAny(v, "\",[]\\\n") {
			t.Fatalf("line %q would break escape_attr or the template parser", line)
		}
		kvs = append(kvs, onegate.KV{Key: k, Value: v})
	}
	return kvs
}

func FuzzEncodeUpdate(f *testing.F) {
	f.Add("ONEGATE_K8S_TOKEN", "sg7711.p19vy0eqxefc0lqz", "READY", "YES")
	f.Add("A", "a b=c+/==", "B", "")
	f.Add("A", "x,y", "B", "\n")
	f.Add("A", `q"`, "A", "dup")
	f.Add("K-1", "v", "_k", "ü€")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		kvs := []onegate.KV{{Key: k1, Value: v1}, {Key: k2, Value: v2}}
		body, err := onegate.EncodeUpdate(kvs)
		if err != nil {
			if !errors.Is(err, onegate.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if got := serverDecode(t, body); !reflect.DeepEqual(got, kvs) {
			t.Fatalf("server reads %q, sent %q", got, kvs)
		}
	})
}

func TestEncodeErase(t *testing.T) {
	t.Parallel()
	body, err := onegate.EncodeErase("ONEGATE_K8S_ERROR")
	if err != nil || body != "data=ONEGATE_K8S_ERROR&type=2" {
		t.Errorf("EncodeErase = %q, %v", body, err)
	}
}
