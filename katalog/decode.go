package katalog

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// nodeBudget bounds the YAML nodes one file may expand to (aliases included), so that an
// alias bomb fails with an error instead of exhausting memory.
const nodeBudget = 200000

// maxDepth bounds how deeply values nest (a Katalog needs about 12 levels), so that a
// self-referencing alias fails fast.
const maxDepth = 48

var (
	templateType  = reflect.TypeFor[Template]()
	durationType  = reflect.TypeFor[Duration]()
	conditionType = reflect.TypeFor[Condition]()
)

// decoder decodes a YAML node tree into the Katalog types strictly: every key must name a
// field, every value must have the field's type. It keeps going after a problem, so that
// one load reports every problem, and records the line of every YAML path it decodes.
type decoder struct {
	file   string
	errs   *errList
	lines  map[string]int
	budget int
	depth  int
	// aliasLine, while decoding the target of an alias, is the alias's line: problems in
	// aliased content are reported where the alias is used.
	aliasLine int
}

// at returns the line to report for n.
func (d *decoder) at(n *yaml.Node) int {
	if d.aliasLine > 0 {
		return d.aliasLine
	}
	return n.Line
}

func (d *decoder) fail(path string, line int, err error) { d.errs.add(d.file, path, line, err) }

// joinKey appends a mapping key to a YAML path: a.b, or a["b.c"] for keys that would be
// ambiguous in dot notation.
func joinKey(path, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\"' \t\r\n") {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func joinIndex(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// describe names what a node holds, for "expected X, got Y" errors.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return "the string " + strconv.Quote(n.Value)
		case "!!null":
			return "null"
		default:
			return strconv.Quote(n.Value)
		}
	}
	return "an unsupported YAML node"
}

func (d *decoder) typeError(path string, n *yaml.Node, want string) {
	d.fail(path, d.at(n), fmt.Errorf("%w: expected %s, got %s", ErrInvalidValue, want, describe(n)))
}

// decode decodes n into v. path is the YAML path of the value and line the line that names
// it (its key's line inside a mapping).
func (d *decoder) decode(n *yaml.Node, path string, line int, v reflect.Value) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		if d.aliasLine == 0 {
			d.aliasLine = n.Line
			defer func() { d.aliasLine = 0 }()
		}
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
	}
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		if d.budget > 0 {
			d.fail(path[:min(len(path), 200)], line, fmt.Errorf("%w: values nest deeper than %d levels", ErrSyntax, maxDepth))
			d.budget = -1 // stop decoding: the rest of this document is not worth reporting on
		}
		return
	}
	d.budget--
	if d.budget == 0 {
		d.fail(path, line, fmt.Errorf("%w: the YAML document expands to more than %d nodes", ErrSyntax, nodeBudget))
	}
	if d.budget <= 0 {
		return
	}
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = line
	}
	t := v.Type()
	switch t {
	case templateType:
		d.decodeTemplate(n, path, v.Addr().Interface().(*Template))
		return
	case durationType:
		d.decodeDuration(n, path, v.Addr().Interface().(*Duration))
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		d.decode(n, path, line, v.Elem())
	case reflect.Struct:
		d.decodeStruct(n, path, v)
	case reflect.Map:
		d.decodeMap(n, path, v)
	case reflect.Slice:
		d.decodeSlice(n, path, v)
	case reflect.String:
		switch {
		case isNull(n):
		case n.Kind == yaml.ScalarNode:
			v.SetString(n.Value)
		default:
			d.typeError(path, n, "a string")
		}
	case reflect.Int:
		if isNull(n) {
			return
		}
		var i int
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&i) != nil {
			d.typeError(path, n, "an integer")
			return
		}
		v.SetInt(int64(i))
	case reflect.Bool:
		if isNull(n) {
			return
		}
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.typeError(path, n, "true or false")
			return
		}
		v.SetBool(b)
	case reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			d.fail(path, d.at(n), fmt.Errorf("%w: %s", ErrInvalidValue, strings.TrimPrefix(err.Error(), "yaml: ")))
			return
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
	default:
		panic(fmt.Sprintf("katalog: no YAML decoding for %s", t))
	}
}

func (d *decoder) decodeTemplate(n *yaml.Node, path string, t *Template) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.ScalarNode {
		d.typeError(path, n, "a string")
		return
	}
	parsed, err := NewTemplate(n.Value)
	if err != nil {
		line := d.at(n)
		var te *templateError
		if errors.As(err, &te) && d.aliasLine == 0 {
			line += te.line - 1
			if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				line++ // block scalar text starts below its indicator
			}
		}
		d.fail(path, line, err)
	}
	*t = parsed
}

func (d *decoder) decodeDuration(n *yaml.Node, path string, out *Duration) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.typeError(path, n, "a duration such as 30s")
		return
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil || dur < 0 {
		d.fail(path, d.at(n), fmt.Errorf("%w: %q is not a non-negative duration such as 30s or 1m30s", ErrInvalidValue, n.Value))
		return
	}
	out.Duration = dur
}

// structField is a field a YAML key decodes into: its index path (through inline
// embedded structs).
type structField struct {
	index []int
}

// fieldsOf maps each YAML key of a struct type to its field, following ",inline" embeds,
// and returns the index of an inline Condition, if any.
func fieldsOf(t reflect.Type) (fields map[string]structField, condIndex []int) {
	fields = map[string]structField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if opts == "inline" {
			if f.Type == conditionType {
				condIndex = []int{i}
			}
			inner, innerCond := fieldsOf(f.Type)
			for k, sf := range inner {
				fields[k] = structField{index: append([]int{i}, sf.index...)}
			}
			if innerCond != nil {
				condIndex = append([]int{i}, innerCond...)
			}
			continue
		}
		fields[name] = structField{index: []int{i}}
	}
	return fields, condIndex
}

func (d *decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.typeError(path, n, "a mapping")
		return
	}
	fields, condIndex := fieldsOf(v.Type())
	var cond *Condition
	switch {
	case v.Type() == conditionType:
		cond = v.Addr().Interface().(*Condition)
	case condIndex != nil:
		cond = v.FieldByIndex(condIndex).Addr().Interface().(*Condition)
	}
	seen := map[string]int{}
	operatorKeys, unknownOperators := 0, 0
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key, ok := d.mappingKey(k, path, seen)
		if !ok {
			continue
		}
		kp := joinKey(path, key)
		if cond != nil && (key == "operator" || Operator(key).Known()) {
			operatorKeys++
			if operatorKeys > 1 {
				d.fail(kp, d.at(k), fmt.Errorf("%w: a condition takes exactly one operator, %q is a second one", ErrUnknownOperator, key))
				continue
			}
		}
		if f, ok := fields[key]; ok {
			d.decode(val, kp, d.at(k), v.FieldByIndex(f.index))
			continue
		}
		switch {
		case cond != nil:
			unknownOperators++ // reported here, not again as a missing operator
			d.decodeOperatorKey(cond, key, val, kp, d.at(k))
		case slices.Contains(ProviderBlocks, key):
			d.fail(kp, d.at(k), fmt.Errorf("%w: %q calls services outside the cluster; this engine reconciles Kubernetes objects only, so remove the %s block or run this Katalog on an engine that provides it", ErrProviderBlock, key, key))
		default:
			d.fail(kp, d.at(k), fmt.Errorf("%w %q", ErrUnknownField, key))
		}
	}
	if cond != nil {
		d.checkCondition(cond, path, n, seen, operatorKeys+unknownOperators)
	}
}

// mappingKey returns a mapping key's text, reporting keys that are not plain strings,
// merge keys and repeated keys.
func (d *decoder) mappingKey(k *yaml.Node, path string, seen map[string]int) (string, bool) {
	if k.Kind != yaml.ScalarNode {
		d.fail(path, d.at(k), fmt.Errorf("%w: a mapping key must be a string, got %s", ErrInvalidValue, describe(k)))
		return "", false
	}
	if k.ShortTag() == "!!merge" {
		d.fail(joinKey(path, k.Value), d.at(k), fmt.Errorf("%w: merge keys (<<) are not supported; repeat the fields or use an alias as the whole value", ErrUnknownField))
		return "", false
	}
	if first, dup := seen[k.Value]; dup {
		d.fail(joinKey(path, k.Value), d.at(k), fmt.Errorf("%w %q: already set on line %d", ErrDuplicateKey, k.Value, first))
		return "", false
	}
	seen[k.Value] = d.at(k)
	return k.Value, true
}

// decodeOperatorKey decodes a condition key that is not field, operator or value: the
// shorthand form of an operator (equals: "200", exists: true).
func (d *decoder) decodeOperatorKey(c *Condition, key string, val *yaml.Node, path string, line int) {
	op := Operator(key)
	if !op.Known() {
		d.fail(path, line, fmt.Errorf("%w %q; the operators are %s", ErrUnknownOperator, key, operatorList()))
		return
	}
	d.lines[path] = line
	c.Operator = op
	if op.takesValue() {
		d.decodeTemplate(val, path, &c.Value)
		return
	}
	var b bool
	if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!bool" || val.Decode(&b) != nil || !b {
		d.fail(path, d.at(val), fmt.Errorf("%w: %s takes true (use %s for the opposite), got %s", ErrInvalidValue, op, opposite(op), describe(val)))
	}
}

func opposite(op Operator) Operator {
	if op == OpExists {
		return OpNotExists
	}
	return OpExists
}

func operatorList() string {
	names := make([]string, len(Operators))
	for i, o := range Operators {
		names[i] = string(o)
	}
	return strings.Join(names, ", ")
}

// checkCondition reports a condition without field or operator, an unknown operator: value,
// and a value given to exists or notExists.
func (d *decoder) checkCondition(c *Condition, path string, n *yaml.Node, seen map[string]int, operatorKeys int) {
	if c.Field.IsZero() {
		d.fail(joinKey(path, "field"), d.at(n), fmt.Errorf("%w: field", ErrMissingField))
	}
	switch {
	case c.Operator == "" && operatorKeys == 0:
		d.fail(path, d.at(n), fmt.Errorf("%w: the condition has no operator; use one of %s", ErrUnknownOperator, operatorList()))
	case c.Operator == "":
	case !c.Operator.Known():
		d.fail(joinKey(path, "operator"), seen["operator"], fmt.Errorf("%w %q; the operators are %s", ErrUnknownOperator, c.Operator, operatorList()))
	case !c.Operator.takesValue() && !c.Value.IsZero():
		d.fail(joinKey(path, "value"), seen["value"], fmt.Errorf("%w: %s takes no value", ErrInvalidValue, c.Operator))
	}
	if _, long := seen["value"]; long && seen["operator"] == 0 {
		d.fail(joinKey(path, "value"), seen["value"], fmt.Errorf("%w: value needs operator", ErrMissingField))
	}
}

func (d *decoder) decodeMap(n *yaml.Node, path string, v reflect.Value) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.typeError(path, n, "a mapping")
		return
	}
	t := v.Type()
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(t, len(n.Content)/2))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key, ok := d.mappingKey(k, path, seen)
		if !ok {
			continue
		}
		elem := reflect.New(t.Elem()).Elem()
		d.decode(val, joinKey(path, key), d.at(k), elem)
		v.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), elem)
	}
}

func (d *decoder) decodeSlice(n *yaml.Node, path string, v reflect.Value) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.typeError(path, n, "a list")
		return
	}
	t := v.Type()
	out := reflect.MakeSlice(t, 0, len(n.Content))
	for i, item := range n.Content {
		elem := reflect.New(t.Elem()).Elem()
		d.decode(item, joinIndex(path, i), d.at(item), elem)
		out = reflect.Append(out, elem)
	}
	v.Set(out)
}
