package flow

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestComponents(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		edges  [][]int
		cyclic []int // nodes on a cycle
	}{
		{"empty", nil, nil},
		{"chain", [][]int{nil, {0}, {1}}, nil},
		{"self", [][]int{{0}, {0}}, []int{0}},
		{"two", [][]int{{1}, {0}, {0}}, []int{0, 1}},
		{"tangle and tail", [][]int{{1}, {2, 0}, {0}, {2}, {3, 3}}, []int{0, 1, 2}},
		{"two cycles", [][]int{{1}, {0}, {3}, {2}, {0, 2}}, []int{0, 1, 2, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			comp, cyclic := components(tc.edges)
			var got []int
			for i := range tc.edges {
				if cyclic[comp[i]] {
					got = append(got, i)
				}
			}
			if !slices.Equal(got, tc.cyclic) {
				t.Errorf("on a cycle: %v, want %v", got, tc.cyclic)
			}
			for _, i := range tc.cyclic {
				cyc := cycleThrough(tc.edges, comp, i)
				if len(cyc) < 2 || cyc[0] != i || cyc[len(cyc)-1] != i {
					t.Fatalf("cycle through %d: %v", i, cyc)
				}
				for k := 1; k < len(cyc); k++ {
					if !slices.Contains(tc.edges[cyc[k-1]], cyc[k]) {
						t.Errorf("cycle %v: no edge %d -> %d", cyc, cyc[k-1], cyc[k])
					}
				}
			}
		})
	}
}

func TestFormatCycle(t *testing.T) {
	t.Parallel()
	short := []string{"a", "b", "c", "a"}
	for k, want := range []string{"a -> b -> c -> a", "b -> c -> a -> b", "c -> a -> b -> c"} {
		if got := formatCycle(short, k); got != want {
			t.Errorf("k=%d: %q, want %q", k, got, want)
		}
	}
	long := make([]string, 101)
	for i := range 100 {
		long[i] = fmt.Sprint("r", i)
	}
	long[100] = "r0"
	if got, want := formatCycle(long, 10), "r10 -> r11 -> r12 -> r13 -> … 95 more … -> r9 -> r10"; got != want {
		t.Errorf("long: %q, want %q", got, want)
	}
}

// TestValidateLongGraphs: a 20 000-role chain with a missing root parent,
// and a 20 000-role ring, give one error per role, each one line, quickly
// (the benchmark times it).
func TestValidateLongGraphs(t *testing.T) {
	t.Parallel()
	const n = 20000
	chain := strings.Replace(string(chainDoc(n)), `{"name":"master","type":"vm"`, `{"name":"master","parents":["ghost"],"type":"vm"`, 1)
	ring := strings.Replace(string(chainDoc(n)), `{"name":"master","type":"vm"`, fmt.Sprintf(`{"name":"master","parents":["r%d"],"type":"vm"`, n-1), 1)
	for name, doc := range map[string]string{"chain": chain, "ring": ring} {
		t.Run(name, func(t *testing.T) {
			ps := Validate([]byte(doc), ValidateOptions{})
			graph := 0
			for _, p := range ps {
				if strings.Contains(p.Message, "never deploys") || strings.Contains(p.Message, "ever deploys") {
					graph++
				}
				if len(p.Message) > 300 {
					t.Fatalf("long message: %.300s…", p.Message)
				}
			}
			if graph != n {
				t.Errorf("%d roles reported as never deploying, want %d", graph, n)
			}
		})
	}
}

// TestValidateTangle: a role of a tangle that the reported cycle misses
// points at that cycle.
func TestValidateTangle(t *testing.T) {
	t.Parallel()
	doc := `{"name":"k","deployment":"straight","roles":[
 {"name":"master","type":"vm","template_id":1,"cardinality":1,"parents":["b"]},
 {"name":"b","type":"vm","template_id":1,"parents":["master","c"]},
 {"name":"c","type":"vm","template_id":1,"parents":["b"]}]}`
	var got []string
	for _, p := range Validate([]byte(doc), ValidateOptions{}) {
		got = append(got, p.String())
	}
	want := []string{
		"error $.roles[0].parents: parents form a cycle (master -> b -> master): none of these roles ever deploys",
		"error $.roles[1].parents: parents form a cycle (b -> master -> b): none of these roles ever deploys",
		`error $.roles[2].parents: parents lead into the cycle of role "master" (see $.roles[0]): none of these roles ever deploys`,
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
}
