package main

import (
	"maps"
	"testing"
)

func TestLoadFlags(t *testing.T) {
	cases := map[string]struct {
		kubeadm, extra string
		want           kubeletFlags
		err            bool
	}{
		"kubeadm 1.36 init": {
			kubeadm: `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --node-ip=192.0.2.2 --pod-infra-container-image=registry.k8s.io/pause:3.10.2"` + "\n",
			want:    kubeletFlags{"container-runtime-endpoint": "unix:///var/run/containerd/containerd.sock", "node-ip": "192.0.2.2", "pod-infra-container-image": "registry.k8s.io/pause:3.10.2"},
		},
		"hostname override and extra args win": {
			kubeadm: `KUBELET_KUBEADM_ARGS="--hostname-override=worker-7 --node-ip=192.0.2.3"`,
			extra:   "# from the image\nKUBELET_EXTRA_ARGS=--node-ip 192.0.2.9 --v=2\n",
			want:    kubeletFlags{"hostname-override": "worker-7", "node-ip": "192.0.2.9", "v": "2"},
		},
		"empty":          {kubeadm: `KUBELET_KUBEADM_ARGS=""`, want: kubeletFlags{}},
		"bare flag":      {kubeadm: `KUBELET_KUBEADM_ARGS="--fail-swap-on"`, want: kubeletFlags{"fail-swap-on": "true"}},
		"not KEY=value":  {kubeadm: "KUBELET_KUBEADM_ARGS\n", err: true},
		"unbalanced":     {kubeadm: `KUBELET_KUBEADM_ARGS="--node-ip=1`, err: true},
		"stray argument": {kubeadm: `KUBELET_KUBEADM_ARGS="node-ip"`, err: true},
		"quoted key":     {kubeadm: `"K"=v`, err: true},
		"single quotes":  {kubeadm: `KUBELET_KUBEADM_ARGS='--node-ip=192.0.2.4'`, want: kubeletFlags{"node-ip": "192.0.2.4"}},
	}
	for name, c := range cases {
		var extra []byte
		if c.extra != "" {
			extra = []byte(c.extra)
		}
		got, err := loadFlags([]byte(c.kubeadm), extra)
		if (err != nil) != c.err {
			t.Errorf("%s: error %v, want error %v", name, err, c.err)
			continue
		}
		if !c.err && !maps.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", name, got, c.want)
		}
	}
}

func FuzzLoadFlags(f *testing.F) {
	f.Add([]byte(`KUBELET_KUBEADM_ARGS="--node-ip=192.0.2.2 --hostname-override=a"`), []byte("KUBELET_EXTRA_ARGS=--v 2\n"))
	f.Add([]byte("# c\n\nX='y'\n"), []byte(nil))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		got, err := loadFlags(a, b)
		if err == nil && got == nil {
			t.Fatal("nil flags without an error")
		}
	})
}

func TestParseNodeLabels(t *testing.T) {
	t.Parallel()
	got, err := parseNodeLabels("onekube.io/vm-id=42,example.com/zone=a")
	if err != nil || len(got) != 2 || got["onekube.io/vm-id"] != "42" || got["example.com/zone"] != "a" {
		t.Fatalf("parseNodeLabels = %v, %v", got, err)
	}
	if got, err := parseNodeLabels(""); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"novalue", "=x", "a=b,,c=d"} {
		if _, err := parseNodeLabels(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
