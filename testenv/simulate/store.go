package simulate

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// OpenBaoProvider returns the provider block of a store that no controller reaches:
// ESO's vault provider at the in-cluster OpenBao address. A store only needs one to be
// admitted; the simulators decide its status.
func OpenBaoProvider() *apiextensionsv1.JSON {
	return &apiextensionsv1.JSON{Raw: []byte(`{"vault":{"server":"http://openbao.openbao.svc:8200","path":"secret","version":"v2"}}`)}
}

// EnsureClusterSecretStoreReady creates the ClusterSecretStore name with
// [OpenBaoProvider] when it is missing, then marks it Ready
// ([MarkClusterSecretStoreReady]); it returns the store as stored.
func EnsureClusterSecretStoreReady(ctx context.Context, c client.Client, name string) (*esov1.ClusterSecretStore, error) {
	store := &esov1.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: esov1.SecretStoreSpec{Provider: OpenBaoProvider()}}
	if err := c.Create(ctx, store); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating ClusterSecretStore %s: %w", name, err)
	}
	return MarkClusterSecretStoreReady(ctx, c, name)
}
