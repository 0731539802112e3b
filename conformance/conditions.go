package conformance

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// checkConditions is [CheckConditions]: every condition is current and has a CamelCase
// reason, Ready agrees with the sub-conditions, and passes do not flap them.
func (w *world) checkConditions() error {
	r, err := w.startAndConverge(nil)
	if err != nil {
		return err
	}
	var errs []error
	for _, cr := range w.crs {
		cur, err := w.read(cr)
		if err != nil {
			return err
		}
		errs = append(errs, w.conditionRules(cur))
		errs = append(errs, w.stable(cr, []*replica{r}))
	}
	return errors.Join(errs...)
}

// conditionRules checks one CR's conditions as stored.
func (w *world) conditionRules(cr *unstructured.Unstructured) error {
	conds, err := conditionsOf(cr)
	if err != nil {
		return w.violation(describe(cr), "status.conditions", "store conditions as a list of metav1.Condition", "%v", err)
	}
	var errs []error
	gen := cr.GetGeneration()
	for _, c := range conds {
		field := "status.conditions[" + c.Type + "]"
		if c.ObservedGeneration != gen {
			errs = append(errs, w.violation(describe(cr), field+".observedGeneration",
				"set ObservedGeneration to metadata.generation on every condition you write (reconcile.MarkTrue, MarkFalse and SetCondition do)",
				"is %d, metadata.generation is %d", c.ObservedGeneration, gen))
		}
		if err := reconcile.ValidateReason(c.Reason); err != nil {
			errs = append(errs, w.violation(describe(cr), field+".reason",
				"use a CamelCase reason (letters and digits, no spaces, dashes or dots) and put the details into the message",
				"%v", err))
		}
	}
	subs := w.opts.SubConditions
	if len(subs) == 0 {
		for _, c := range conds {
			if c.Type != reconcile.ConditionReady {
				subs = append(subs, c.Type)
			}
		}
	}
	readyCond := meta.FindStatusCondition(conds, reconcile.ConditionReady)
	if readyCond == nil {
		return errors.Join(append(errs, w.violation(describe(cr), "status.conditions[Ready]",
			"aggregate Ready from the sub-conditions (reconcile.PassOptions.ReadyCondition)", "missing"))...)
	}
	allTrue := true
	var notTrue []string
	for _, s := range subs {
		c := meta.FindStatusCondition(conds, s)
		if c == nil || c.Status != metav1.ConditionTrue {
			allTrue = false
			status := "missing"
			if c != nil {
				status = string(c.Status) + " (" + c.Reason + ")"
			}
			notTrue = append(notTrue, s+" "+status)
		}
	}
	isTrue := readyCond.Status == metav1.ConditionTrue
	if isTrue != allTrue {
		problem := fmt.Sprintf("Ready is %s while every sub-condition %v is True", readyCond.Status, subs)
		if !allTrue {
			problem = fmt.Sprintf("Ready is True while %s", strings.Join(notTrue, ", "))
		}
		errs = append(errs, w.violation(describe(cr), "status.conditions[Ready].status",
			"derive Ready from the sub-conditions alone (reconcile.AggregateReady; list them in reconcile.PassOptions.SubConditions "+
				"and in Options.SubConditions)", "%s", problem))
	}
	return errors.Join(errs...)
}
