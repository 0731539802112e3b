package identitybackend

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/satellite"
)

// federationProjected tells whether the pod template of d, the Keystone's Deployment,
// carries b's identity providers as this generation renders them: the Secret its
// [FederationVolumeName] volume mounts holds [FederationConfigFile] with the
// [openid] / [saml2] section of each protocol b uses, and every file of each of b's
// providers (renderFederation of that provider alone, an OpenID Connect provider with
// the session passphrase read from the Secret names.OpenIDPassphraseSecretName next to
// the Deployment) byte for byte. It returns "" when it does (or b declares no
// federation), else why in words, naming the Deployment, the Secret and the file,
// never a value. A federation that does not validate, a provider whose documents are
// missing, or an OpenID Connect provider other than the Keystone's one (openID, the
// pass's openIDHolder of the attached backends), is why too: the IdentityBackends row
// leaves it out. Errors are failed reads.
func (r *Reconciler) federationProjected(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend, k *v1alpha1.Keystone,
	d *appsv1.Deployment, children client.Client, openID openIDSlot) (why string, err error) {
	f := b.Spec.Federation
	if f == nil {
		return "", nil
	}
	if errs := validateFederation(b, false); len(errs) > 0 {
		fields := make([]string, len(errs))
		for i, e := range errs {
			fields[i] = e.Field
		}
		return fmt.Sprintf("spec.federation does not validate (%s), so the Keystone leaves its identity providers out",
			strings.Join(slices.Compact(fields), ", ")), nil
	}
	deployKey := client.ObjectKeyFromObject(d)
	name := satellite.SecretNameForVolume(&d.Spec.Template.Spec, FederationVolumeName)
	if name == "" {
		return fmt.Sprintf("Deployment %s mounts no federation Secret yet", deployKey), nil
	}
	key := client.ObjectKey{Namespace: d.Namespace, Name: name}
	var s corev1.Secret
	if err := children.Get(ctx, key, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("federation Secret %s mounted by Deployment %s does not exist", key, deployKey), nil
		}
		return "", fmt.Errorf("fetching federation Secret %s: %w", key, err)
	}
	fragment, ok := s.Data[FederationConfigFile]
	if !ok {
		return fmt.Sprintf("Secret %s mounted by Deployment %s has no %s", key, deployKey, FederationConfigFile), nil
	}
	for i := range f.IdentityProviders {
		idp := &f.IdentityProviders[i]
		if refusal := openID.refusal(b, idp); refusal != "" {
			return fmt.Sprintf("identity provider %s is not projected: %s", idp.ID, refusal), nil
		}
		if !satellite.SectionPresent(fragment, "["+idp.Protocol+"]") {
			return fmt.Sprintf("%s in Secret %s mounted by Deployment %s has no [%s] section yet",
				FederationConfigFile, key, deployKey, idp.Protocol), nil
		}
		docs, missing, err := readProviderDocuments(ctx, r.client, b, idp)
		if err != nil {
			return "", err
		}
		if missing != "" {
			return fmt.Sprintf("identity provider %s is not projected: %s", idp.ID, missing), nil
		}
		if idp.Protocol == v1alpha1.ProtocolOpenID {
			pkey := client.ObjectKey{Namespace: d.Namespace, Name: names.OpenIDPassphraseSecretName(k)}
			var found bool
			docs.passphrase, found, err = readPassphrase(ctx, children, pkey, idp.ID)
			if err != nil {
				return "", fmt.Errorf("reading the session passphrase of identity provider %s from Secret %s: %w", idp.ID, pkey, err)
			}
			if !found {
				return fmt.Sprintf("identity provider %s is not projected: Secret %s holds no session passphrase for it yet", idp.ID, pkey), nil
			}
		}
		want, err := renderFederation([]providerDocuments{docs}, nil)
		if err != nil {
			return "", fmt.Errorf("rendering identity provider %s of KeystoneIdentityBackend %s/%s: %w", idp.ID, b.Namespace, b.Name, err)
		}
		for _, file := range slices.Sorted(maps.Keys(want)) {
			if file == FederationConfigFile {
				continue // shared by the Keystone's providers: its sections are checked above
			}
			got, ok := s.Data[file]
			switch {
			case !ok:
				return fmt.Sprintf("Secret %s mounted by Deployment %s holds no %s of identity provider %s yet",
					key, deployKey, file, idp.ID), nil
			case !bytes.Equal(got, want[file]):
				return fmt.Sprintf("Secret %s mounted by Deployment %s holds an older %s of identity provider %s; "+
					"waiting for the Keystone to project this generation", key, deployKey, file, idp.ID), nil
			}
		}
	}
	return "", nil
}
