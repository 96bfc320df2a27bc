package serve

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/onekube/onekube/agent/credential"
	"github.com/onekube/onekube/agent/kubeadm"
	"github.com/onekube/onekube/agent/safetext"
	"github.com/onekube/onekube/agent/system"
	vmcontext "github.com/onekube/onekube/context"
	"github.com/onekube/onekube/context/onegate"
)

// JoinFacts returns what this master alone knows of the join data a
// worker's readyMaster (and a joining master) reads from its
// USER_TEMPLATE: its address and port, the CA pin and the endpoint. Any
// sibling may rewrite them there under the default onegate-server.conf
// (update_by_id), and bootstrap published them only once, so the publish
// loop puts them back (Publish.Facts). Never a token: those keys are the
// loop's own business.
type JoinFacts func() ([]onegate.KV, error)

// joinFactKeys are the keys JoinFacts may return, in the order they are
// published.
var joinFactKeys = []string{vmcontext.KeyPubMaster, vmcontext.KeyPubPort, vmcontext.KeyPubHash, vmcontext.KeyPubEndpoint}

// OwnJoinFacts is the truth on this disk: the address, port and endpoint
// bootstrap published from its own configuration and NICs (the state
// file's record, published), and the hash of the CA kubeadm wrote,
// computed afresh on each call. A key bootstrap did not publish is left
// alone.
func OwnJoinFacts(root system.Root, published map[string]string) JoinFacts {
	return func() ([]onegate.KV, error) {
		var kvs []onegate.KV
		for _, k := range joinFactKeys {
			if k == vmcontext.KeyPubHash {
				ca, err := root.ReadFile(credential.CACertPath)
				if err != nil {
					return nil, fmt.Errorf("reading the cluster CA: %w", err)
				}
				h, err := kubeadm.CACertHash(ca)
				if err != nil {
					return nil, fmt.Errorf("hashing %s: %w", credential.CACertPath, err)
				}
				kvs = append(kvs, onegate.KV{Key: k, Value: h})
				continue
			}
			if v := strings.TrimSpace(published[k]); v != "" {
				kvs = append(kvs, onegate.KV{Key: k, Value: v})
			}
		}
		return kvs, nil
	}
}

// drifted returns the facts that ut does not show, by meaning: a hash
// with or without "sha256:", an address or port spelt otherwise, is the
// same fact and costs no write. Keys other than joinFactKeys are ignored.
func drifted(ut map[string]string, facts []onegate.KV) []onegate.KV {
	var out []onegate.KV
	for _, f := range facts {
		if !slices.Contains(joinFactKeys, f.Key) {
			continue
		}
		shown, ok := ut[f.Key]
		if !ok || !sameFact(f.Key, shown, f.Value) {
			out = append(out, f)
		}
	}
	return out
}

func sameFact(key, shown, want string) bool {
	shown, want = strings.TrimSpace(shown), strings.TrimSpace(want)
	switch key {
	case vmcontext.KeyPubHash:
		a, err1 := kubeadm.ParseHash(shown)
		b, err2 := kubeadm.ParseHash(want)
		return err1 == nil && err2 == nil && a == b
	case vmcontext.KeyPubMaster:
		a, err1 := netip.ParseAddr(shown)
		b, err2 := netip.ParseAddr(want)
		return err1 == nil && err2 == nil && a.Unmap() == b.Unmap()
	case vmcontext.KeyPubPort:
		a, err1 := strconv.Atoi(shown)
		b, err2 := strconv.Atoi(want)
		return err1 == nil && err2 == nil && a == b
	}
	return shown == want
}

// driftNote describes what OneGate showed in place of the facts, for the
// warning: these keys hold no secret, but a sibling wrote them, so each
// value is escaped and bounded.
func driftNote(ut map[string]string, fix []onegate.KV) string {
	parts := make([]string, len(fix))
	for i, f := range fix {
		shown, ok := ut[f.Key]
		if !ok {
			parts[i] = f.Key + " erased"
			continue
		}
		parts[i] = f.Key + "=" + safetext.Quote(shown, 80)
	}
	return strings.Join(parts, ", ")
}
