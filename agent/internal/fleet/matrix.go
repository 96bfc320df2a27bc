package fleet

import "fmt"

// Matrix is the runs of `make bench-report`: N = 10, 100, 500 workers in
// both modes; short (CI) is N = 10 and 50.
func Matrix(short bool) []Config {
	sizes := []int{10, 100, 500}
	if short {
		sizes = []int{10, 50}
	}
	var out []Config
	for _, n := range sizes {
		for _, mode := range []string{None, Straight} {
			out = append(out, Config{Workers: n, Deployment: mode})
		}
	}
	return out
}

// String names a run: "N=100 straight".
func (c Config) String() string { return fmt.Sprintf("N=%d %s", c.Workers, c.Deployment) }
