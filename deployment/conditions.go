package deployment

import "github.com/c5c3/reconciler-sdk/capability"

// Condition types and reasons the HPA and VPA flows report.
const (
	// ConditionHPAReady is the condition type of the HPA flow ([HPAFlow]).
	ConditionHPAReady = "HPAReady"
	// ReasonHPAReady is HPAReady's True reason when the HorizontalPodAutoscaler is
	// applied.
	ReasonHPAReady = "HPAReady"
	// ReasonHPANotRequired is HPAReady's True reason when no HorizontalPodAutoscaler is
	// wanted (and none controlled by the owner remains).
	ReasonHPANotRequired = "HPANotRequired"

	// ConditionVPAReady is the condition type of the VPA flow ([VPAFlow]).
	ConditionVPAReady = "VPAReady"
	// ReasonVPAReady is VPAReady's True reason when every wanted VerticalPodAutoscaler
	// is applied.
	ReasonVPAReady = "VPAReady"
	// ReasonVPANotRequired is VPAReady's True reason when no VerticalPodAutoscaler is
	// wanted (and none controlled by the owner remains).
	ReasonVPANotRequired = "VPANotRequired"
	// ReasonVPANotInstalled is VPAReady's False reason when a VerticalPodAutoscaler is
	// wanted but the cluster does not serve autoscaling.k8s.io/v1
	// VerticalPodAutoscaler.
	ReasonVPANotInstalled = "VPANotInstalled"
	// ReasonCapabilityProbeFailed is VPAReady's False reason when discovery failed, so
	// whether the VerticalPodAutoscaler kind is served is not known.
	ReasonCapabilityProbeFailed = capability.ReasonCapabilityProbeFailed
	// ReasonVPAError is VPAReady's False reason when applying, listing or deleting a
	// VerticalPodAutoscaler failed.
	ReasonVPAError = "VPAError"
)
