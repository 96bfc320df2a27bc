package flow

import (
	"fmt"
	"strings"
)

// exprLint is one finding about an elasticity expression that parses.
type exprLint struct {
	severity Severity
	msg      string
}

// alwaysThere are attributes every RUNNING VM has: TEMPLATE/CPU and
// TEMPLATE/MEMORY (MONITORING's, once monitored, win: the lookup order is
// USER_TEMPLATE, MONITORING, TEMPLATE, then the VM's root element) and the
// root's own elements. Anything else (an attribute a VM publishes through
// OneGate, a monitoring probe's) may be missing.
var alwaysThere = map[string]bool{
	"CPU": true, "MEMORY": true, "ID": true, "UID": true, "GID": true, "UNAME": true, "GNAME": true,
	"NAME": true, "STATE": true, "LCM_STATE": true, "STIME": true,
}

// LintExpression reports what an elasticity expression that OneFlow
// accepts does differently from how it reads (rules from grammar.treetop
// and the 7.4.0 autoscaler, shared/reference day2-upgrades-healing-scaling
// §3.2). An expression that does not parse gets no lint: CheckExpression
// refuses it.
func LintExpression(expr string) []exprLint {
	root := parseExpression(expr)
	if root == nil {
		return nil
	}
	var out []exprLint
	add := func(sev Severity, format string, a ...any) {
		out = append(out, exprLint{sev, fmt.Sprintf(format, a...)})
	}
	mixed, notScope := false, false
	var walk func(n *exprNode)
	walk = func(n *exprNode) {
		switch n.kind {
		case exprCmp:
			if n.lhs.attr == "" && n.rhs.attr == "" {
				add(Error, "%s compares two numbers: it is always or never true, so the policy fires on every check or never", n)
			}
		case exprAnd, exprOr:
			if r := n.right; !mixed && (r.kind == exprAnd || r.kind == exprOr) && r.kind != n.kind {
				mixed = true
				add(Warning, "&& and || without parentheses: OneFlow gives them the same precedence and groups from the right, so %q means %s; add parentheses", expr, root)
			}
		case exprNot:
			if k := n.left.kind; !notScope && (k == exprAnd || k == exprOr) {
				notScope = true
				// '!(A) && B' scopes the '!' with parentheses that
				// OneFlow does not honour: it cannot mean what it
				// says. '!A > 1 && B' is only ambiguous.
				sev, hint := Warning, "put what it should negate in parentheses"
				if n.left.left.kind == exprParen {
					sev, hint = Error, "the parentheses after '!' do not end its scope; write (!(...)) to negate only them"
				}
				add(sev, "'!' negates everything after it, so %q means %s; %s", expr, root, hint)
			}
			var missing []string
			for _, a := range n.left.attrs() {
				if !alwaysThere[a] {
					missing = append(missing, a)
				}
			}
			if len(missing) > 0 {
				add(Warning, "'!' over %s: a comparison with an attribute no RUNNING VM of the role has is false, so %s is true then (at cardinality 0, or before the VMs publish it) and the policy fires; compare the other way instead (e.g. X <= 80 for !(X > 80))",
					strings.Join(missing, ", "), n)
			}
		}
		for _, c := range []*exprNode{n.left, n.right} {
			if c != nil {
				walk(c)
			}
		}
	}
	walk(root)
	return out
}
