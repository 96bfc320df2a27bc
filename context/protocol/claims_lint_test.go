package protocol

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// claimRead is one reviewed read of a USER_TEMPLATE map: in File (from the
// module root), in function Func ("Type.Method", "func", or "*" for every
// function of a simulator or fake), of Keys (the key expressions as
// written; "*" is the whole map: ranged over, passed along, or an alias
// read in ways the lint cannot follow). Why says why the read is safe under
// docs/trust.md although any VM of the service can write the value.
type claimRead struct {
	File, Func string
	Keys       []string
	Why        string
}

// userTemplateReads is every read of a `.UserTemplate` outside tests that
// skips onegate.VM.Claim. A new read either goes through vm.Claim(key)
// (then Unverified() needs a comment saying why) or gets a row here with its
// reason, for review. It matches the field by name, not by type, so reads
// through oned's XML-RPC count too: that text is just as sibling-writable.
var userTemplateReads = []claimRead{
	{File: "context/onegate/claim.go", Func: "VM.Claim", Keys: []string{"key"}, Why: "the accessor: wraps the value as a protocol.Claim"},

	// onekube-agent, its own keys: a forger can only make it redo, skip
	// a write of, or stop waiting on its own bootstrap.
	{File: "agent/exposure.go", Func: "exposureKVs", Keys: []string{"vmcontext.KeyRoleName"}, Why: "written back unchanged by the probe of its own template; the role comes from roles[].nodes"},
	{File: "agent/gate/erase.go", Func: "EraseKeys", Keys: []string{"k"}, Why: "presence only: which of its own keys to erase"},
	{File: "agent/gate/erase.go", Func: "stillHas", Keys: []string{"key"}, Why: "presence only: whether a failed erase of its own key took effect"},
	{File: "agent/phase_cpjoin.go", Func: "publishControlPlane", Keys: []string{"vmcontext.KeyPubRecipient"}, Why: "presence only: whether to withdraw its own recipient"},
	{File: "agent/phase_publish.go", Func: "clearStaleError", Keys: []string{"vmcontext.KeyPubError"}, Why: "presence only: a forged error on itself is erased"},
	{File: "agent/published.go", Func: "publishedCluster", Keys: []string{"k"}, Why: "presence only, for a refusal message: a forged key can only make the agent refuse, never init or act"},
	{File: "agent/published.go", Func: "clearPublished", Keys: []string{"k"}, Why: "presence only: which of its own keys to erase"},
	{File: "agent/report.go", Func: "oneGateReporter.Failure", Keys: []string{"vmcontext.KeyPubError"}, Why: "compared with what it wrote, to pick a wire form for its own error"},
	{File: "agent/runner.go", Func: "staleFailure", Keys: []string{"vmcontext.KeyPubPhase"}, Why: "its own phase: a forged failed phase only makes it clear the stale failure and run"},
	{File: "agent/preflight.go", Func: "ownBootstrap", Keys: []string{"vmcontext.KeyPubHash", "vmcontext.KeyPubMaster", "vmcontext.KeyPubNodeName"}, Why: "its own keys, checked against this disk's CA and files and its own NICs: can only make it redo or skip its own bootstrap"},

	// onekube-agent, other masters' keys.
	{File: "agent/pace.go", Func: "publishedETA", Keys: []string{"vmcontext.KeyPubETA"}, Why: "poll pacing only, bounded (at most a minute between polls)"},
	{File: "agent/phase_cpjoin.go", Func: "waitTurn", Keys: []string{"vmcontext.KeyPubError", "vmcontext.KeyPubEndpoint"}, Why: "error: display only, quoted and bounded; endpoint: only empty or not matters (joinEndpoint), and the join is CA-pinned"},
	{File: "agent/phase_cpjoin.go", Func: "waitCertKey", Keys: []string{"vmcontext.KeyPubEtcdError", "vmcontext.KeyPubEndpoint"}, Why: "etcd error: display only, quoted and bounded; endpoint: only empty or not matters (joinEndpoint)"},
	{File: "agent/phase_lbseed.go", Func: "masterAddress", Keys: []string{"vmcontext.KeyPubMaster"}, Why: "checked against the VM's own NICs (ownsAddress) before use"},
	{File: "agent/phase_waitmaster.go", Func: "waitMaster", Keys: []string{"vmcontext.KeyPubError"}, Why: "display only, quoted and bounded (quoteReport)"},
	{File: "agent/phase_waitmaster.go", Func: "foreignAddress", Keys: []string{"vmcontext.KeyPubMaster"}, Why: "only to warn about an address that is not one of the VM's NICs; such an address is never joined"},
	{File: "agent/serve/publish.go", Func: "Publish.checkFacts", Keys: []string{"*"}, Why: "its own join data compared with the truth (state file, ca.crt) and rewritten when they differ; shown escaped in a warning"},
	{File: "agent/tokenexpiry.go", Func: "publishedExpiry", Keys: []string{"vmcontext.KeyPubTokenExpires"}, Why: "can only make a worker wait or start a join with a dying token (docs/trust.md row)"},

	// onekubed serve.
	{File: "agent/serve/controlplane.go", Func: "ControlPlane.Tick", Keys: []string{"vmcontext.KeyPubCertKey", "vmcontext.KeyPubEtcd", "vmcontext.KeyPubEtcdError"}, Why: "its own keys read back at term start to skip writes: a forged grant is withdrawn, a forged etcd line rewritten"},
	{File: "agent/serve/keymirror.go", Func: "keyMirror.set", Keys: []string{"m.key"}, Why: "its own status key read back once to skip a write: a forged value is rewritten"},
	{File: "agent/serve/presence.go", Func: "Presence.Tick", Keys: []string{"vmcontext.KeyPubServe"}, Why: "its own status key read back once to skip a write: a forged value is rewritten"},
	{File: "agent/serve/kubeconfig.go", Func: "Kubeconfig.Tick", Keys: []string{"*"}, Why: "a request: challenged against a listed user's key, nothing bound or signed without that user's proof over every field (docs/kubeconfig.md)"},

	// onekube-flow, through oned's XML-RPC: the same sibling-writable text.
	{File: "flow/access/fetch.go", Func: "Client.readyMaster", Keys: []string{"vmcontext.KeyPubServe"}, Why: "picks which READY master to ask first; a wrong pick only waits"},
	{File: "flow/access/fetch.go", Func: "masterReady", Keys: []string{"vmcontext.KeyReady"}, Why: "can only withhold a request or send it to a master that cannot answer"},
	{File: "flow/access/fetch.go", Func: "Client.Fetch", Keys: []string{"kubeconfig.AnswerKey(id)", "kubeconfig.RequestKey(id)"}, Why: "the answer is checked against the request (challenge, name, role, validity) and the API server; the request: presence only"},
	{File: "flow/access/fetch.go", Func: "Client.noAnswer", Keys: []string{"vmcontext.KeyPubServe"}, Why: "display only, in an error hint"},
	{File: "flow/status/oned.go", Func: "fromOned", Keys: []string{"*"}, Why: "display only, bounded; the token is read only to mask it wherever it appears in the output"},

	// Simulators and fakes model the writer; nothing acts on what they read.
	{File: "context/onegatesim/hostile.go", Func: "*", Keys: []string{"*"}, Why: "simulator: decodes a sibling's document for a scripted hostile actor"},
	{File: "agent/internal/simcluster/masters.go", Func: "*", Keys: []string{"*"}, Why: "test cluster: reads the simulator's state for assertions"},
	{File: "flow/register/registertest/fakes.go", Func: "*", Keys: []string{"*"}, Why: "fake oned: renders its own fixture maps"},
}

// unverifiedFile is the only file where Claim.Unverified() needs no comment.
const unverifiedFile = "context/protocol/claim.go"

// TestUserTemplateReadsAreReviewed parses every non-test .go file of the
// module and fails on any read of a `.UserTemplate` (an index, a range, the
// map passed along or aliased, a method on it) that userTemplateReads does
// not list for that file, function and key. It also fails on a
// Claim.Unverified() call without a comment on its statement saying why the
// raw text is safe there. Both keep issue 20 must-hold 2 under review: a
// sibling-writable value reaches no secret, identity or destructive act
// unseen.
func TestUserTemplateReadsAreReviewed(t *testing.T) {
	reads, bare := scanModule(t, "../..")

	type fileFunc struct{ file, fn string }
	allowed := map[fileFunc]map[string]bool{}
	used := map[fileFunc]map[string]bool{}
	for _, e := range userTemplateReads {
		if strings.TrimSpace(e.Why) == "" || strings.HasPrefix(e.Why, "TODO") {
			t.Errorf("userTemplateReads entry %s %s has no reason: say why the read is safe under docs/trust.md", e.File, e.Func)
		}
		k := fileFunc{e.File, e.Func}
		if allowed[k] == nil {
			allowed[k], used[k] = map[string]bool{}, map[string]bool{}
		}
		for _, key := range e.Keys {
			allowed[k][key] = true
		}
	}
	var missing []string
	var order []fileFunc
	suggest := map[fileFunc][]string{}
	for _, r := range reads {
		k := fileFunc{r.file, r.fn}
		if allowed[k] == nil {
			k = fileFunc{r.file, "*"}
		}
		if a := allowed[k]; a != nil && (a[r.key] || a["*"]) {
			if a[r.key] {
				used[k][r.key] = true
			} else {
				used[k]["*"] = true
			}
			continue
		}
		missing = append(missing, fmt.Sprintf("%s:%d: %s reads USER_TEMPLATE %s", r.file, r.line, r.fn, r.key))
		ff := fileFunc{r.file, r.fn}
		if suggest[ff] == nil {
			order = append(order, ff)
		}
		if !slices.Contains(suggest[ff], r.key) {
			suggest[ff] = append(suggest[ff], r.key)
		}
	}
	if len(missing) > 0 {
		var entries []string
		for _, ff := range order {
			keys := fmt.Sprintf("%q", suggest[ff])
			keys = strings.ReplaceAll(keys[1:len(keys)-1], `" "`, `", "`)
			entries = append(entries, fmt.Sprintf("\t{File: %q, Func: %q, Keys: []string{%s}, Why: \"TODO\"},", ff.file, ff.fn, keys))
		}
		t.Errorf(`USER_TEMPLATE reads nobody reviewed. Any VM of the service can write these values (docs/trust.md).
Either read the value as a claim, vm.Claim(key) (context/onegate/claim.go), and call .Unverified()
with a comment saying why the raw text is safe there; or add an entry to userTemplateReads in
context/protocol/claims_lint_test.go whose Why says what a forger gains (e.g. "display only, masked
and bounded", "checked against the VM's own NICs"), for review:
  %s
Entries to start from (replace TODO; merge keys into an existing entry of the same function):
%s`, strings.Join(missing, "\n  "), strings.Join(entries, "\n"))
	}
	for _, e := range userTemplateReads {
		k := fileFunc{e.File, e.Func}
		for _, key := range e.Keys {
			if !used[k][key] {
				t.Errorf("userTemplateReads: %s %s no longer reads %s; remove it from the entry (or the entry)", e.File, e.Func, key)
			}
		}
	}
	for _, b := range bare {
		t.Errorf("%s: Claim.Unverified() without a comment: say on its statement (or the line above) why a sibling-written value is safe here, or use it only through a check of vouched state", b)
	}
}

// utRead is one key read from a USER_TEMPLATE map.
type utRead struct {
	file, fn, key string
	line          int
}

// scanModule parses every non-test .go file under root (testdata, hidden
// and underscore directories aside, whatever its build tags) and returns
// the USER_TEMPLATE reads and the uncommented Unverified() calls.
func scanModule(t *testing.T, root string) (reads []utRead, bare []string) {
	t.Helper()
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		n++
		r, b := scanFile(fset, f, src, rel)
		reads, bare = append(reads, r...), append(bare, b...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("parsed only %d files under %s: is the module root right?", n, root)
	}
	sort.Slice(reads, func(i, j int) bool {
		if reads[i].file != reads[j].file {
			return reads[i].file < reads[j].file
		}
		return reads[i].line < reads[j].line
	})
	return reads, bare
}

// scanFile reports the USER_TEMPLATE reads of one file, by enclosing
// top-level function, and its Unverified() calls that carry no comment.
func scanFile(fset *token.FileSet, f *ast.File, src []byte, rel string) (reads []utRead, bare []string) {
	for _, decl := range f.Decls {
		fn := declName(decl)
		var stack []ast.Node
		var aliases []string
		// First pass: the selectors, and the names they are stored in.
		ast.Inspect(decl, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if x.Sel.Name == "UserTemplate" {
					for _, u := range mapUses(x, stack, &aliases) {
						reads = append(reads, utRead{rel, fn, u.key, fset.Position(u.at).Line})
					}
				}
			case *ast.CallExpr:
				if s, ok := x.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Unverified" && len(x.Args) == 0 && rel != unverifiedFile {
					if !commented(fset, f, src, x, stack) {
						bare = append(bare, fmt.Sprintf("%s:%d (%s)", rel, fset.Position(x.Pos()).Line, fn))
					}
				}
			}
			return true
		})
		if len(aliases) == 0 {
			continue
		}
		// Second pass: reads through a local alias (ut := vm.UserTemplate).
		stack = stack[:0]
		ast.Inspect(decl, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			if id, ok := n.(*ast.Ident); ok && slices.Contains(aliases, id.Name) && !aliasDef(id, stack) {
				var more []string
				uses := mapUses(id, stack, &more)
				if len(more) > 0 { // an alias of an alias: the whole map
					uses = append(uses, mapUse{"*", id.Pos()})
				}
				for _, u := range uses {
					reads = append(reads, utRead{rel, fn, u.key, fset.Position(u.at).Line})
				}
			}
			return true
		})
	}
	return reads, bare
}

type mapUse struct {
	key string
	at  token.Pos
}

// mapUses says how the map expression m (the top of stack) is used: a key
// read, the whole map read, a write (nothing), or stored in a local name
// (added to aliases; its uses are read in a second pass).
func mapUses(m ast.Expr, stack []ast.Node, aliases *[]string) []mapUse {
	i := len(stack) - 1
	var node ast.Node = m
	parent := func() ast.Node {
		for i--; i >= 0; i-- {
			if _, ok := stack[i].(*ast.ParenExpr); !ok {
				return stack[i]
			}
		}
		return nil
	}
	p := parent()
	// A method yielding the map (a simulator's UserTemplate(id)) stands
	// for the map; a method on the map (GetStr(key)) reads its argument.
	if c, ok := p.(*ast.CallExpr); ok && ast.Unparen(c.Fun) == node {
		node, p = c, parent()
	}
	whole := []mapUse{{"*", m.Pos()}}
	switch x := p.(type) {
	case *ast.IndexExpr:
		if ast.Unparen(x.X) != node {
			return whole // used as a key: still the whole map's text
		}
		if isWrite(x, parent()) {
			return nil
		}
		return []mapUse{{types.ExprString(x.Index), x.Pos()}}
	case *ast.SelectorExpr:
		if c, ok := parent().(*ast.CallExpr); ok && ast.Unparen(c.Fun) == x && len(c.Args) > 0 {
			return []mapUse{{types.ExprString(c.Args[0]), c.Pos()}}
		}
		return whole
	case *ast.AssignStmt:
		for j, l := range x.Lhs {
			if ast.Unparen(l) == node {
				return nil // the map replaced: a write
			}
			if j < len(x.Rhs) && ast.Unparen(x.Rhs[j]) == node && len(x.Lhs) == len(x.Rhs) {
				if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
					*aliases = append(*aliases, id.Name)
					return nil
				}
			}
		}
		return whole
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "delete" && len(x.Args) > 0 && ast.Unparen(x.Args[0]) == node {
			return nil
		}
		return whole
	case *ast.BinaryExpr:
		if isNil(x.X) || isNil(x.Y) {
			return nil // a nil check reads no value
		}
		return whole
	}
	return whole
}

// isWrite: the index expression ix is assigned to, or deleted.
func isWrite(ix *ast.IndexExpr, p ast.Node) bool {
	a, ok := p.(*ast.AssignStmt)
	return ok && slices.ContainsFunc(a.Lhs, func(l ast.Expr) bool { return ast.Unparen(l) == ix }) && (a.Tok == token.ASSIGN || a.Tok == token.DEFINE)
}

func isNil(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "nil"
}

// aliasDef: id is the name being defined or reassigned, or a field or
// method of the same name, not a use of the alias.
func aliasDef(id *ast.Ident, stack []ast.Node) bool {
	if len(stack) < 2 {
		return false
	}
	switch p := stack[len(stack)-2].(type) {
	case *ast.AssignStmt:
		return slices.Contains(p.Lhs, ast.Expr(id))
	case *ast.SelectorExpr:
		return p.Sel == id
	case *ast.KeyValueExpr:
		return p.Key == id
	}
	return false
}

// commented: a comment sits on the call's line, or between the line above
// its innermost statement (or declaration) and the call; on the line
// above, only a comment of its own (not another statement's trailing one).
func commented(fset *token.FileSet, f *ast.File, src []byte, call *ast.CallExpr, stack []ast.Node) bool {
	callLine := fset.Position(call.Pos()).Line
	from := callLine
	for i := len(stack) - 1; i >= 0; i-- {
		switch stack[i].(type) {
		case ast.Stmt, ast.Decl, *ast.ValueSpec:
			from = fset.Position(stack[i].Pos()).Line
			i = -1
		}
	}
	for _, cg := range f.Comments {
		end := fset.Position(cg.End()).Line
		if end < from-1 || end > callLine {
			continue
		}
		if end >= from {
			return true
		}
		start := fset.Position(cg.Pos())
		lineStart := start.Offset - (start.Column - 1)
		if strings.TrimSpace(string(src[lineStart:start.Offset])) == "" {
			return true
		}
	}
	return false
}

// declName names a top-level declaration: "Type.Method", "func", or the
// first name of a var block.
func declName(d ast.Decl) string {
	switch x := d.(type) {
	case *ast.FuncDecl:
		if x.Recv == nil || len(x.Recv.List) == 0 {
			return x.Name.Name
		}
		typ := x.Recv.List[0].Type
		for {
			switch y := typ.(type) {
			case *ast.StarExpr:
				typ = y.X
				continue
			case *ast.IndexExpr:
				typ = y.X
				continue
			case *ast.IndexListExpr:
				typ = y.X
				continue
			}
			break
		}
		return types.ExprString(typ) + "." + x.Name.Name
	case *ast.GenDecl:
		for _, s := range x.Specs {
			if v, ok := s.(*ast.ValueSpec); ok && len(v.Names) > 0 {
				return v.Names[0].Name
			}
		}
	}
	return "init"
}

// TestScanFileFindsEveryRead pins what the lint counts as a read, on a
// file written for it.
func TestScanFileFindsEveryRead(t *testing.T) {
	const src = `package x

func index(vm *VM) string { return vm.UserTemplate["A"] }

func presence(vm *VM) bool { _, ok := vm.UserTemplate["B"]; return ok }

func ranged(vm *VM) {
	for k := range vm.UserTemplate {
		_ = k
	}
}

func passed(vm *VM) { use(vm.UserTemplate) }

func alias(vm *VM) string {
	ut := vm.UserTemplate
	ut["W"] = "written"
	return ut["C"] + ut[key()]
}

func aliasPassed(vm *VM) { ut := vm.UserTemplate; use(ut) }

func method(v *X) { s, _ := v.UserTemplate.GetStr("D"); _ = s }

func methodValue(v *X) func(string) (string, error) { return v.UserTemplate.GetStr }

func simulator(s *Sim) string { return s.UserTemplate(3)["E"] }

func (r *T) recv(vm *VM) string { return (vm.UserTemplate)["F"] }

func closure(vm *VM) func() string { return func() string { return vm.UserTemplate["G"] } }

func writes(vm *VM) {
	vm.UserTemplate["W"] = "x"
	vm.UserTemplate = nil
	delete(vm.UserTemplate, "W")
	if vm.UserTemplate != nil {
	}
}

func claims(vm *VM) {
	// Display only.
	_ = vm.Claim("A").Unverified()
	_ = vm.Claim("B").Unverified() // compared only
	_ = vm.Claim("C").Unverified()
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	reads, bare := scanFile(fset, f, []byte(src), "x.go")
	var got []string
	for _, r := range reads {
		got = append(got, r.fn+" "+r.key)
	}
	want := []string{
		`index "A"`, `presence "B"`, `ranged *`, `passed *`,
		`alias "C"`, `alias key()`, `aliasPassed *`,
		`method "D"`, `methodValue *`, `simulator "E"`,
		`T.recv "F"`, `closure "G"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reads:\n got %q\nwant %q", got, want)
	}
	line := strings.Count(src[:strings.Index(src, `vm.Claim("C")`)], "\n") + 1
	if want := fmt.Sprintf("x.go:%d (claims)", line); len(bare) != 1 || bare[0] != want {
		t.Errorf("uncommented Unverified() calls = %q, want only %q", bare, want)
	}
}
