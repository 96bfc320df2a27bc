package protocol

import (
	"os"
	"regexp"
	"strings"
	"testing"

	vmcontext "github.com/onekube/onekube/context"
)

// docsTable reads the rows between docs/trust.md's markers.
func docsTable(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/trust.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	_, after, ok := strings.Cut(s, "<!-- trust-table:begin -->")
	block, _, ok2 := strings.Cut(after, "<!-- trust-table:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/trust.md lost its trust-table markers")
	}
	var rows [][]string
	for i, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if i < 2 { // header and separator
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return rows
}

func TestTrustTableMatchesDocs(t *testing.T) {
	rows := docsTable(t)
	if len(rows) != len(Keys) {
		t.Fatalf("docs/trust.md has %d rows, protocol.Keys %d", len(rows), len(Keys))
	}
	for i, r := range rows {
		k := Keys[i]
		want := []string{k.Name, k.Writer, k.Readers, string(k.Trust), k.ForgerGet, string(k.Status)}
		if strings.Join(r, "|") != strings.Join(want, "|") {
			t.Errorf("row %d:\n docs: %q\n code: %q", i+1, r, want)
		}
	}
}

// Every key onekube publishes or reads through USER_TEMPLATE has a row:
// a new key cannot slip in without someone saying who can forge it.
func TestTrustTableCoversEveryKey(t *testing.T) {
	var names strings.Builder
	for _, k := range Keys {
		names.WriteString(k.Name + " ")
	}
	all := names.String()
	published := []string{
		vmcontext.KeyRoleName, vmcontext.KeyServiceID, vmcontext.KeyMasterVMID, vmcontext.KeyKubeconfigUsers,
		vmcontext.KeyPubMaster, vmcontext.KeyPubPort, vmcontext.KeyPubToken, vmcontext.KeyPubHash,
		vmcontext.KeyPubTokenExpires, vmcontext.KeyPubETA, vmcontext.KeyPubPhase, vmcontext.KeyPubError,
		vmcontext.KeyReady, vmcontext.KeyPubNodeName, vmcontext.KeyPubKind, vmcontext.KeyPubEndpoint,
		vmcontext.KeyPubRecipient, vmcontext.KeyPubCertKey, vmcontext.KeyPubServe, vmcontext.KeyPubServeError,
		vmcontext.KeyPubWaiting, vmcontext.KeyPubNodesWithoutVM, vmcontext.KeyPubEtcd, vmcontext.KeyPubEtcdError,
		vmcontext.KeyPubKubeconfigRequest, vmcontext.KeyPubKubeconfigAnswer, vmcontext.KeyPubExposure,
		vmcontext.KeyPubCerts, vmcontext.KeyPubCertsError,
	}
	// Every ONEGATE_K8S_* key context/keys.go declares is published
	// through USER_TEMPLATE, so each needs a row, listed above or not.
	src, err := os.ReadFile("../keys.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`= "(ONEGATE_K8S_[A-Z0-9_]+)"`).FindAllStringSubmatch(string(src), -1) {
		published = append(published, m[1])
	}
	for _, k := range published {
		// A row may name a key in full or as ONEGATE_K8S_SERVE's `_SUFFIX`.
		short := k
		if strings.HasPrefix(k, "ONEGATE_K8S_") {
			short = "_" + strings.TrimPrefix(k, "ONEGATE_K8S_")
		}
		if !regexp.MustCompile("`"+regexp.QuoteMeta(k)+"[*]?`").MatchString(all) &&
			!strings.Contains(all, "`"+short+"`") {
			t.Errorf("%s has no row in docs/trust.md", k)
		}
	}
}

func TestClaimNeverPrints(t *testing.T) {
	c := ClaimOf("abcdef.0123456789abcdef")
	if got := c.String(); strings.Contains(got, "abcdef") {
		t.Errorf("Claim printed its value: %q", got)
	}
	if c.Unverified() != "abcdef.0123456789abcdef" || c.Empty() || !ClaimOf(" \t").Empty() {
		t.Error("Claim lost its value")
	}
}
