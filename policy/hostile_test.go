package policy_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/reconciler-sdk/policy"
)

// hostileSize is the size of the policy.yaml hostilePolicy generates: the most a
// ConfigMap can hold.
const hostileSize = 1 << 20

// The bounds Validate keeps on hostilePolicy, as policy/doc.go states them.
const (
	// hostileMaxErrors is MaxErrors problems plus the summary of the rest.
	hostileMaxErrors = policy.MaxErrors + 1
	// hostileMaxErrorBytes bounds the text of one error (field, value and detail).
	hostileMaxErrorBytes = 2 << 10
	// hostileMaxTextBytes bounds the text of all errors together.
	hostileMaxTextBytes = 64 << 10
	// hostileMaxAlloc bounds what one Validate of the 1 MiB policy allocates.
	hostileMaxAlloc = 64 << 20
)

// hostilePolicy returns a rule set whose policy.yaml ([policy.Render]) is just under
// hostileSize bytes and that is built to make a validator spend: a web of 4000
// rules with a deep reference chain and two back edges per rule (thousands of
// cycles, each as long as the chain), single rules that are one huge token (an
// opening or closing parenthesis bomb, a word without ':', a 32 KiB rule name, a
// 32 KiB undefined reference, a 16 KiB substitution key), and, filling the rest,
// rules of about 2 KiB made only of references to undefined rules.
func hostilePolicy(tb testing.TB) map[string]string {
	tb.Helper()
	rules := map[string]string{}
	size := 0
	add := func(name, expr string) {
		rules[name] = expr
		size += len(name) + len(expr) + len(`"": ""`+"\n")
	}

	const web = 4000
	for i := range web {
		next := fmt.Sprintf("rule:c%04d or ", i+1)
		if i == web-1 {
			next = ""
		}
		add(fmt.Sprintf("c%04d", i), fmt.Sprintf("%srule:c0000 or rule:c%04d", next, i/2))
	}

	add("paren-bomb", strings.Repeat("(", 32<<10)+"role:a")
	add("close-bomb", "role:a"+strings.Repeat(")", 32<<10))
	add("long-word", strings.Repeat("w", 32<<10))
	add(strings.Repeat("n", 32<<10), "rule:undefined-from-a-long-name")
	add("long-reference", "role:a or rule:"+strings.Repeat("r", 32<<10))
	add("long-key", "project_id:%("+strings.Repeat("k", 16<<10)+")")

	var expr strings.Builder
	for u := 0; ; u++ {
		name := fmt.Sprintf("u%05d", u)
		expr.Reset()
		for x := 0; expr.Len() < 2<<10; x++ {
			if x > 0 {
				expr.WriteString(" or ")
			}
			fmt.Fprintf(&expr, "rule:x%05d", u*200+x)
		}
		if size+len(name)+expr.Len()+7 > hostileSize {
			break
		}
		add(name, expr.String())
	}

	doc, err := policy.Render(rules)
	if err != nil {
		tb.Fatal(err)
	}
	if len(doc) > hostileSize || len(doc) < hostileSize-4<<10 {
		tb.Fatalf("hostile policy.yaml is %d bytes, want just under %d", len(doc), hostileSize)
	}
	return rules
}

// TestValidateBoundsHostilePolicy validates a 1 MiB policy made to exhaust memory
// (hostilePolicy) and checks that the number of errors, their text, and what
// Validate allocates stay under the stated bounds, and that the problems the summary
// leaves out are counted.
func TestValidateBoundsHostilePolicy(t *testing.T) {
	rules := hostilePolicy(t)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	errs := policy.Validate(rules, nil)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("Validate of %d rules: %d errors, %d MiB allocated", len(rules), len(errs), alloc>>20)

	if len(errs) > hostileMaxErrors {
		t.Errorf("Validate returned %d errors, want at most %d", len(errs), hostileMaxErrors)
	}
	if alloc > hostileMaxAlloc {
		t.Errorf("Validate allocated %d MiB, want at most %d MiB", alloc>>20, hostileMaxAlloc>>20)
	}
	total, oversized := 0, 0
	for i, e := range errs {
		n := len(e.Error())
		total += n
		if n > hostileMaxErrorBytes {
			if oversized++; oversized == 1 {
				t.Errorf("error %d is %d bytes, want at most %d: %.300s...", i, n, hostileMaxErrorBytes, e.Error())
			}
		}
		if total > 16*hostileMaxTextBytes {
			t.Errorf("stopped measuring at error %d of %d", i, len(errs))
			break
		}
	}
	if oversized > 1 {
		t.Errorf("%d errors are longer than %d bytes", oversized, hostileMaxErrorBytes)
	}
	if total > hostileMaxTextBytes {
		t.Errorf("the errors hold %d bytes of text, want at most %d", total, hostileMaxTextBytes)
	}
	if t.Failed() {
		return
	}

	last := errs[len(errs)-1]
	if last.Type != field.ErrorTypeTooMany || last.Field != "rules" {
		t.Fatalf("last error = %v, want the summary of the problems left out", last)
	}
	// 4000 cycle-web rules hold one cycle group; every u rule holds about 135
	// undefined references.
	if n, ok := last.BadValue.(int); !ok || n < 30_000 {
		t.Errorf("summary counts %v problems in all, want the undefined references counted (over 30000)", last.BadValue)
	}
	var cycles int
	for _, e := range errs {
		if strings.Contains(e.Detail, policy.ErrRuleCycle.Error()) {
			cycles++
		}
	}
	// The first errors, sorted by rule, are the cycle web's c rules: one cycle group.
	if cycles != 1 {
		t.Errorf("%d cycle errors among the first %d, want the cycle web reported once", cycles, len(errs)-1)
	}
}

// TestParseReadsOnlyWhatItNeeds: a 1 MiB word of parentheses fails after MaxDepth
// tokens, so Parse allocates a small, fixed amount, not a token per byte.
func TestParseReadsOnlyWhatItNeeds(t *testing.T) {
	for name, expr := range map[string]string{
		"opening":        strings.Repeat("(", hostileSize) + "role:a",
		"closing":        "role:a" + strings.Repeat(")", hostileSize),
		"not":            strings.Repeat("not ", hostileSize/4) + "role:a",
		"word without :": strings.Repeat("w", hostileSize),
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := policy.Parse(expr)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("Parse accepted the text")
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
				t.Errorf("Parse allocated %d KiB, want at most 1 MiB", alloc>>10)
			}
			if n := len(err.Error()); n > 512 {
				t.Errorf("error is %d bytes, want at most 512", n)
			}
		})
	}
}
