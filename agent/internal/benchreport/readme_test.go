package main

import (
	"strings"
	"testing"
)

func TestReplaceBlock(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		doc, want, err string
	}{
		"replaces only the block": {
			doc:  "# Measured\n\nbefore\n" + beginMarker + "\nold | table\n" + endMarker + "\nafter\n",
			want: "# Measured\n\nbefore\n" + beginMarker + "\n| new |\n" + endMarker + "\nafter\n",
		},
		"empty block": {
			doc:  beginMarker + endMarker,
			want: beginMarker + "\n| new |\n" + endMarker,
		},
		"no markers":  {doc: "# Measured\n", err: "no "},
		"swapped":     {doc: endMarker + beginMarker, err: "comes before"},
		"two blocks":  {doc: beginMarker + endMarker + beginMarker + endMarker, err: "more than one"},
		"missing end": {doc: beginMarker, err: "no "},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := replaceBlock([]byte(tc.doc), "| new |\n")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("got %q, %v\nwant %q", got, err, tc.want)
			}
		})
	}
}
