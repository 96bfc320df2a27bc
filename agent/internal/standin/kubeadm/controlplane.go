package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	cryptoutil "k8s.io/kubernetes/cmd/kubeadm/app/util/crypto"

	"github.com/onekube/onekube/agent/internal/standin/env"
)

// What kubeadm enforces when a control plane joins, in its words:
//   - the cluster was initialised with a controlPlaneEndpoint (join
//     preflight, cmd/kubeadm/app/cmd/phases/join/preflight.go);
//   - the kubeadm-certs Secret exists (2 h after an upload it is gone) and
//     the certificate key decrypts it (phases/copycerts DownloadCerts, with
//     kubeadm's own AES-GCM, util/crypto);
//   - etcd takes a new member (util/etcd addMember). A member with the
//     same peer URL is "skipped" by kubeadm, and the new etcd, with an
//     empty data directory under that member's ID, panics in raft ("Was
//     the raft log corrupted, truncated, or lost?"), so the join times out
//     waiting for the cluster: the stale member must be removed first.
const (
	noStableEndpoint = "One or more conditions for hosting a new control plane instance is not satisfied.\n\n" +
		"unable to add a new control plane instance to a cluster that doesn't have a stable controlPlaneEndpoint address\n\n" +
		"Please ensure that:\n* The cluster has a stable controlPlaneEndpoint address."
	certsGone = "error downloading certs: error downloading the secret: Secret \"kubeadm-certs\" was not found in the \"kube-system\" Namespace. " +
		"This Secret might have expired. Please, run `kubeadm init phase upload-certs --upload-certs` on a control plane to generate a new one"
	staleMember = "error creating local etcd static pod manifest file: timeout waiting for etcd cluster to be available " +
		"(the member with peer URL %s already existed, so its new etcd started on an empty data directory and panicked: " +
		"tocommit is out of range. Was the raft log corrupted, truncated, or lost?)"
)

// uploadCerts stores the CA, sealed with key, as the kubeadm-certs Secret.
func uploadCerts(root string, api *env.APIServer, key string, now time.Time) error {
	k, err := hex.DecodeString(key)
	if err != nil || len(k) != 32 {
		return errors.New("error decoding certificate key: the key must be 64 hex digits")
	}
	caKey, err := os.ReadFile(env.Path(root, caKeyFile))
	if err != nil {
		return fmt.Errorf("error reading %s: %w", caKeyFile, err)
	}
	caCert, err := os.ReadFile(env.Path(root, caCertFile))
	if err != nil {
		return err
	}
	sealed, err := cryptoutil.EncryptBytes(caKey, k)
	if err != nil {
		return err
	}
	return api.SetCerts(env.Certs{Uploaded: now, SealedCA: sealed, CACert: caCert})
}

// runUploadCerts is `kubeadm init phase upload-certs --upload-certs
// --config F` on a control plane.
func runUploadCerts(args []string, e *env.Entry, out io.Writer) error {
	o, err := parseFlags("init phase upload-certs", args, "config", "upload-certs", "skip-certificate-key-print")
	if err != nil {
		return err
	}
	if o.config == "" || !o.uploadCerts {
		return errors.New("the stand-in needs --upload-certs and --config (the key goes in the config)")
	}
	root, err := env.Root()
	if err != nil {
		return err
	}
	c, err := readConfig(env.Resolve(root, o.config))
	if err != nil {
		return err
	}
	if c.init == nil || c.init.certKey == "" {
		// kubeadm would make one and print it to stdout.
		return errors.New("the stand-in wants certificateKey in the InitConfiguration: kubeadm would print a generated key")
	}
	e.Command = "upload-certs"
	if _, err := os.Stat(env.Path(root, caKeyFile)); err != nil {
		return inPhase("upload-certs", fmt.Errorf("error reading %s: not a control plane: %w", caKeyFile, err))
	}
	api := env.ServerOf(root)
	if err := uploadCerts(root, api, c.init.certKey, time.Now()); err != nil {
		return inPhase("upload-certs", err)
	}
	fmt.Fprintln(out, "[upload-certs] Storing the certificates in Secret \"kubeadm-certs\" in the \"kube-system\" Namespace")
	printKey(out, o, c.init.certKey)
	return nil
}

// printKey prints the certificate key as kubeadm's upload-certs phase does
// unless --skip-certificate-key-print
// (cmd/kubeadm/app/cmd/phases/init/uploadcerts.go), so a caller that
// forgets the flag shows in the output.
func printKey(out io.Writer, o options, key string) {
	if !o.skipKeyPrint {
		fmt.Fprintf(out, "[upload-certs] Using certificate key:\n%s\n", key)
	}
}

// joinControlPlane does the control-plane half of a join on root, against
// api: the checks above, then the certificates, kubeconfigs and static
// pods, the etcd member, and an API server on this host for the same
// store.
func joinControlPlane(root string, api *env.APIServer, j *joinView, version string, now time.Time) error {
	info, err := api.Cluster()
	if err != nil {
		return err
	}
	if info.ControlPlaneEndpoint == "" {
		return inPhase("preflight", errors.New(noStableEndpoint))
	}
	certs, err := api.Certs(now)
	if err != nil {
		return err
	}
	if certs == nil {
		return inPhase("control-plane-prepare/download-certs", errors.New(certsGone))
	}
	key, err := hex.DecodeString(j.cpCertKey)
	if err != nil {
		return inPhase("control-plane-prepare/download-certs", fmt.Errorf("error downloading certs: error decoding certificate key: %w", err))
	}
	caKey, err := cryptoutil.DecryptBytes(certs.SealedCA, key)
	if err != nil {
		return inPhase("control-plane-prepare/download-certs", fmt.Errorf("error downloading certs: error decoding secret data with provided key: %w", err))
	}
	if err := writeFile(root, caKeyFile, caKey, 0o600); err != nil {
		return err
	}
	if err := writeFile(root, caCertFile, certs.CACert, 0o644); err != nil {
		return err
	}
	port := int(j.cpBindPort)
	if port == 0 {
		port = 6443
	}
	advertise := j.cpAdvertise
	if err := env.AddMember(peerURL(advertise)); errors.Is(err, env.ErrMemberExists) {
		return inPhase("control-plane-join/etcd", fmt.Errorf(staleMember, peerURL(advertise)))
	} else if err != nil {
		return inPhase("control-plane-join/etcd", err)
	}
	admin, err := adminKubeconfig(root, info.ControlPlaneEndpoint, certs.CACert)
	if err != nil {
		return err
	}
	if err := writeFile(root, adminConfFile, admin, 0o600); err != nil {
		return err
	}
	if err := writeManifests(root, version, advertise); err != nil {
		return err
	}
	if err := api.Serve(root); err != nil {
		return err
	}
	return env.StartAPIServer(root, net.JoinHostPort(advertise, strconv.Itoa(port)))
}

// adminKubeconfig is an admin.conf for the cluster endpoint, signed by the
// CA on root.
func adminKubeconfig(root, endpoint string, caPEM []byte) ([]byte, error) {
	authority, err := loadCA(root)
	if err != nil {
		return nil, err
	}
	if authority == nil {
		return nil, errors.New("no CA on this node to sign admin.conf with")
	}
	certPEM, keyPEM, err := authority.clientCert("kubernetes-admin", "kubeadm:cluster-admins")
	if err != nil {
		return nil, err
	}
	return kubeconfig("https://"+endpoint, caPEM, "kubernetes-admin", map[string]any{"client-certificate-data": certPEM, "client-key-data": keyPEM})
}

// writeManifests writes the static pods; etcd's names its client URL, as
// kubeadm's does, where the agent's etcd client finds it.
func writeManifests(root, version, advertise string) error {
	for i, f := range manifestFiles() {
		b := staticPod(staticPods[i], version)
		if staticPods[i] == "etcd" {
			b = etcdPod(version, advertise)
		}
		if err := writeFile(root, f, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func etcdPod(version, advertise string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
spec:
  hostNetwork: true
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.6.8-0
    command:
    - etcd
    - --advertise-client-urls=%s
    - --initial-advertise-peer-urls=%s
    - --name=%s
`, env.EtcdURL(advertise), peerURL(advertise), strings.ReplaceAll(version, "+", "-")))
}

func peerURL(advertise string) string { return "https://" + net.JoinHostPort(advertise, "2380") }
