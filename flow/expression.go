package flow

import "fmt"

// CheckExpression reports whether expr parses with OneFlow's elasticity
// grammar (src/flow/lib/grammar.treetop): comparisons of numbers and
// attribute names ("CPU > 80"), joined with && & || |, negated with !,
// grouped with parentheses. Only spaces count as blanks, as in the grammar.
// It is a PEG: ordered choice, whole input consumed.
func CheckExpression(expr string) error {
	p := exprParser{s: expr}
	end, ok := p.expression(0)
	if !ok || end != len(expr) {
		at := max(end, p.far)
		if at > len(expr) {
			at = len(expr)
		}
		return fmt.Errorf("expression %q does not parse at offset %d (want e.g. \"CPU > 80 && MEMORY < 50\")", expr, at)
	}
	return nil
}

type exprParser struct {
	s   string
	far int // furthest offset reached, for the error message
}

func (p *exprParser) note(i int) {
	if i > p.far {
		p.far = i
	}
}

func (p *exprParser) space(i int) int {
	for i < len(p.s) && p.s[i] == ' ' {
		i++
	}
	return i
}

func (p *exprParser) lit(i int, ls ...string) (int, bool) {
	for _, l := range ls {
		if len(p.s)-i >= len(l) && p.s[i:i+len(l)] == l {
			p.note(i + len(l))
			return i + len(l), true
		}
	}
	return i, false
}

// expression := space (boolean_exp / logic_cond) space
// boolean_exp := logic_cond space ('&&'/'&' / '||'/'|') space expression
//
// boolean_exp starts with the logic_cond that is the other choice, and a
// PEG rule at one offset has one outcome, so logic_cond is parsed once:
// trying it again for the second choice made the parse 4^depth over
// nested parentheses.
func (p *exprParser) expression(i int) (int, bool) {
	i = p.space(i)
	j, ok := p.logicCond(i)
	if !ok {
		return i, false
	}
	if k, ok := p.lit(p.space(j), "&&", "&", "||", "|"); ok {
		if m, ok := p.expression(p.space(k)); ok {
			return m, true
		}
	}
	return p.space(j), true
}

// logic_cond := operand space comp_op space operand / '!' space expression
// / '(' space expression space ')'
func (p *exprParser) logicCond(i int) (int, bool) {
	if j, ok := p.operand(i); ok {
		j = p.space(j)
		if k, ok := p.lit(j, "==", "=", "!=", "<>", ">=", ">", "<=", "<"); ok {
			if m, ok := p.operand(p.space(k)); ok {
				return m, true
			}
		}
	}
	if j, ok := p.lit(i, "!"); ok {
		if k, ok := p.expression(p.space(j)); ok {
			return k, true
		}
	}
	if j, ok := p.lit(i, "("); ok {
		if k, ok := p.expression(p.space(j)); ok {
			if m, ok := p.lit(p.space(k), ")"); ok {
				return m, true
			}
		}
	}
	return i, false
}

// operand := number / variable
func (p *exprParser) operand(i int) (int, bool) {
	if j, ok := p.number(i); ok {
		return j, true
	}
	return p.variable(i)
}

// number := '-'? [0-9]+ ('.' [0-9]+)?
func (p *exprParser) number(i int) (int, bool) {
	j := i
	if j < len(p.s) && p.s[j] == '-' {
		j++
	}
	k := p.digits(j)
	if k == j {
		return i, false
	}
	if k < len(p.s) && p.s[k] == '.' {
		if m := p.digits(k + 1); m > k+1 {
			k = m
		}
	}
	p.note(k)
	return k, true
}

func (p *exprParser) digits(i int) int {
	for i < len(p.s) && p.s[i] >= '0' && p.s[i] <= '9' {
		i++
	}
	return i
}

// variable := [a-zA-Z][0-9a-zA-Z_]*, optionally in "..." or '...'
func (p *exprParser) variable(i int) (int, bool) {
	if i < len(p.s) && (p.s[i] == '"' || p.s[i] == '\'') {
		q := p.s[i]
		j, ok := p.bareName(i + 1)
		if ok && j < len(p.s) && p.s[j] == q {
			p.note(j + 1)
			return j + 1, true
		}
		return i, false
	}
	return p.bareName(i)
}

func (p *exprParser) bareName(i int) (int, bool) {
	if i >= len(p.s) || !isAlpha(p.s[i]) {
		return i, false
	}
	j := i + 1
	for j < len(p.s) && (isAlpha(p.s[j]) || p.s[j] == '_' || (p.s[j] >= '0' && p.s[j] <= '9')) {
		j++
	}
	p.note(j)
	return j, true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
