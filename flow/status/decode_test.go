package status

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeService(t *testing.T) {
	t.Parallel()
	real7, err := os.ReadFile("testdata/service7.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, doc string
		want      Service
		err       string
	}{
		{"oneflow 7 document", string(real7), Service{ID: 12, Name: "kubernetes", State: 1, Roles: []Role{
			{Name: "worker", State: 1, Cardinality: 2, VMIDs: []int{51, 50}},
			{Name: "master", State: 2, Cardinality: 1, VMIDs: []int{49}},
		}}, ""},
		{"numbers as strings", `{"DOCUMENT":{"ID":"3","NAME":"k","TEMPLATE":{"BODY":{"state":"2","roles":[{"name":"m","state":"2","cardinality":"1","nodes":[{"deploy_id":"7","vm_info":{"VM":{"ID":"7"}}}]}]}}}}`,
			Service{ID: 3, Name: "k", State: 2, Roles: []Role{{Name: "m", State: 2, Cardinality: 1, VMIDs: []int{7}}}}, ""},
		{"ID as a number, name from the body", `{"DOCUMENT":{"ID":3,"TEMPLATE":{"BODY":{"name":"b","state":0,"roles":[]}}}}`,
			Service{ID: 3, Name: "b"}, ""},
		{"deploy_id without vm_info", `{"DOCUMENT":{"ID":"3","NAME":"k","TEMPLATE":{"BODY":{"state":1,"roles":[{"name":"m","nodes":[{"deploy_id":8}]}]}}}}`,
			Service{ID: 3, Name: "k", State: 1, Roles: []Role{{Name: "m", VMIDs: []int{8}}}}, ""},
		{"no roles yet", `{"DOCUMENT":{"ID":"3","NAME":"k","TEMPLATE":{"BODY":{"state":0}}}}`, Service{ID: 3, Name: "k"}, ""},
		{"not JSON", `<DOCUMENT/>`, Service{}, "decoding the OneFlow service: invalid character"},
		{"a pool", `{"DOCUMENT_POOL":{}}`, Service{}, "no DOCUMENT.TEMPLATE.BODY"},
		{"no ID", `{"DOCUMENT":{"NAME":"k","TEMPLATE":{"BODY":{}}}}`, Service{}, "no DOCUMENT.ID"},
		{"bad ID", `{"DOCUMENT":{"ID":"x","TEMPLATE":{"BODY":{}}}}`, Service{}, `"x" is not an integer`},
		{"bad state", `{"DOCUMENT":{"ID":"1","TEMPLATE":{"BODY":{"state":1.5}}}}`, Service{}, "1.5 is not an integer"},
		{"node without ID", `{"DOCUMENT":{"ID":"1","TEMPLATE":{"BODY":{"roles":[{"name":"m","nodes":[{}]}]}}}}`, Service{}, "role m node 0 has no VM ID"},
		{"role without name", `{"DOCUMENT":{"ID":"1","TEMPLATE":{"BODY":{"roles":[{}]}}}}`, Service{}, "roles[0] has no name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeService([]byte(tc.doc))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if _, err := DecodeService([]byte(`{"DOCUMENT":{}}`)); !errors.Is(err, ErrNotService) {
		t.Errorf("not a service: %v", err)
	}
}

// FuzzDecodeService: the document comes from a server; any bytes must give a
// service or an error, never a panic, and a decoded service must summarize
// and render.
func FuzzDecodeService(f *testing.F) {
	if b, err := os.ReadFile("testdata/service7.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"DOCUMENT":{"ID":"3","NAME":"k","TEMPLATE":{"BODY":{"state":"2","roles":[{"name":"m","state":"2","cardinality":"1","nodes":[{"deploy_id":"7","vm_info":{"VM":{"ID":"7"}}}]}]}}}}`))
	f.Add([]byte(`{"DOCUMENT":{"ID":3,"TEMPLATE":{"BODY":{"roles":[{"name":"m","nodes":[{"deploy_id":-1},{"deploy_id":null}]}]}}}}`))
	f.Add([]byte(`{"DOCUMENT":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeService(b)
		if err != nil {
			return
		}
		r := Summarize(s, nil)
		var sb strings.Builder
		if err := WriteTable(&sb, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&sb, r); err != nil {
			t.Fatal(err)
		}
		if r.Outcome == Ready {
			t.Fatalf("ready without any VM read: %+v", r)
		}
	})
}
