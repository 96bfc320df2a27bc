package context_test

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"sort"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("testdata/context.sh"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"", "A='1'", "A='it'\\''s'\n", "A='x\ny'\nB=''\n", "export A=\"q\\\"\" B=c\\ d;C=1 # x\n",
		"A=$(id)", "A='", "A=\"", "A=~", "1=2", "export\n", ";", "A=x\\\ny",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := vmcontext.Parse(data)
		if err != nil {
			var pe *vmcontext.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; pe.Line < 1 || pe.Line > lines {
				t.Fatalf("error line %d outside 1..%d", pe.Line, lines)
			}
			return
		}
		// Whatever parses must survive a round trip through OpenNebula's own
		// format: that is the form the agent's tests and flow's docs use.
		again, err := vmcontext.Parse(writeOpenNebula(v))
		if err != nil {
			t.Fatalf("re-parse of rendered vars: %v", err)
		}
		if !reflect.DeepEqual(again, v) {
			t.Fatalf("round trip: %q != %q", again, v)
		}
	})
}

func FuzzParseOneEnv(f *testing.F) {
	for _, s := range []string{
		"", "export TOKENTXT=\"abc==\"\nexport VMID=\"1\"\n", "export A=\"x\"y\"\n", "export A=\"1\n2\"",
		"export A='1'", "A=1", "# c\n\nexport A=\"\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := vmcontext.ParseOneEnv(data)
		if err != nil {
			var pe *vmcontext.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; pe.Line < 1 || pe.Line > lines {
				t.Fatalf("error line %d outside 1..%d", pe.Line, lines)
			}
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b bytes.Buffer
		for _, k := range keys {
			b.WriteString("export " + k + "=\"" + v[k] + "\"\n")
		}
		again, err := vmcontext.ParseOneEnv(b.Bytes())
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if !reflect.DeepEqual(again, v) {
			t.Fatalf("round trip: %q != %q", again, v)
		}
	})
}
