package flow

import "strings"

// exprNode is a parsed elasticity expression, grouped as OneFlow groups it
// (grammar.treetop, src/oca/ruby/opennebula/flow/, release-7.4.0 and
// release-6.10.5):
//
//	expression  := space (boolean_exp / logic_cond) space
//	boolean_exp := logic_cond space ('&&'/'&' / '||'/'|') space expression
//	logic_cond  := operand space comp_op space operand
//	             / '!' space expression / '(' space expression space ')'
//
// So && and || have one precedence and group from the right (the right
// side of boolean_exp is a whole expression), and '!' negates everything
// after it, not just the next comparison.
type exprNode struct {
	kind        exprKind
	op          string    // the operator as written: "&&", "|", ">=", ...
	left, right *exprNode // exprAnd, exprOr; exprNot and exprParen use left
	lhs, rhs    exprOperand
}

type exprKind int

const (
	exprCmp exprKind = iota
	exprAnd
	exprOr
	exprNot
	exprParen
)

// exprOperand is a number or an attribute; OneFlow upcases attribute
// names and drops their quotes.
type exprOperand struct {
	text string // as written
	attr string // upcased name, "" for a number
}

// parseExpression returns expr's tree, or nil when it does not parse
// (CheckExpression says why). PEG rules are deterministic, so each rule is
// parsed once per position: boolean_exp starts with the logic_cond that is
// the other choice, and the result is that logic_cond when no operator and
// expression follow it.
func parseExpression(expr string) *exprNode {
	p := treeParser{exprParser{s: expr}}
	n, end, ok := p.expression(0)
	if !ok || end != len(expr) {
		return nil
	}
	return n
}

type treeParser struct{ exprParser }

func (p *treeParser) expression(i int) (*exprNode, int, bool) {
	c, j, ok := p.logicCond(p.space(i))
	if !ok {
		return nil, i, false
	}
	if k, ok := p.lit(p.space(j), "&&", "&", "||", "|"); ok {
		if r, m, ok := p.expression(p.space(k)); ok {
			kind := exprAnd
			if p.s[k-1] == '|' {
				kind = exprOr
			}
			return &exprNode{kind: kind, op: p.s[p.space(j):k], left: c, right: r}, m, true
		}
	}
	return c, p.space(j), true
}

func (p *treeParser) logicCond(i int) (*exprNode, int, bool) {
	if l, j, ok := p.treeOperand(i); ok {
		j = p.space(j)
		if k, ok := p.lit(j, "==", "=", "!=", "<>", ">=", ">", "<=", "<"); ok {
			if r, m, ok := p.treeOperand(p.space(k)); ok {
				return &exprNode{kind: exprCmp, op: p.s[j:k], lhs: l, rhs: r}, m, true
			}
		}
	}
	if j, ok := p.lit(i, "!"); ok {
		if e, k, ok := p.expression(p.space(j)); ok {
			return &exprNode{kind: exprNot, op: "!", left: e}, k, true
		}
	}
	if j, ok := p.lit(i, "("); ok {
		if e, k, ok := p.expression(p.space(j)); ok {
			if m, ok := p.lit(p.space(k), ")"); ok {
				return &exprNode{kind: exprParen, left: e}, m, true
			}
		}
	}
	return nil, i, false
}

func (p *treeParser) treeOperand(i int) (exprOperand, int, bool) {
	if j, ok := p.number(i); ok {
		return exprOperand{text: p.s[i:j]}, j, true
	}
	j, ok := p.variable(i)
	if !ok {
		return exprOperand{}, i, false
	}
	text := p.s[i:j]
	return exprOperand{text: text, attr: strings.ToUpper(strings.Trim(text, `"'`))}, j, true
}

// String prints the tree with every grouping explicit: each && or || that
// OneFlow groups from the right gets parentheses around its right side
// when that side is itself an && or || (or a '!', which reaches to the
// end), and '!' gets them around what it negates unless already there.
func (n *exprNode) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *exprNode) write(b *strings.Builder) {
	switch n.kind {
	case exprCmp:
		b.WriteString(n.lhs.text + " " + n.op + " " + n.rhs.text)
	case exprAnd, exprOr:
		n.left.write(b)
		b.WriteString(" " + n.op + " ")
		n.right.writeGrouped(b)
	case exprNot:
		b.WriteString("!")
		if n.left.kind == exprParen {
			n.left.write(b)
			break
		}
		b.WriteString("(")
		n.left.write(b)
		b.WriteString(")")
	case exprParen:
		b.WriteString("(")
		n.left.write(b)
		b.WriteString(")")
	}
}

func (n *exprNode) writeGrouped(b *strings.Builder) {
	if n.kind == exprAnd || n.kind == exprOr || n.kind == exprNot {
		b.WriteString("(")
		n.write(b)
		b.WriteString(")")
		return
	}
	n.write(b)
}

// attrs returns the attribute names under n, in order, repeats dropped.
func (n *exprNode) attrs() []string {
	var out []string
	seen := map[string]bool{}
	var walk func(*exprNode)
	walk = func(n *exprNode) {
		if n == nil {
			return
		}
		for _, o := range []exprOperand{n.lhs, n.rhs} {
			if o.attr != "" && !seen[o.attr] {
				seen[o.attr] = true
				out = append(out, o.attr)
			}
		}
		walk(n.left)
		walk(n.right)
	}
	walk(n)
	return out
}
