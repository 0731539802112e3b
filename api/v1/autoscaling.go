package v1

// AutoscalingSpec runs a CR's pods under a HorizontalPodAutoscaler that scales on CPU
// utilization. Embed it as an optional pointer (spec.autoscaling): a CR that omits it
// keeps its own replica count. deployment.CPUAutoscalerFor builds the autoscaler from it.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="must not exceed maxReplicas",fieldPath=".minReplicas"
type AutoscalingSpec struct {
	// MinReplicas is the fewest pods the autoscaler keeps. Defaults to 1; must not
	// exceed maxReplicas.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the most pods the autoscaler scales to. Required.
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`

	// TargetCPUUtilization is the average CPU utilization, in percent of the pods'
	// CPU request, the autoscaler aims for. Defaults to 80.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=80
	// +optional
	TargetCPUUtilization *int32 `json:"targetCPUUtilization,omitempty"`
}
