package policy

import "strings"

// Expr is a node of a parsed oslo.policy rule expression; the concrete types mirror
// oslo.policy's check classes ([*TrueCheck], [*RuleCheck], [*AndCheck], ...). String
// renders the canonical text (lower-case keywords, one space between tokens, parentheses
// only where needed), which [Parse] reads back to an [Equal] expression.
type Expr interface {
	// Pos returns the byte offset of the node in the text it was parsed from (0 for
	// a node built in code).
	Pos() int
	// String returns the canonical text of the expression.
	String() string

	expr()
}

// TrueCheck always allows: "@", or the empty expression.
type TrueCheck struct {
	// Offset is the byte offset of the "@".
	Offset int
}

// FalseCheck always denies: "!".
type FalseCheck struct {
	// Offset is the byte offset of the "!".
	Offset int
}

// RuleCheck evaluates another rule of the same rule set: "rule:NAME".
type RuleCheck struct {
	// Name is the referenced rule.
	Name string
	// Offset is the byte offset of the check.
	Offset int
}

// RoleCheck allows when the caller's token holds the role, compared case-insensitively
// by oslo.policy: "role:NAME". NAME may carry %(key)s substitutions from the target.
type RoleCheck struct {
	// Name is the role, as written.
	Name string
	// Offset is the byte offset of the check.
	Offset int
}

// GenericCheck compares a credential attribute with a value: "KIND:MATCH", such as
// "project_id:%(project_id)s" or "system_scope:all". KIND is a dotted path into the
// caller's credentials; MATCH is a value in which %(key)s is replaced from the target
// (dotted keys such as %(target.user.id)s are looked up as one key, as oslo.policy
// does).
type GenericCheck struct {
	// Kind is the credential path before the first ':'.
	Kind string
	// Match is the value after the first ':'.
	Match string
	// Offset is the byte offset of the check.
	Offset int
}

// LiteralCheck compares a constant with a value taken from the target:
// "True:%(enabled)s", "'member':%(role.name)s". oslo.policy treats a KIND that is a
// Python literal this way; this package recognises True, False, None, decimal integers
// and quoted strings without escapes.
type LiteralCheck struct {
	// Literal is the constant, as written (quotes included).
	Literal string
	// Match is the value after the first ':'.
	Match string
	// Offset is the byte offset of the check.
	Offset int
}

// NotCheck negates X: "not X".
type NotCheck struct {
	// X is the negated expression.
	X Expr
	// Offset is the byte offset of the "not".
	Offset int
}

// AndCheck allows when all of Checks allow: "A and B and C". An AndCheck built in
// code with no checks allows and renders "@"; one with a single check renders that
// check.
type AndCheck struct {
	// Checks are the operands, in order.
	Checks []Expr
}

// OrCheck allows when any of Checks allows: "A or B or C". An OrCheck built in code
// with no checks denies and renders "!"; one with a single check renders that check.
type OrCheck struct {
	// Checks are the operands, in order.
	Checks []Expr
}

func (*TrueCheck) expr()    {}
func (*FalseCheck) expr()   {}
func (*RuleCheck) expr()    {}
func (*RoleCheck) expr()    {}
func (*GenericCheck) expr() {}
func (*LiteralCheck) expr() {}
func (*NotCheck) expr()     {}
func (*AndCheck) expr()     {}
func (*OrCheck) expr()      {}

// Pos implements Expr.
func (e *TrueCheck) Pos() int { return e.Offset }

// Pos implements Expr.
func (e *FalseCheck) Pos() int { return e.Offset }

// Pos implements Expr.
func (e *RuleCheck) Pos() int { return e.Offset }

// Pos implements Expr.
func (e *RoleCheck) Pos() int { return e.Offset }

// Pos implements Expr.
func (e *GenericCheck) Pos() int { return e.Offset }

// Pos implements Expr.
func (e *LiteralCheck) Pos() int { return e.Offset }

// Pos implements Expr.
func (e *NotCheck) Pos() int { return e.Offset }

// Pos implements Expr: the offset of the first operand.
func (e *AndCheck) Pos() int { return firstPos(e.Checks) }

// Pos implements Expr: the offset of the first operand.
func (e *OrCheck) Pos() int { return firstPos(e.Checks) }

func firstPos(checks []Expr) int {
	if len(checks) == 0 || checks[0] == nil {
		return 0
	}
	return checks[0].Pos()
}

// String implements Expr.
func (e *TrueCheck) String() string { return "@" }

// String implements Expr.
func (e *FalseCheck) String() string { return "!" }

// String implements Expr.
func (e *RuleCheck) String() string { return "rule:" + e.Name }

// String implements Expr.
func (e *RoleCheck) String() string { return "role:" + e.Name }

// String implements Expr.
func (e *GenericCheck) String() string { return e.Kind + ":" + e.Match }

// String implements Expr.
func (e *LiteralCheck) String() string { return e.Literal + ":" + e.Match }

// String implements Expr.
func (e *NotCheck) String() string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

// String implements Expr.
func (e *AndCheck) String() string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

// String implements Expr.
func (e *OrCheck) String() string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

// effective unwraps what renders the same as a simpler node: nil (denies), And/Or
// with zero or one operand.
func effective(e Expr) Expr {
	for {
		switch n := e.(type) {
		case nil:
			return &FalseCheck{}
		case *AndCheck:
			switch len(n.Checks) {
			case 0:
				return &TrueCheck{}
			case 1:
				e = n.Checks[0]
				continue
			}
		case *OrCheck:
			switch len(n.Checks) {
			case 0:
				return &FalseCheck{}
			case 1:
				e = n.Checks[0]
				continue
			}
		}
		return e
	}
}

func writeExpr(b *strings.Builder, e Expr) {
	switch n := effective(e).(type) {
	case *NotCheck:
		b.WriteString("not ")
		x := effective(n.X)
		writeOperand(b, x, isCompound(x))
	case *AndCheck:
		for i, c := range n.Checks {
			if i > 0 {
				b.WriteString(" and ")
			}
			c = effective(c)
			writeOperand(b, c, isCompound(c))
		}
	case *OrCheck:
		for i, c := range n.Checks {
			if i > 0 {
				b.WriteString(" or ")
			}
			c = effective(c)
			_, nestedOr := c.(*OrCheck)
			writeOperand(b, c, nestedOr)
		}
	default:
		b.WriteString(n.String())
	}
}

func writeOperand(b *strings.Builder, e Expr, paren bool) {
	if paren {
		b.WriteByte('(')
	}
	writeExpr(b, e)
	if paren {
		b.WriteByte(')')
	}
}

// isCompound reports an effective And or Or, which needs parentheses as the operand
// of not and of and.
func isCompound(e Expr) bool {
	switch e.(type) {
	case *AndCheck, *OrCheck:
		return true
	}
	return false
}

// Equal reports whether a and b are the same expression, ignoring offsets. A nil
// operand and And/Or nodes with fewer than two operands compare as what they render.
func Equal(a, b Expr) bool {
	a, b = effective(a), effective(b)
	switch x := a.(type) {
	case *TrueCheck:
		_, ok := b.(*TrueCheck)
		return ok
	case *FalseCheck:
		_, ok := b.(*FalseCheck)
		return ok
	case *RuleCheck:
		y, ok := b.(*RuleCheck)
		return ok && x.Name == y.Name
	case *RoleCheck:
		y, ok := b.(*RoleCheck)
		return ok && x.Name == y.Name
	case *GenericCheck:
		y, ok := b.(*GenericCheck)
		return ok && x.Kind == y.Kind && x.Match == y.Match
	case *LiteralCheck:
		y, ok := b.(*LiteralCheck)
		return ok && x.Literal == y.Literal && x.Match == y.Match
	case *NotCheck:
		y, ok := b.(*NotCheck)
		return ok && Equal(x.X, y.X)
	case *AndCheck:
		y, ok := b.(*AndCheck)
		return ok && equalAll(x.Checks, y.Checks)
	case *OrCheck:
		y, ok := b.(*OrCheck)
		return ok && equalAll(x.Checks, y.Checks)
	}
	return false
}

func equalAll(a, b []Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Inspect walks e depth-first, operands in order, calling f for every node; when f
// returns false, Inspect does not descend into that node's operands.
func Inspect(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	switch n := e.(type) {
	case *NotCheck:
		Inspect(n.X, f)
	case *AndCheck:
		for _, c := range n.Checks {
			Inspect(c, f)
		}
	case *OrCheck:
		for _, c := range n.Checks {
			Inspect(c, f)
		}
	}
}

// RuleRefs returns the rule:NAME checks of e, in the order they appear.
func RuleRefs(e Expr) []*RuleCheck {
	var refs []*RuleCheck
	Inspect(e, func(n Expr) bool {
		if r, ok := n.(*RuleCheck); ok {
			refs = append(refs, r)
		}
		return true
	})
	return refs
}
