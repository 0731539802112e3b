package deployment

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Probe timing of [HTTPProbes]: a GET every ProbePeriodSeconds that fails after
// ProbeTimeoutSeconds; the readiness probe takes a pod out of its Service after
// ReadinessFailureThreshold misses, the startup probe gives a pod StartupFailureThreshold
// periods (five minutes) to answer before the kubelet restarts it.
const (
	ProbePeriodSeconds        int32 = 10
	ProbeTimeoutSeconds       int32 = 5
	ReadinessFailureThreshold int32 = 3
	StartupFailureThreshold   int32 = 30
)

// HTTPProbe returns a probe that GETs path on the container port named [HTTPPortName]
// every [ProbePeriodSeconds] with a [ProbeTimeoutSeconds] timeout, failing after
// failureThreshold misses in a row.
func HTTPProbe(path string, failureThreshold int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromString(HTTPPortName),
		}},
		PeriodSeconds: ProbePeriodSeconds, TimeoutSeconds: ProbeTimeoutSeconds, FailureThreshold: failureThreshold,
	}
}

// HTTPProbes returns the readiness and startup probes of a container that serves path
// over HTTP on its port named [HTTPPortName]: [HTTPProbe] with
// [ReadinessFailureThreshold] and with [StartupFailureThreshold].
func HTTPProbes(path string) (readiness, startup *corev1.Probe) {
	return HTTPProbe(path, ReadinessFailureThreshold), HTTPProbe(path, StartupFailureThreshold)
}
