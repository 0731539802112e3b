package keystone

import (
	"context"
	"fmt"
	"path"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// ConnectionVersionAnnotation is the pod-template annotation that carries the
// resourceVersion of the connection Secret: the pods read the database URL from the
// environment at start-up, so a changed URL (a new password, host or TLS setting)
// rolls them. The resourceVersion tells versions apart without saying anything about
// the URL.
const ConnectionVersionAnnotation = "keystone.openstack.c5c3.io/connection-version"

// The volumes of the Keystone pods and Jobs.
const (
	volumeConfig         = "config"
	volumeFernetKeys     = "fernet-keys"
	volumeCredentialKeys = "credential-keys"
	volumeDatabaseTLS    = "db-tls"
)

// FederationConfigDir is where the API pods mount the federation Secret's
// keystone.conf fragment (identitybackend.FederationConfigFile): oslo.config reads the
// *.conf files of /etc/keystone/keystone.conf.d after keystone.conf, so the fragment's
// [auth], [federation], [openid] and [saml2] options win over keystone.conf's.
const FederationConfigDir = ConfigDir + "/keystone.conf.d"

// WebServerConfigDir is the directory whose *.conf files the Keystone image's web
// server (Apache httpd, Debian layout) includes; the API pods mount each identity
// provider's web server fragment of the federation Secret (httpd-*.conf) there.
const WebServerConfigDir = "/etc/apache2/conf-enabled"

// reconcileDeployment is the Deployment row: the API Deployment, its Service and its
// PodDisruptionBudget; status.endpoint names the Service once the Deployment is ready.
func (r *Reconciler) reconcileDeployment(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	c, scheme := target.Client, target.Client.Scheme()
	// The Service and the PDB first: the Service name resolves while the pods roll out.
	if err := deployment.EnsureService(ctx, c, scheme, k, desiredService(k)); err != nil {
		return reconcile.Outcome{}, err
	}
	if err := deployment.EnsurePodDisruptionBudget(ctx, c, scheme, k, desiredPDB(k)); err != nil {
		return reconcile.Outcome{}, err
	}
	conn := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: names.ConnectionSecretName(k)}, conn); err != nil {
		return reconcile.Outcome{}, fmt.Errorf("reading Secret %s/%s for its version: %w", k.Namespace, names.ConnectionSecretName(k), err)
	}
	ready, err := deployment.EnsureDeployment(ctx, c, scheme, k, desiredDeployment(k, reconcile.StateFrom[identitybackend.Projection](ctx), conn.ResourceVersion))
	if err != nil {
		return reconcile.Outcome{}, err
	}
	if !ready {
		return reconcile.Requeue(reconcile.FalseCondition(ConditionDeploymentReady, ReasonWaitingForDeployment,
			fmt.Sprintf("waiting for Deployment %s/%s to roll out", k.Namespace, k.Name)), deployment.PollInterval), nil
	}
	k.Status.Endpoint = names.Endpoint(k)
	return reconcile.Done(reconcile.TrueCondition(ConditionDeploymentReady, ReasonDeploymentReady,
		fmt.Sprintf("Deployment %s/%s is available", k.Namespace, k.Name))), nil
}

// labels are the labels of a Keystone's API children; selectorLabels select its API
// pods. The Jobs and CronJobs carry names.Labels of their own component, which the
// selector leaves out.
func labels(k *v1alpha1.Keystone) map[string]string { return names.Labels(k, "api") }

func selectorLabels(k *v1alpha1.Keystone) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name": "keystone", "app.kubernetes.io/instance": k.Name, "app.kubernetes.io/component": "api",
	}
}

// desiredDeployment is the API Deployment: the image of spec.image, keystone.conf and
// policy.yaml from the ConfigMap of status.configMap, the key repositories as whole
// Secret volumes (a rotation reaches the running pods without a restart), the domain
// files of s, the database URL in OS_DATABASE__CONNECTION and probes on the version
// document. With a federation Secret in s, its whole volume is mounted read-only at
// identitybackend.FederationDir (the SAML documents the fragments name), its
// keystone.conf fragment under FederationConfigDir and each web server fragment
// (httpd-*.conf) under WebServerConfigDir, each with subPath. The Secret's name is
// content-addressed, so the pods roll when the federation documents change and only
// then; without one the template is what it was before federation existed. With
// spec.autoscaling the replica count is the HPA's.
func desiredDeployment(k *v1alpha1.Keystone, s *identitybackend.Projection, connectionVersion string) *appsv1.Deployment {
	readiness, startup := deployment.HTTPProbes(VersionPath)
	tpl := podTemplate(k, "api", nil, nil)
	tpl.Labels = selectorLabels(k)
	tpl.Annotations = map[string]string{ConnectionVersionAnnotation: connectionVersion}
	tpl.Spec.RestartPolicy = ""
	ctr := &tpl.Spec.Containers[0]
	ctr.Name = "keystone"
	ctr.Ports = []corev1.ContainerPort{{Name: deployment.HTTPPortName, ContainerPort: names.ServicePort}}
	ctr.ReadinessProbe, ctr.StartupProbe = readiness, startup
	ctr.VolumeMounts = append(ctr.VolumeMounts,
		corev1.VolumeMount{Name: volumeFernetKeys, MountPath: settings.DefaultFernetKeyRepository, ReadOnly: true},
		corev1.VolumeMount{Name: volumeCredentialKeys, MountPath: settings.DefaultCredentialKeyRepository, ReadOnly: true},
	)
	tpl.Spec.Volumes = append(tpl.Spec.Volumes,
		secretVolume(volumeFernetKeys, names.FernetKeysSecretName(k)),
		secretVolume(volumeCredentialKeys, names.CredentialKeysSecretName(k)),
	)
	if s.Secret != "" {
		for _, f := range s.Files {
			ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{
				Name: identitybackend.DomainsVolumeName, MountPath: path.Join(settings.DomainConfigDir, f), SubPath: f, ReadOnly: true,
			})
		}
		tpl.Spec.Volumes = append(tpl.Spec.Volumes, secretVolume(identitybackend.DomainsVolumeName, s.Secret))
	}
	if s.FederationSecret != "" {
		ctr.VolumeMounts = append(ctr.VolumeMounts, federationMounts(s.FederationFiles)...)
		tpl.Spec.Volumes = append(tpl.Spec.Volumes, secretVolume(identitybackend.FederationVolumeName, s.FederationSecret))
	}
	meta := metav1.ObjectMeta{Name: k.Name, Namespace: k.Namespace, Labels: labels(k)}
	return deployment.Workload(meta, selectorLabels(k), k.Spec.Replicas, k.Spec.Autoscaling != nil, tpl)
}

// federationMounts are the mounts of the federation volume for its data keys files:
// the whole volume at identitybackend.FederationDir, the keystone.conf fragment under
// FederationConfigDir and every web server fragment under WebServerConfigDir, with
// subPath, in the order of files.
func federationMounts(files []string) []corev1.VolumeMount {
	mounts := []corev1.VolumeMount{{
		Name: identitybackend.FederationVolumeName, MountPath: identitybackend.FederationDir, ReadOnly: true,
	}}
	for _, f := range files {
		dir := ""
		switch {
		case f == identitybackend.FederationConfigFile:
			dir = FederationConfigDir
		case strings.HasPrefix(f, "httpd-") && strings.HasSuffix(f, ".conf"):
			dir = WebServerConfigDir
		default:
			continue // read from FederationDir by the fragments that name it
		}
		mounts = append(mounts, corev1.VolumeMount{
			Name: identitybackend.FederationVolumeName, MountPath: path.Join(dir, f), SubPath: f, ReadOnly: true,
		})
	}
	return mounts
}

// podTemplate is the pod of every Keystone container: the image, keystone.conf (and
// policy.yaml with policy overrides) from status.configMap, the database URL from the
// connection Secret in database.ConnectionEnv, the database client certificate with
// TLS, and env. Run-once pods do not restart in place (the Job's backoff retries).
func podTemplate(k *v1alpha1.Keystone, component string, args []string, env []corev1.EnvVar) corev1.PodTemplateSpec {
	mounts := []corev1.VolumeMount{{
		Name: volumeConfig, MountPath: path.Join(ConfigDir, ConfigFile), SubPath: ConfigFile, ReadOnly: true,
	}}
	if k.Spec.Policy != nil {
		mounts = append(mounts, corev1.VolumeMount{
			Name: volumeConfig, MountPath: path.Join(ConfigDir, PolicyFile), SubPath: PolicyFile, ReadOnly: true,
		})
	}
	volumes := []corev1.Volume{{Name: volumeConfig, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: k.Status.ConfigMap}},
	}}}
	if k.Spec.Database.TLS != nil {
		mounts = append(mounts, corev1.VolumeMount{Name: volumeDatabaseTLS, MountPath: DatabaseTLSDir, ReadOnly: true})
		volumes = append(volumes, secretVolume(volumeDatabaseTLS, DatabaseCertificateSecretName(k)))
	}
	allEnv := append([]corev1.EnvVar{database.ConnectionEnvVar(names.ConnectionSecretName(k), "")}, env...)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: names.Labels(k, component)},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:         component,
				Image:        k.Spec.Image,
				Args:         args,
				Env:          allEnv,
				VolumeMounts: mounts,
			}},
			Volumes: volumes,
		},
	}
}

// managePodTemplate is podTemplate for a keystone-manage run.
func managePodTemplate(k *v1alpha1.Keystone, component string, args []string, env []corev1.EnvVar) corev1.PodTemplateSpec {
	tpl := podTemplate(k, component, nil, env)
	tpl.Spec.Containers[0].Command = args
	return tpl
}

// secretVolume mounts the whole Secret name.
func secretVolume(volume, name string) corev1.Volume {
	return corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: name},
	}}
}

// desiredService is the Service in front of the API pods, on names.ServicePort.
func desiredService(k *v1alpha1.Keystone) *corev1.Service {
	return deployment.HTTPService(metav1.ObjectMeta{Name: k.Name, Namespace: k.Namespace, Labels: labels(k)},
		selectorLabels(k), names.ServicePort)
}

// desiredPDB lets a drain evict one API pod at a time (maxUnavailable 1), so a
// single-replica Keystone does not block node maintenance.
func desiredPDB(k *v1alpha1.Keystone) *policyv1.PodDisruptionBudget {
	return deployment.OneUnavailablePDB(metav1.ObjectMeta{Name: k.Name, Namespace: k.Namespace, Labels: labels(k)},
		selectorLabels(k))
}
