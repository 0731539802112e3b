package katalog

import (
	"cmp"
	"errors"
	"regexp"
	"slices"
	"strconv"
)

// Sentinels for errors.Is. Every error Load, Parse and LoadAll return is a *LoadError (or
// several joined with errors.Join) whose Err wraps exactly one of these.
var (
	// ErrRead: the file could not be read.
	ErrRead = errors.New("cannot read Katalog")
	// ErrSyntax: the text is not YAML, or holds no or several YAML documents.
	ErrSyntax = errors.New("invalid YAML")
	// ErrUnknownField: a key that the Katalog format does not define. A misspelt field is
	// refused rather than ignored, so that a typo never silently changes what the operator does.
	ErrUnknownField = errors.New("unknown field")
	// ErrDuplicateKey: the same key appears twice in one YAML mapping.
	ErrDuplicateKey = errors.New("duplicate key")
	// ErrInvalidValue: a value of the wrong YAML type, or outside the values a field accepts.
	ErrInvalidValue = errors.New("invalid value")
	// ErrMissingField: a required field is absent or empty.
	ErrMissingField = errors.New("missing required field")
	// ErrProviderBlock: a provider block (aws, mongodb, git, docker). This engine reconciles
	// Kubernetes objects only; a Katalog that relies on a provider would otherwise run with
	// part of its behaviour silently missing.
	ErrProviderBlock = errors.New("provider block not supported")
	// ErrTemplate: a template string that Go text/template cannot parse with the Katalog
	// function map (a syntax error or an undefined function).
	ErrTemplate = errors.New("invalid template")
	// ErrUnknownOperator: a when, anyOf or validation condition with an operator outside
	// the Operators list, or with none, or with more than one.
	ErrUnknownOperator = errors.New("unknown operator")
	// ErrDependencyCycle: dependsOn edges that form a cycle; no start order exists.
	ErrDependencyCycle = errors.New("dependsOn cycle")
	// ErrUnknownDependency: dependsOn names a CRD that is not in the Katalog, or is disabled.
	ErrUnknownDependency = errors.New("unknown dependency")
	// ErrUnknownCrossRef: a cross reference names a CRD that is not in the Katalog, or is
	// disabled.
	ErrUnknownCrossRef = errors.New("unknown cross reference")
	// ErrDuplicateResource: two declarations of the same kind in one CRD resolve to the
	// same object name for every custom resource, so they would overwrite each other.
	ErrDuplicateResource = errors.New("duplicate resource name")
	// ErrDuplicateName: two cross aliases, or two external calls in one group, share a name,
	// so templates could not tell their results apart.
	ErrDuplicateName = errors.New("duplicate name")
	// ErrDuplicateCRD: LoadAll found the same CRD name in two Katalogs.
	ErrDuplicateCRD = errors.New("duplicate CRD")
)

// LoadError is one problem found while loading a Katalog: the file, the YAML path of the
// offending value (for example spec.crds.application.operatorBox.onCreate.deployments[0].foo),
// its line (1-based; 0 when the problem has no position, such as an unreadable file) and
// the cause, which wraps one of the exported sentinels.
type LoadError struct {
	File string
	Path string
	Line int
	Err  error
}

// Error renders the problem as "file:line: path: cause", leaving out the parts that are unset.
func (e *LoadError) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Path != "" {
		s += ": " + e.Path
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the cause, so that errors.Is matches the sentinel it wraps.
func (e *LoadError) Unwrap() error { return e.Err }

// errList collects LoadErrors in the order they are found.
type errList []*LoadError

func (l *errList) add(file, path string, line int, err error) {
	*l = append(*l, &LoadError{File: file, Path: path, Line: line, Err: err})
}

// join sorts the errors by file, line and path, drops exact repeats, and joins them; nil
// when there are none.
func (l errList) join() error {
	if len(l) == 0 {
		return nil
	}
	sorted := slices.Clone(l)
	slices.SortStableFunc(sorted, func(a, b *LoadError) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Path, b.Path))
	})
	errs := make([]error, 0, len(sorted))
	var last string
	for _, e := range sorted {
		if msg := e.Error(); msg != last {
			errs = append(errs, e)
			last = msg
		}
	}
	return errors.Join(errs...)
}

// LoadErrors returns every *LoadError in err (one, or several joined with errors.Join), in
// the order they are reported. Use it to show each problem on its own line or to inspect them.
func LoadErrors(err error) []*LoadError {
	var out []*LoadError
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if le, ok := err.(*LoadError); ok { //nolint:errorlint // the walk unwraps joins itself
			out = append(out, le)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok { //nolint:errorlint // as above
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var le *LoadError
		if errors.As(err, &le) {
			out = append(out, le)
		}
	}
	walk(err)
	return out
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// syntaxLine extracts the line number a YAML parser error names, or 0.
func syntaxLine(err error) int {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
