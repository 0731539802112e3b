package policy

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// PolicyKey is the ConfigMap data key that holds the oslo.policy rules.
const PolicyKey = "policy.yaml"

// MaxParserMessage is the most bytes of the YAML parser's message that an error of
// [LoadPolicyFromConfigMap] quotes; a longer message is cut and marked with "…".
const MaxParserMessage = 512

// LoadPolicyFromConfigMap reads the ConfigMap key (namespace/name) and returns the rules
// of its policy.yaml data key, action name to rule expression, without validating them
// ([Validate]). A missing key wraps [ErrPolicyKeyMissing], a document that is not a YAML
// mapping of strings [ErrInvalidPolicyYAML], with bounded quotes (the package
// documentation, "Loading" and "Hostile input").
func LoadPolicyFromConfigMap(
	ctx context.Context,
	c client.Client,
	key client.ObjectKey,
) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, key, cm); err != nil {
		return nil, fmt.Errorf("getting ConfigMap %s: %w", key, err)
	}
	raw, ok := cm.Data[PolicyKey]
	if !ok {
		return nil, &missingKeyError{key: key}
	}
	var doc map[string]any
	if err := yaml.UnmarshalStrict([]byte(raw), &doc); err != nil {
		return nil, &parseError{key: key, err: err}
	}
	rules := make(map[string]string, len(doc))
	for _, name := range slices.Sorted(maps.Keys(doc)) {
		switch v := doc[name].(type) {
		case string:
			rules[name] = v
		case nil:
			rules[name] = ""
		default:
			return nil, &parseError{key: key, msg: fmt.Sprintf(
				"rule %q has a %s value, not a string (quote the expression)", excerpt(name), yamlType(v))}
		}
	}
	return rules, nil
}

// yamlType names the YAML type sigs.k8s.io/yaml decoded v from.
func yamlType(v any) string {
	switch v.(type) {
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "sequence"
	case map[string]any:
		return "mapping"
	}
	return fmt.Sprintf("%T", v)
}

// missingKeyError is the "ConfigMap <key> does not contain key" error.
type missingKeyError struct {
	key client.ObjectKey
}

func (e *missingKeyError) Error() string {
	return fmt.Sprintf("ConfigMap %s does not contain key %q", e.key, PolicyKey)
}

func (e *missingKeyError) Unwrap() error { return ErrPolicyKeyMissing }

// parseError is the "parsing policy.yaml from ConfigMap <key>" error.
// err is the YAML parser's error; msg replaces it when the YAML parsed but does not
// hold rules.
type parseError struct {
	key client.ObjectKey
	err error
	msg string
}

func (e *parseError) Error() string {
	msg := e.msg
	if e.err != nil {
		msg = window(e.err.Error(), 0, MaxParserMessage)
	}
	return fmt.Sprintf("parsing %s from ConfigMap %s: %s", PolicyKey, e.key, msg)
}

func (e *parseError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrInvalidPolicyYAML}
	}
	return []error{ErrInvalidPolicyYAML, e.err}
}
