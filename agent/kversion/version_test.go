package kversion

import "testing"

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Version
		ok   bool
	}{
		{"v1.37.2", Version{1, 37, 2}, true},
		{"v1.36.0", Version{1, 36, 0}, true},
		{"v0.0.0", Version{}, true},
		{"1.37.2", Version{}, false},
		{"v1.37", Version{}, false},
		{"v1.37.2.1", Version{}, false},
		{"v1.037.2", Version{}, false},
		{"v1.37.2-rc.0", Version{}, false},
		{"v1.37.2+build", Version{}, false},
		{"v1..2", Version{}, false},
		{"v1.-1.2", Version{}, false},
		{"v1.99999.0", Version{}, false},
		{"V1.37.2", Version{}, false},
		{"v1.37.2 ", Version{}, false},
		{"", Version{}, false},
	} {
		got, err := ParseVersion(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseKubeletVersion(t *testing.T) {
	for in, want := range map[string]string{"v1.36.3": "v1.36.3", "v1.36.3+k3s1": "v1.36.3", "v1.37.0-rc.1": "v1.37.0"} {
		got, err := ParseKubeletVersion(in)
		if err != nil || got.String() != want {
			t.Errorf("ParseKubeletVersion(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
}

func TestVersionCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"v1.36.3", "v1.37.2", -1}, {"v1.37.2", "v1.37.2", 0}, {"v1.37.10", "v1.37.9", 1}, {"v2.0.0", "v1.99.0", 1},
	} {
		a, _ := ParseVersion(tc.a)
		b, _ := ParseVersion(tc.b)
		if got := a.Compare(b); got != tc.want {
			t.Errorf("%s vs %s = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"v1.37.2", "v1.36.3", "1.2.3", "v01.2.3", "v1.2", "v9999.9999.9999", "v1.2.3-rc", "v\x00.1.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		// What parses prints back to exactly its input: one spelling per version.
		if v.String() != s {
			t.Fatalf("ParseVersion(%q) = %v, prints %q", s, v, v.String())
		}
		if v.Major > maxVersionPart || v.Minor > maxVersionPart || v.Patch > maxVersionPart || v.Major < 0 || v.Minor < 0 || v.Patch < 0 {
			t.Fatalf("out of range: %v", v)
		}
	})
}
