package flow

import (
	"fmt"
	"strings"
	"testing"
)

// chainDoc is a 7.x service of n roles where role i waits for role i-1,
// listed last role first: the worst order for a fixpoint over the roles.
func chainDoc(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name":"chain","deployment":"straight","ready_status_gate":true,"roles":[`)
	for i := n - 1; i >= 0; i-- {
		name := fmt.Sprintf("r%d", i)
		if i == 0 {
			name = RoleMaster
		}
		fmt.Fprintf(&b, `{"name":%q,"type":"vm","template_id":1,"cardinality":1`, name)
		if i > 0 {
			parent := fmt.Sprintf("r%d", i-1)
			if i == 1 {
				parent = RoleMaster
			}
			fmt.Fprintf(&b, `,"parents":[%q]`, parent)
		}
		b.WriteString("}")
		if i > 0 {
			b.WriteString(",")
		}
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// BenchmarkValidateChain validates services of chained roles.
func BenchmarkValidateChain(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		doc := chainDoc(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ps := Validate(doc, ValidateOptions{}); HasErrors(ps) {
					b.Fatal(ps[0])
				}
			}
		})
	}
}
