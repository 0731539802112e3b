package katalog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
)

// Template is a string field of a Katalog that may hold Go text/template actions, such
// as "{{ .metadata.name }}-credentials". The loader parses it with FuncMap, so a Template
// of a loaded Katalog is known to parse; executing it renders against the data of one
// reconcile (.metadata, .spec, .status, .cross, .external, .children, forEach's element).
// A printed value that is missing (a key absent from a map) renders as nothing rather
// than "<no value>".
type Template struct {
	// Text is the template source as written.
	Text string

	tmpl *template.Template
	// static is the name with every {{ .metadata.name }} replaced by metadataNameMarker, when
	// the text holds no other action; see StaticName.
	static   string
	isStatic bool
}

// metadataNameMarker stands for the custom resource's name in a static name.
const metadataNameMarker = "\x00metadata.name\x00"

// NewTemplate parses text with FuncMap. The error wraps ErrTemplate.
func NewTemplate(text string) (Template, error) {
	t := Template{Text: text}
	tmpl, err := template.New("").Funcs(FuncMap()).Parse(text)
	if err != nil {
		te := &templateError{line: 1, msg: err.Error()}
		if m := templateErrorPrefix.FindStringSubmatch(te.msg); m != nil {
			te.line, _ = strconv.Atoi(m[1])
			te.msg = te.msg[len(m[0]):]
		}
		return Template{Text: text}, te
	}
	t.static, t.isStatic = staticText(tmpl.Root)
	for _, defined := range tmpl.Templates() {
		if defined.Tree != nil {
			printEmptyForNil(defined.Root)
		}
	}
	t.tmpl = tmpl
	return t, nil
}

var templateErrorPrefix = regexp.MustCompile(`^template: :(\d+):(\d+:)?\s*`)

// templateError is a parse error of a template: its line within the template text (1 for a
// one-line template) and text/template's explanation.
type templateError struct {
	line int
	msg  string
}

func (e *templateError) Error() string { return ErrTemplate.Error() + ": " + e.msg }

func (e *templateError) Unwrap() error { return ErrTemplate }

// MustTemplate is NewTemplate for texts known to parse; it panics otherwise.
func MustTemplate(text string) Template {
	t, err := NewTemplate(text)
	if err != nil {
		panic(err)
	}
	return t
}

// String returns Text.
func (t Template) String() string { return t.Text }

// IsZero reports whether the field was left out (its text is empty).
func (t Template) IsZero() bool { return t.Text == "" }

// IsLiteral reports whether the text holds no action, so it renders to itself.
func (t Template) IsLiteral() bool { return !strings.Contains(t.Text, "{{") }

// StaticName reports, for a name template, the name it renders to for a custom resource
// called crName, when that is knowable without the custom resource's data: the text is
// literal, or its only actions are {{ .metadata.name }}. ok is false otherwise.
func (t Template) StaticName(crName string) (name string, ok bool) {
	if !t.isStatic {
		if t.tmpl == nil && t.IsLiteral() {
			return t.Text, true
		}
		return "", false
	}
	return strings.ReplaceAll(t.static, metadataNameMarker, crName), true
}

// Execute renders the template against data. An empty Template renders to "".
func (t Template) Execute(data any) (string, error) {
	if t.Text == "" {
		return "", nil
	}
	tmpl := t.tmpl
	if tmpl == nil { // built in Go rather than loaded
		parsed, err := NewTemplate(t.Text)
		if err != nil {
			return "", err
		}
		tmpl = parsed.tmpl
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("rendering %q: %w", t.Text, err)
	}
	return b.String(), nil
}

// staticText returns the text of a tree made only of text and {{ .metadata.name }}
// actions, with each action replaced by metadataNameMarker.
func staticText(root *parse.ListNode) (string, bool) {
	if root == nil {
		return "", true
	}
	var b strings.Builder
	for _, n := range root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			b.Write(n.Text)
		case *parse.ActionNode:
			if !isMetadataName(n.Pipe) {
				return "", false
			}
			b.WriteString(metadataNameMarker)
		default:
			return "", false
		}
	}
	return b.String(), true
}

func isMetadataName(p *parse.PipeNode) bool {
	if p == nil || len(p.Decl) > 0 || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return false
	}
	f, ok := p.Cmds[0].Args[0].(*parse.FieldNode)
	return ok && len(f.Ident) == 2 && f.Ident[0] == "metadata" && f.Ident[1] == "name"
}

// printEmptyForNil appends "| orEmpty" to every action that prints, so that a nil value
// (a missing map key) renders as "" rather than text/template's "<no value>".
func printEmptyForNil(n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			printEmptyForNil(c)
		}
	case *parse.ActionNode:
		if n.Pipe != nil && len(n.Pipe.Decl) == 0 {
			n.Pipe.Cmds = append(n.Pipe.Cmds, &parse.CommandNode{
				NodeType: parse.NodeCommand,
				Pos:      n.Pos,
				Args:     []parse.Node{parse.NewIdentifier("orEmpty").SetPos(n.Pos)},
			})
		}
	case *parse.IfNode:
		printEmptyForNil(n.List)
		printEmptyForNil(n.ElseList)
	case *parse.RangeNode:
		printEmptyForNil(n.List)
		printEmptyForNil(n.ElseList)
	case *parse.WithNode:
		printEmptyForNil(n.List)
		printEmptyForNil(n.ElseList)
	}
}

// Duration is a Go duration written as a string, such as 30s or 1m30s.
type Duration struct {
	time.Duration
}

// String renders the duration the way it is written in a Katalog.
func (d Duration) String() string { return d.Duration.String() }
