package onegatesim

import (
	"encoding/json"
	"testing"
)

func TestAppendJSON(t *testing.T) {
	t.Parallel()
	v := obj{{"s", "a<b>&\"c\\\n\x01é\xff"}, {"n", 3}, {"z", nil}, {"b", true}, {"a", []any{obj{}, "x"}}, {"m", map[string]int{"k": 1}}}
	got, err := marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"s":"a<b>&\"c\\\n\u0001é\ufffd","n":3,"z":null,"b":true,"a":[{},"x"],"m":{"k":1}}`
	if string(got) != want {
		t.Errorf("marshal = %s\nwant     %s", got, want)
	}
	if !json.Valid(got) {
		t.Error("invalid JSON")
	}
}
