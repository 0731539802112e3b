package policy

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxErrors is the most problems [Validate] lists. A rule set with more problems
// yields the first MaxErrors of them, in Validate's order, followed by one summary
// error that counts them all.
const MaxErrors = 50

// maxCycleNames is the most rules a cycle error names; a longer cycle is shown by its
// first and last rules around " -> ... -> ".
const maxCycleNames = 8

// Validate checks every rule of rules and returns one field.Invalid per problem on
// fldPath.Key(<rule name>) (nil fldPath: field.NewPath("rules")), sorted by rule name and
// position: syntax errors, undefined rule:NAME references ([ErrUnknownRule]) and cycles
// ([ErrRuleCycle]) (the package documentation, "Validation"). Time, memory and output are
// bounded whatever the input ("Hostile input"). Validate a merged set ([Merge]).
func Validate(rules map[string]string, fldPath *field.Path) field.ErrorList {
	if fldPath == nil {
		fldPath = field.NewPath("rules")
	}
	names := slices.Sorted(maps.Keys(rules))
	index := make(map[string]int, len(names))
	for i, name := range names {
		index[name] = i
	}

	out := &collector{max: MaxErrors}
	refs := make([][]edge, len(names))
	for i, name := range names {
		expr := rules[name]
		if name == "" && out.wants(i, -1) {
			out.put(field.Invalid(ruleKey(fldPath, name), excerptAt(expr, 0), "rule name must not be empty"))
		}
		e, err := Parse(expr)
		if err != nil {
			var se *SyntaxError
			errors.As(err, &se)
			if out.wants(i, se.Offset) {
				out.put(field.Invalid(ruleKey(fldPath, name), excerptAt(expr, se.Offset), err.Error()))
			}
			continue
		}
		Inspect(e, func(n Expr) bool {
			ref, ok := n.(*RuleCheck)
			if !ok {
				return true
			}
			if to, ok := index[ref.Name]; ok {
				refs[i] = append(refs[i], edge{to: to, off: ref.Offset})
			} else if out.wants(i, ref.Offset) {
				out.put(field.Invalid(ruleKey(fldPath, name), excerptAt(expr, ref.Offset),
					syntaxErr(ref.Offset, ErrUnknownRule, "rule %q is not defined", excerpt(ref.Name)).Error()))
			}
			return true
		})
	}
	findCycles(names, refs, func(from int, ref edge, cycle []int, group int) {
		if out.wants(from, ref.off) {
			out.put(field.Invalid(ruleKey(fldPath, names[from]), excerptAt(rules[names[from]], ref.off),
				syntaxErr(ref.off, ErrRuleCycle, "%s", cycleText(names, cycle, group)).Error()))
		}
	})
	return out.list(fldPath)
}

// ruleKey is fldPath.Key(name), the name cut to MaxExcerpt bytes.
func ruleKey(fldPath *field.Path, name string) *field.Path {
	return fldPath.Key(excerpt(name))
}

// edge is a rule:NAME reference to the rule with index to, at byte off of the
// referencing rule's expression.
type edge struct {
	to, off int
}

// collector keeps the first max problems in (rule, offset, arrival) order and counts
// the rest. The caller asks wants before it builds an error, so a problem that will
// not be listed costs no text.
type collector struct {
	max   int
	kept  []problem
	total int
	// next is the problem wants was last asked about.
	next problem
}

// problem is a field error with the rule index, offset and arrival it is sorted by.
type problem struct {
	rule, offset, seq int
	err               *field.Error
}

func compareProblems(a, b problem) int {
	return cmp.Or(cmp.Compare(a.rule, b.rule), cmp.Compare(a.offset, b.offset), cmp.Compare(a.seq, b.seq))
}

// wants counts a problem of rule at offset and reports whether it is among the first
// max so far; if so the caller must put its error next.
func (c *collector) wants(rule, offset int) bool {
	c.total++
	c.next = problem{rule: rule, offset: offset, seq: c.total}
	return len(c.kept) < c.max || compareProblems(c.next, c.kept[len(c.kept)-1]) < 0
}

// put stores the error of the problem wants accepted, dropping the last kept one when
// there are more than max.
func (c *collector) put(err *field.Error) {
	p := c.next
	p.err = err
	i, _ := slices.BinarySearchFunc(c.kept, p, compareProblems)
	c.kept = slices.Insert(c.kept, i, p)
	if len(c.kept) > c.max {
		c.kept[c.max] = problem{}
		c.kept = c.kept[:c.max]
	}
}

// list returns the kept errors and, when problems were left out, the summary.
func (c *collector) list(fldPath *field.Path) field.ErrorList {
	list := make(field.ErrorList, 0, len(c.kept)+1)
	for _, p := range c.kept {
		list = append(list, p.err)
	}
	if more := c.total - len(c.kept); more > 0 {
		list = append(list, &field.Error{
			Type:     field.ErrorTypeTooMany,
			Field:    fldPath.String(),
			BadValue: c.total,
			Detail:   fmt.Sprintf("%d more problems are not listed; Validate lists the first %d", more, len(c.kept)),
		})
	}
	return list
}

// findCycles calls report once per group of rules that reference each other in a
// cycle (a strongly connected component with a cycle), with the reference from rule
// from that closes the first cycle a depth-first walk finds in the group (rules in
// index order, references in order), the cycle's rules from the referenced one to
// from, and the size of the group. It takes time linear in the number of rules and
// references and recurses on no stack but its own.
func findCycles(names []string, refs [][]edge, report func(from int, ref edge, cycle []int, group int)) {
	comp, size := components(refs)

	const (
		unvisited = iota
		onPath
		done
	)
	type frame struct{ rule, next int }
	var (
		state    = make([]uint8, len(names))
		pos      = make([]int, len(names))
		reported = make([]bool, len(size))
		path     []int
		stack    []frame
	)
	for root := range names {
		if state[root] != unvisited {
			continue
		}
		state[root], pos[root] = onPath, 0
		path = append(path[:0], root)
		stack = append(stack[:0], frame{rule: root})
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == len(refs[f.rule]) {
				state[f.rule] = done
				path = path[:len(path)-1]
				stack = stack[:len(stack)-1]
				continue
			}
			ref := refs[f.rule][f.next]
			f.next++
			switch state[ref.to] {
			case unvisited:
				state[ref.to], pos[ref.to] = onPath, len(path)
				path = append(path, ref.to)
				stack = append(stack, frame{rule: ref.to})
			case onPath:
				if c := comp[ref.to]; !reported[c] {
					reported[c] = true
					report(f.rule, ref, path[pos[ref.to]:], size[c])
				}
			}
		}
	}
}

// components labels the strongly connected components of the reference graph
// (Tarjan's algorithm, iterative) and returns each rule's component and each
// component's size.
func components(refs [][]edge) (comp, size []int) {
	n := len(refs)
	index := make([]int, n) // 0: unvisited; else the visit number + 1
	low := make([]int, n)
	onStack := make([]bool, n)
	comp = make([]int, n)
	var stack []int
	type frame struct{ rule, next int }
	var calls []frame
	visits := 0
	visit := func(v int) {
		visits++
		index[v], low[v] = visits, visits
		stack = append(stack, v)
		onStack[v] = true
		calls = append(calls, frame{rule: v})
	}
	for root := range n {
		if index[root] != 0 {
			continue
		}
		visit(root)
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.rule
			if f.next < len(refs[v]) {
				w := refs[v][f.next].to
				f.next++
				switch {
				case index[w] == 0:
					visit(w)
				case onStack[w]:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				parent := calls[len(calls)-1].rule
				low[parent] = min(low[parent], low[v])
			}
			if low[v] == index[v] {
				id, members := len(size), 0
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = id
					members++
					if w == v {
						break
					}
				}
				size = append(size, members)
			}
		}
	}
	return comp, size
}

// cycleText renders a cycle "a -> b -> c -> a", naming at most maxCycleNames rules,
// and says how long it is and how many rules its group holds when it cannot be read
// off the text.
func cycleText(names []string, cycle []int, group int) string {
	var b strings.Builder
	for i, rule := range cycle {
		if len(cycle) > maxCycleNames && i >= 4 && i < len(cycle)-3 {
			if i == 4 {
				b.WriteString("... -> ")
			}
			continue
		}
		b.WriteString(excerpt(names[rule]))
		b.WriteString(" -> ")
	}
	b.WriteString(excerpt(names[cycle[0]]))
	var notes []string
	if len(cycle) > maxCycleNames {
		notes = append(notes, fmt.Sprintf("a cycle of %d rules", len(cycle)))
	}
	if group > len(cycle) {
		notes = append(notes, fmt.Sprintf("%d rules reference each other in cycles", group))
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, "; ") + ")")
	}
	return b.String()
}
