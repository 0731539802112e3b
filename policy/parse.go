package policy

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDepth is how deeply Parse lets parentheses and not operators nest. oslo.policy
// evaluates a rule recursively under Python's recursion limit; real policies nest a
// few levels.
const MaxDepth = 100

type tokenKind int

const (
	tokLParen tokenKind = iota
	tokRParen
	tokAnd
	tokOr
	tokNot
	tokCheck
	tokString
)

type token struct {
	kind tokenKind
	off  int
	text string
}

// Parse parses one oslo.policy rule expression into its syntax tree, reading it as
// oslo.policy's _parser does (the package documentation, "The expression language").
// Every text oslo.policy would fail closed on, or that would raise at enforcement time,
// is refused with a [*SyntaxError] naming the byte offset and wrapping one of the syntax
// sentinels; a token the error quotes is cut to [MaxExcerpt] bytes.
func Parse(expr string) (Expr, error) {
	if expr == "" {
		return &TrueCheck{}, nil
	}
	p := &parser{lex: lexer{s: expr}}
	p.advance()
	if !p.ok {
		return nil, syntaxErr(0, ErrEmptyCheck,
			`the expression is blank; oslo.policy denies a rule of only whitespace (write "" or @ to allow)`)
	}
	e, err := p.parseOr(nil)
	if err != nil {
		return nil, err
	}
	if t, ok := p.peek(); ok {
		if t.kind == tokRParen {
			return nil, syntaxErr(t.off, ErrUnbalancedParenthesis, "')' has no matching '('")
		}
		return nil, syntaxErr(t.off, ErrMissingOperator, "expected and or or before %q", excerpt(t.text))
	}
	return e, nil
}

// isSpace reports what Python's \s matches in a str pattern.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// lexer yields the tokens of oslo.policy's _parse_tokenize one at a time: the text
// splits into words at whitespace, and each word into its leading '(' tokens, the
// keyword, check or quoted string left in the middle, and its trailing ')' tokens.
// It holds one word at a time, never a list of tokens, so the parser's work is
// bounded by what it reads: a word of a million '(' costs MaxDepth tokens.
type lexer struct {
	s   string
	pos int // where the next word starts to be looked for

	// The current word: lead '(' tokens from wordOff, then core (when hasCore), then
	// trail ')' tokens from trailOff; the *Done fields count what was yielded.
	wordOff, lead, leadDone    int
	core                       token
	hasCore, coreDone          bool
	trailOff, trail, trailDone int
}

// next returns the next token; false at the end of the text.
func (l *lexer) next() (token, bool) {
	for {
		switch {
		case l.leadDone < l.lead:
			l.leadDone++
			return token{kind: tokLParen, off: l.wordOff + l.leadDone - 1, text: "("}, true
		case l.hasCore && !l.coreDone:
			l.coreDone = true
			return l.core, true
		case l.trailDone < l.trail:
			l.trailDone++
			return token{kind: tokRParen, off: l.trailOff + l.trailDone - 1, text: ")"}, true
		}
		if !l.word() {
			return token{}, false
		}
	}
}

// word reads the next word into the lexer; false when only whitespace is left.
func (l *lexer) word() bool {
	s, i := l.s, l.pos
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !isSpace(r) {
			break
		}
		i += w
	}
	if i >= len(s) {
		l.pos = i
		return false
	}
	start := i
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if isSpace(r) {
			break
		}
		i += w
	}
	l.pos = i
	word := s[start:i]
	tok := strings.TrimLeft(word, "(")
	lead := len(word) - len(tok)
	off := start + lead
	clean := strings.TrimRight(tok, ")")
	l.wordOff, l.lead, l.leadDone = start, lead, 0
	l.hasCore, l.coreDone = true, false
	switch {
	case clean == "":
		l.hasCore = false
	case strings.EqualFold(clean, "and"):
		l.core = token{kind: tokAnd, off: off, text: clean}
	case strings.EqualFold(clean, "or"):
		l.core = token{kind: tokOr, off: off, text: clean}
	case strings.EqualFold(clean, "not"):
		l.core = token{kind: tokNot, off: off, text: clean}
	case isQuoted(tok):
		l.core = token{kind: tokString, off: off, text: tok}
	default:
		l.core = token{kind: tokCheck, off: off, text: clean}
	}
	l.trailOff, l.trail, l.trailDone = off+len(clean), len(tok)-len(clean), 0
	return true
}

// isQuoted reports a token oslo.policy reads as a quoted string.
func isQuoted(s string) bool {
	return len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0]
}

type parser struct {
	lex lexer
	// look is the next token, when ok.
	look  token
	ok    bool
	depth int
}

func (p *parser) peek() (token, bool) {
	return p.look, p.ok
}

// advance consumes the next token.
func (p *parser) advance() {
	p.look, p.ok = p.lex.next()
}

// parseOr parses an or of ands. prev is the token before the expression: an
// operator, a '(' or nil at the start.
func (p *parser) parseOr(prev *token) (Expr, error) {
	first, err := p.parseAnd(prev)
	if err != nil {
		return nil, err
	}
	checks := []Expr{first}
	for {
		t, ok := p.peek()
		if !ok || t.kind != tokOr {
			break
		}
		p.advance()
		next, err := p.parseAnd(&t)
		if err != nil {
			return nil, err
		}
		checks = append(checks, next)
	}
	if len(checks) == 1 {
		return first, nil
	}
	return &OrCheck{Checks: checks}, nil
}

func (p *parser) parseAnd(prev *token) (Expr, error) {
	first, err := p.parseNot(prev)
	if err != nil {
		return nil, err
	}
	checks := []Expr{first}
	for {
		t, ok := p.peek()
		if !ok || t.kind != tokAnd {
			break
		}
		p.advance()
		next, err := p.parseNot(&t)
		if err != nil {
			return nil, err
		}
		checks = append(checks, next)
	}
	if len(checks) == 1 {
		return first, nil
	}
	return &AndCheck{Checks: checks}, nil
}

func (p *parser) parseNot(prev *token) (Expr, error) {
	t, ok := p.peek()
	if !ok || t.kind != tokNot {
		return p.parsePrimary(prev)
	}
	p.advance()
	if err := p.enter(t); err != nil {
		return nil, err
	}
	x, err := p.parseNot(&t)
	p.depth--
	if err != nil {
		return nil, err
	}
	return &NotCheck{X: x, Offset: t.off}, nil
}

func (p *parser) enter(t token) error {
	p.depth++
	if p.depth > MaxDepth {
		return syntaxErr(t.off, ErrMalformedCheck, "parentheses and not nest deeper than %d levels", MaxDepth)
	}
	return nil
}

func (p *parser) parsePrimary(prev *token) (Expr, error) {
	t, ok := p.peek()
	if !ok {
		return nil, p.missingOperand(prev, t, ok)
	}
	switch t.kind {
	case tokCheck:
		p.advance()
		return parseCheck(t.text, t.off)
	case tokString:
		return nil, syntaxErr(t.off, ErrMalformedCheck,
			"%s is a quoted string, not a check; oslo.policy denies the whole rule (write @ to allow, ! to deny)", excerpt(t.text))
	case tokLParen:
		p.advance()
		if err := p.enter(t); err != nil {
			return nil, err
		}
		if n, ok := p.peek(); ok && n.kind == tokRParen {
			return nil, syntaxErr(t.off, ErrEmptyCheck, "'()' holds no check")
		}
		inner, err := p.parseOr(&t)
		if err != nil {
			return nil, err
		}
		p.depth--
		n, ok := p.peek()
		switch {
		case !ok:
			return nil, syntaxErr(t.off, ErrUnbalancedParenthesis, "'(' is never closed")
		case n.kind != tokRParen:
			return nil, syntaxErr(n.off, ErrMissingOperator, "expected and, or or ')' before %q", excerpt(n.text))
		}
		p.advance()
		return inner, nil
	}
	return nil, p.missingOperand(prev, t, ok)
}

// missingOperand explains why no operand starts at t (ok false: at the end).
func (p *parser) missingOperand(prev *token, t token, ok bool) error {
	if prev != nil && prev.kind != tokLParen {
		if prev.kind == tokNot {
			return syntaxErr(prev.off, ErrDanglingOperator, "%q has no operand", excerpt(prev.text))
		}
		return syntaxErr(prev.off, ErrDanglingOperator, "%q has no right operand", excerpt(prev.text))
	}
	switch {
	case !ok && prev != nil:
		return syntaxErr(prev.off, ErrUnbalancedParenthesis, "'(' is never closed")
	case !ok:
		return syntaxErr(0, ErrEmptyCheck, "the expression holds no check")
	case t.kind == tokRParen:
		return syntaxErr(t.off, ErrUnbalancedParenthesis, "')' has no matching '('")
	default:
		return syntaxErr(t.off, ErrDanglingOperator, "%q has no left operand", excerpt(t.text))
	}
}

// parseCheck mirrors oslo.policy's _parse_check, rejecting what it fails closed on.
func parseCheck(text string, off int) (Expr, error) {
	switch text {
	case "@":
		return &TrueCheck{Offset: off}, nil
	case "!":
		return &FalseCheck{Offset: off}, nil
	}
	if isQuoted(text) {
		return nil, syntaxErr(off, ErrMalformedCheck,
			"%s is a quoted string, not a check; oslo.policy denies the whole rule when no ')' follows it", excerpt(text))
	}
	kind, match, found := strings.Cut(text, ":")
	switch {
	case !found:
		return nil, syntaxErr(off, ErrMalformedCheck,
			"%q has no ':'; oslo.policy denies a check it cannot split into KIND:MATCH (write @ to allow, ! to deny)", excerpt(text))
	case kind == "":
		return nil, syntaxErr(off, ErrEmptyCheck, "%q has no KIND before ':'", excerpt(text))
	case match == "":
		return nil, syntaxErr(off, ErrEmptyCheck, "%q has nothing after ':'", excerpt(text))
	}
	matchOff := off + len(kind) + 1
	switch kind {
	case "rule":
		return &RuleCheck{Name: match, Offset: off}, nil
	case "role":
		if _, err := substitutions(match, matchOff); err != nil {
			return nil, err
		}
		return &RoleCheck{Name: match, Offset: off}, nil
	}
	if _, err := substitutions(match, matchOff); err != nil {
		return nil, err
	}
	lit, err := isLiteral(kind, off)
	if err != nil {
		return nil, err
	}
	if lit {
		return &LiteralCheck{Literal: kind, Match: match, Offset: off}, nil
	}
	return &GenericCheck{Kind: kind, Match: match, Offset: off}, nil
}

// isLiteral reports a KIND that Python's ast.literal_eval turns into a constant. A
// KIND that opens a quote it does not close would make literal_eval raise at
// enforcement time, so it is an error.
func isLiteral(kind string, off int) (bool, error) {
	switch kind {
	case "True", "False", "None":
		return true, nil
	}
	if q := kind[0]; q == '\'' || q == '"' {
		body := kind[1:]
		end := strings.IndexByte(body, q)
		if len(kind) < 2 || end != len(body)-1 || strings.ContainsRune(body, '\\') {
			return false, syntaxErr(off, ErrMalformedCheck,
				"kind %s is not a well-formed quoted literal (one pair of %c quotes, no backslash)", excerpt(kind), q)
		}
		return true, nil
	}
	if kind == "0" {
		return true, nil
	}
	if kind[0] < '1' || kind[0] > '9' {
		return false, nil
	}
	for i := 1; i < len(kind); i++ {
		if kind[i] < '0' || kind[i] > '9' {
			return false, nil
		}
	}
	return true, nil
}
