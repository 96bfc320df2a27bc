// Command benchreport runs the fleet benchmarks of issue 14 (`make
// bench-report`): 1 master + N workers in-process on a virtual clock, with
// production tunables, and prints one markdown table. With -readme it
// rewrites that table into docs/measured.md's bench-report block instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/onekube/onekube/agent/internal/fleet"
)

func main() {
	short := flag.Bool("short", false, "N = 10 and 50 only (as CI runs it)")
	readme := flag.String("readme", "", "rewrite the bench-report block of this Markdown file (docs/measured.md) instead of printing")
	g := flag.Duration("g", fleet.DefaultModel().G, "G, OneFlow noticing the master's READY (its update event; 30s is the poll fallback)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "benchreport: no arguments expected")
		os.Exit(2)
	}
	if err := run(os.Stdout, os.Stderr, *short, *readme, *g); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(out, progress io.Writer, short bool, readme string, g time.Duration) error {
	start := time.Now()
	var results []*fleet.Result
	for _, cfg := range fleet.Matrix(short) {
		cfg.Model = fleet.DefaultModel()
		cfg.Model.G = g
		res, err := fleet.Run(context.Background(), cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", cfg, err)
		}
		fmt.Fprintf(progress, "%s: ready in %.1f s (virtual), %s real\n", cfg, res.TimeToReady.Seconds(), res.Real.Round(time.Millisecond))
		results = append(results, res)
	}
	report := render(results, machine(), time.Since(start))
	if readme == "" {
		_, err := io.WriteString(out, report)
		return err
	}
	return rewriteReadme(readme, report)
}
