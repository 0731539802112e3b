package simulate

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ESOResourceVersion is esoResourceVersion, for the tests of the PushSecret simulator.
func ESOResourceVersion(m metav1.ObjectMeta) string { return esoResourceVersion(m) }
