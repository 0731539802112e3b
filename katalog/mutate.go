package katalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// mutate applies the mutation defaults: when a rule's field is absent or empty, the
// custom resource is patched with Server-Side Apply under the engine's field manager.
// The applied body holds the missing fields with their defaults and the rule fields the
// field manager already owns with their current values, so that a later apply never
// drops a default written earlier, and fields others set are never claimed. cr and d are
// updated in place so the rest of the pass sees the defaults.
func (r *crdReconciler) mutate(ctx context.Context, cr *unstructured.Unstructured, d passData) error {
	m := r.crd.Mutation
	if m == nil || len(m.Rules) == 0 {
		return nil
	}
	owned := ownedFields(cr, r.engine.opts.FieldManager)
	body := map[string]any{}
	missing := false
	for _, rule := range m.Rules {
		cur, present := lookup(cr.Object, rule.Field)
		if present && !isEmpty(cur) {
			if owned[rule.Field] {
				setPath(body, rule.Field, cur)
			}
			continue
		}
		v := rule.Default
		if s, ok := v.(string); ok && strings.Contains(s, "{{") {
			t, err := NewTemplate(s)
			if err != nil {
				return fmt.Errorf("mutation default of %s: %w", rule.Field, err)
			}
			if v, err = render(t, d, "mutation default of "+rule.Field); err != nil {
				return err
			}
		}
		v = jsonValue(v)
		setPath(body, rule.Field, v)
		setPath(cr.Object, rule.Field, v)
		missing = true
	}
	if !missing {
		return nil
	}
	patch := &unstructured.Unstructured{Object: body}
	patch.SetGroupVersionKind(cr.GroupVersionKind())
	patch.SetName(cr.GetName())
	patch.SetNamespace(cr.GetNamespace())
	if err := r.engine.applier.Apply(ctx, client.ApplyConfigurationFromUnstructured(patch),
		client.FieldOwner(r.engine.opts.FieldManager)); err != nil {
		return fmt.Errorf("apply mutation defaults to %s %s/%s: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), err)
	}
	if patch.GetResourceVersion() != "" { // the answer: our own change moved these
		cr.SetResourceVersion(patch.GetResourceVersion())
		cr.SetGeneration(patch.GetGeneration())
	}
	apply.Record(ctx, apply.Write{Action: apply.ActionConfigured, GVK: cr.GroupVersionKind(), Key: client.ObjectKeyFromObject(cr)})
	for _, k := range []string{"metadata", "spec"} {
		if v, ok := cr.Object[k]; ok {
			d[k] = v
		}
	}
	return nil
}

// jsonValue turns a YAML-decoded default into the JSON value the API server stores (int
// becomes int64, nested maps keep string keys).
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	if f, ok := out.(float64); ok && f == float64(int64(f)) {
		return int64(f)
	}
	return out
}

// ownedFields returns the dot paths of the leaf fields the Apply entry of fieldManager
// (main resource, not status) owns on cr.
func ownedFields(cr *unstructured.Unstructured, fieldManager string) map[string]bool {
	out := map[string]bool{}
	for _, e := range cr.GetManagedFields() {
		if e.Manager != fieldManager || e.Operation != "Apply" || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		var tree map[string]any
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &tree) != nil {
			continue
		}
		var walk func(prefix string, t map[string]any)
		walk = func(prefix string, t map[string]any) {
			for k, v := range t {
				name, ok := strings.CutPrefix(k, "f:")
				if !ok {
					continue
				}
				path := name
				if prefix != "" {
					path = prefix + "." + name
				}
				sub, _ := v.(map[string]any)
				if len(sub) == 0 {
					out[path] = true
					continue
				}
				walk(path, sub)
			}
		}
		walk("", tree)
	}
	return out
}

// validate checks the validation rules. A failed warn rule emits a Warning event; the
// first failed deny rule is returned as its message, naming the field.
func (r *crdReconciler) validate(cr *unstructured.Unstructured, d passData) (denied string, err error) {
	if r.crd.Validation == nil {
		return "", nil
	}
	for _, rule := range r.crd.Validation.Rules {
		ok, err := evalCondition(rule.Condition, d)
		if err != nil {
			return "", fmt.Errorf("validation of %s: %w", rule.Field.Text, err)
		}
		if ok {
			continue
		}
		msg := rule.Message
		if msg == "" {
			msg = fmt.Sprintf("field %s fails %s", rule.Field.Text, rule.Operator)
			if !rule.Value.IsZero() {
				msg += " " + rule.Value.Text
			}
		} else {
			msg = fmt.Sprintf("field %s: %s", rule.Field.Text, msg)
		}
		if rule.Action == ActionWarn {
			r.engine.opts.Recorder.Eventf(cr, nil, "Warning", ReasonValidationWarning, "Validate", "%s", msg)
			continue
		}
		return msg, nil
	}
	return "", nil
}
