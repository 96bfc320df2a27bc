package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeDoc(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", maxDocDepth+1) + strings.Repeat("]", maxDocDepth+1)
	cases := []struct {
		name, doc string
		err       string // "" for success: "<path>: <message>"
	}{
		{"object", `{"a":[1,"x",true,null,{"b":2.5}]}`, ""},
		{"empty", ``, "$: empty document"},
		{"blank", " \n\t", "$: empty document"},
		{"truncated", `{"a":[1,`, "$: not JSON: unexpected end of the document"},
		{"syntax", `{"a" 1}`, "$: not JSON: invalid character '1' after object key"},
		{"trailing", `{} {}`, "$: not JSON: data after the top-level value"},
		{"duplicate top", `{"name":"a","roles":[],"name":"b"}`, `$.name: duplicate key "name": OneFlow keeps only the last one`},
		{"duplicate nested", `{"roles":[{"name":"m"},{"name":"w","cardinality":1,"cardinality":3}]}`, `$.roles[1].cardinality: duplicate key "cardinality"`},
		{"duplicate escaped", `{"a":1,"\u0061":2}`, `$.a: duplicate key "a"`},
		{"odd key", `{"a.b\n":1,"a.b\n":2}`, `$["a.b\n"]: duplicate key "a.b\n"`},
		{"case differs", `{"a":1,"A":2}`, ""},
		{"same key in siblings", `{"x":{"a":1},"y":{"a":1}}`, ""},
		{"deepest allowed", strings.Repeat("[", maxDocDepth) + strings.Repeat("]", maxDocDepth), ""},
		{"too deep", deep, "nested deeper than 64 levels"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := decodeDoc([]byte(tc.doc))
			if tc.err == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				var want any
				dec := json.NewDecoder(strings.NewReader(tc.doc))
				dec.UseNumber()
				if err := dec.Decode(&want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(n.v, want) {
					t.Errorf("got %#v, want %#v", n.v, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestValidateDuplicateKey(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(ok7, `"cardinality":2,`, `"cardinality":2,"cardinality":9,`, 1)
	ps := Validate([]byte(doc), ValidateOptions{})
	if len(ps) != 1 || ps[0].String() != `error $.roles[1].cardinality: duplicate key "cardinality": OneFlow keeps only the last one` {
		t.Errorf("got %v", ps)
	}
}

// FuzzDecodeDoc: whatever decodeDoc accepts, encoding/json reads the same
// way; whatever encoding/json accepts and decodeDoc refuses has a
// duplicate key or is too deep.
func FuzzDecodeDoc(f *testing.F) {
	for _, s := range []string{ok7, ok6, `{"a":1,"a":2}`, `[[[]]]`, `{"a":{"b":[{"c":null}]}}`, `"x"`, `1e400`, `{"\u0000":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		n, err := decodeDoc(doc)
		var want any
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		stdErr := dec.Decode(&want)
		if stdErr == nil {
			if _, e := dec.Token(); !errors.Is(e, io.EOF) {
				stdErr = errTrailing // data after the value: both must refuse
			}
		}
		switch {
		case err == nil && stdErr != nil:
			t.Fatalf("accepted what encoding/json refuses (%v)", stdErr)
		case err == nil && !reflect.DeepEqual(n.v, want):
			t.Fatalf("read %#v, encoding/json %#v", n.v, want)
		case err != nil && stdErr == nil:
			if m := err.Error(); !strings.Contains(m, "duplicate key") && !strings.Contains(m, "nested deeper") {
				t.Fatalf("refused valid JSON: %v", err)
			}
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\r") {
			t.Fatalf("multi-line error %q", err)
		}
	})
}

var errTrailing = &docError{"$", "trailing"}
