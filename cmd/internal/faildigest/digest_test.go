package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestDigest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		want  []failure
		extra []string
	}{
		{
			name: "verbose, a dump after the message, a parallel neighbour",
			in: `=== RUN   TestA
    a_test.go:10: booting
=== RUN   TestB
=== PAUSE TestB
=== NAME  TestA
    a_test.go:20: the new worker 102: exit 1
    main_test.go:66: logs of every process of the bed:
        1795916102.815951065 systemctl is-active systemd-resolved
        1795916102.832056905 systemctl status kubelet
--- FAIL: TestA (159.54s)
=== CONT  TestB
    b_test.go:5: fine
--- PASS: TestB (1.00s)
FAIL
`,
			want: []failure{{name: "TestA", lines: []string{"a_test.go:10: booting", "a_test.go:20: the new worker 102: exit 1", "main_test.go:66: logs of every process of the bed:"}}},
		},
		{
			name: "not verbose, many packages, a subtest",
			in: `ok  	example.com/a	1.0s
--- FAIL: TestWorkerCrashDuringJoin (35.59s)
    stalenode_test.go:40: kubeadm calls "reset join" (a refused join: false)
--- FAIL: TestT (0.00s)
    --- FAIL: TestT/case (0.00s)
        t_test.go:9: got 1
FAIL
FAIL	example.com/b	40.2s
ok  	example.com/c	1.0s
`,
			want: []failure{
				{name: "TestWorkerCrashDuringJoin", lines: []string{`stalenode_test.go:40: kubeadm calls "reset join" (a refused join: false)`}},
				{name: "TestT"},
				{name: "TestT/case", lines: []string{"t_test.go:9: got 1"}},
			},
		},
		{
			name:  "a timeout panic",
			in:    "=== RUN   TestSlow\npanic: test timed out after 45m0s\n\trunning tests:\n\t\tTestSlow (45m0s)\nFAIL\texample.com/e\t2700.1s\n",
			want:  []failure{},
			extra: []string{"panic: test timed out after 45m0s"},
		},
		{name: "all green", in: "ok  \texample.com/a\t1.0s\n", want: []failure{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, extra, err := digest(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("failures\n got %#v\nwant %#v", got, tc.want)
			}
			if !reflect.DeepEqual(extra, tc.extra) {
				t.Errorf("extra %q, want %q", extra, tc.extra)
			}
		})
	}
}

func TestWriteIsSilentWhenGreen(t *testing.T) {
	var b bytes.Buffer
	write(&b, "x", nil, nil)
	if b.Len() != 0 {
		t.Errorf("wrote %q", b.String())
	}
}

// FuzzDigest: CI output is outside input; the digest must not panic on it.
func FuzzDigest(f *testing.F) {
	f.Add("--- FAIL: TestA (1s)\n    a_test.go:1: x\n")
	f.Add("=== RUN   TestA\n=== NAME  \n--- FAIL: \n")
	f.Fuzz(func(t *testing.T, in string) {
		fails, _, _ := digest(strings.NewReader(in))
		var b bytes.Buffer
		write(&b, "f", fails, nil)
	})
}
