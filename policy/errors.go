package policy

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxExcerpt is the most bytes of user text (a rule name, a token, a rule expression)
// that an error of this package quotes. Longer text is cut at a UTF-8 boundary to at
// most MaxExcerpt bytes, and each cut is marked with "…", so that a hostile policy
// cannot make an error, or the status condition it ends up in, grow with its input.
const MaxExcerpt = 100

// Sentinel errors, for errors.Is. A [*SyntaxError] unwraps to exactly one of the
// syntax sentinels; [LoadPolicyFromConfigMap] errors unwrap to [ErrPolicyKeyMissing]
// or [ErrInvalidPolicyYAML] besides their cause.
var (
	// ErrPolicyKeyMissing reports a ConfigMap without the policy.yaml key.
	ErrPolicyKeyMissing = errors.New(`ConfigMap does not contain key "policy.yaml"`)
	// ErrInvalidPolicyYAML reports a policy.yaml that is not a YAML mapping of rule
	// names to rule expressions.
	ErrInvalidPolicyYAML = errors.New("invalid policy.yaml")
	// ErrInvalidRule reports a rule set that [Render] cannot write, such as a rule name
	// or expression that is not valid UTF-8.
	ErrInvalidRule = errors.New("invalid policy rule")

	// ErrUnbalancedParenthesis reports a '(' that is never closed or a ')' without a
	// matching '('.
	ErrUnbalancedParenthesis = errors.New("unbalanced parenthesis")
	// ErrDanglingOperator reports an and, or or not that lacks an operand.
	ErrDanglingOperator = errors.New("dangling operator")
	// ErrMissingOperator reports two operands that follow each other without an and
	// or or between them.
	ErrMissingOperator = errors.New("missing operator")
	// ErrEmptyCheck reports a check with nothing to check: "role:", ":x", "()", or an
	// expression made only of whitespace.
	ErrEmptyCheck = errors.New("empty check")
	// ErrMalformedCheck reports a token that oslo.policy cannot turn into a check: a
	// word without ':' (oslo.policy fails closed on it), a whole-token quoted string,
	// or a quoted literal kind that is never closed.
	ErrMalformedCheck = errors.New("malformed check")

	// ErrUnknownRule reports a rule:NAME reference to a rule the rule set does not
	// define; oslo.policy denies such a check.
	ErrUnknownRule = errors.New("unknown rule reference")
	// ErrRuleCycle reports rules that reference each other in a cycle; oslo.policy
	// recurses without end when it evaluates one of them.
	ErrRuleCycle = errors.New("rule reference cycle")
)

// SyntaxError is the error [Parse] returns for an expression it cannot accept. Offset
// is the byte offset, in the parsed expression, of the token at fault.
type SyntaxError struct {
	// Offset is the byte offset of the offending token.
	Offset int
	// Err is one of the syntax sentinels (ErrUnbalancedParenthesis, ...).
	Err error
	// Detail says what is wrong with the token, in words.
	Detail string
}

// Error implements error: "at byte <offset>: <sentinel>: <detail>".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("at byte %d: %v: %s", e.Offset, e.Err, e.Detail)
}

// Unwrap returns the sentinel, so errors.Is(err, ErrUnbalancedParenthesis) works.
func (e *SyntaxError) Unwrap() error { return e.Err }

func syntaxErr(offset int, sentinel error, format string, args ...any) *SyntaxError {
	return &SyntaxError{Offset: offset, Err: sentinel, Detail: fmt.Sprintf(format, args...)}
}

// excerpt returns s, or its first MaxExcerpt bytes followed by "…" when s is longer.
func excerpt(s string) string {
	return excerptAt(s, 0)
}

// excerptAt returns s, or, when s is longer than MaxExcerpt bytes, a window of at most
// MaxExcerpt bytes around byte offset off (see window).
func excerptAt(s string, off int) string {
	return window(s, off, MaxExcerpt)
}

// window returns s, or, when s is longer than limit bytes, a window of at most limit
// bytes that holds byte offset off a quarter of the way in, "…" marking each side
// that was cut. Cuts fall on UTF-8 boundaries.
func window(s string, off, limit int) string {
	if len(s) <= limit {
		return s
	}
	start := min(max(off-limit/4, 0), len(s)-limit)
	end := start + limit
	for start > 0 && start < end && !utf8.RuneStart(s[start]) {
		start++
	}
	for end < len(s) && end > start && !utf8.RuneStart(s[end]) {
		end--
	}
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}
