package context_test

import (
	"os"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("testdata/context.sh")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := vmcontext.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
