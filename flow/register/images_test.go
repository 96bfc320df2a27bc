package register

import (
	"context"
	"net/http/httptest"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegatesim"
)

// Facts reads an image's name, state and asked-for attributes from oned
// (one.image.info), as onekube-flow upgrade's preflight needs them.
func TestImageFactsState(t *testing.T) {
	t.Parallel()
	sim := onegatesim.New(onegatesim.Options{})
	srv := httptest.NewServer(sim.OnedHandler("oneadmin", "pw"))
	defer srv.Close()
	ready := sim.CreateImage(onegatesim.Image{Name: "bundle", Template: map[string]string{"ONEKUBE_BUNDLE_VERSION": " v1.37.2 "}})
	disabled := sim.CreateImage(onegatesim.Image{Name: "off", State: "DISABLED"})
	locked := sim.CreateImage(onegatesim.Image{Name: "copying", State: "LOCKED"})
	imgs := NewOnedImages(srv.URL, "oneadmin", vmcontext.NewSecret("pw"), srv.Client())
	for id, want := range map[int]string{ready: "READY", disabled: "DISABLED", locked: "LOCKED"} {
		f, err := imgs.Facts(context.Background(), id, "ONEKUBE_BUNDLE_VERSION", "ABSENT")
		if err != nil {
			t.Fatalf("image %d: %v", id, err)
		}
		if f.State != want {
			t.Errorf("image %d (%s): state %q, want %q", id, f.Name, f.State, want)
		}
		if id == ready && (f.Attrs["ONEKUBE_BUNDLE_VERSION"] != "v1.37.2" || f.Attrs["ABSENT"] != "" || f.Persistent) {
			t.Errorf("image %d: %+v", id, f)
		}
	}
	if _, err := imgs.Facts(context.Background(), 99, "X"); err == nil {
		t.Error("a missing image read without error")
	}
}
