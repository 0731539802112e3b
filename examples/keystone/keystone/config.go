package keystone

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
	"github.com/c5c3/reconciler-sdk/policy"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// ConfigFile is the key of keystone.conf in the ConfigMap; the pods mount it at
// ConfigDir/ConfigFile.
const ConfigFile = "keystone.conf"

// PolicyFile is the key of the rendered policy overrides in the ConfigMap; the pods
// mount it at ConfigDir/PolicyFile and keystone.conf names it as [oslo_policy]
// policy_file.
const PolicyFile = policy.PolicyKey

// ConfigDir is Keystone's configuration directory in the pods and Jobs.
const ConfigDir = "/etc/keystone"

// RetainConfigMaps is how many older ConfigMaps of a Keystone the prune keeps besides
// the current one, for a rollback; one a live ReplicaSet or pod still mounts is never
// deleted, whatever its age.
const RetainConfigMaps = 3

// reconcileConfig is the Config row: the database password generated once (or
// restored from its backup: restorePasswordSecret, then secrets.EnsureGeneratedSecret
// with RestoreFrom, which generates nothing while the restore ExternalSecret has not
// told whether the backend holds a password), the connection Secret of the active
// account (database.EnsureConnectionSecret), the policy overrides read from their
// ConfigMap, and keystone.conf and policy.yaml rendered into an immutable ConfigMap
// named after its content, so a change of configuration is a new ConfigMap and a new
// pod template.
func (r *Reconciler) reconcileConfig(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	c, scheme := target.Client, target.Client.Scheme()
	gs := secrets.DefaultGeneratedSecret(
		client.ObjectKey{Namespace: k.Namespace, Name: names.DatabasePasswordSecretName(k)}, names.DatabasePasswordDataKey)
	gs.Labels = map[string]string{database.WatchLabel: "true", apply.ManagedByLabel: r.opts.FieldManager}
	gs.RestoreFrom = &client.ObjectKey{Namespace: k.Namespace, Name: PasswordRestoreName(k)}
	if err := apply.EnsureObject(ctx, c, scheme, k, desiredPasswordRestore(k, r.opts.FieldManager), r.opts.FieldManager); err != nil {
		return configFailed(err)
	}
	if _, err := restorePasswordSecret(ctx, c, k, gs); err != nil {
		return reconcile.Outcome{}, fmt.Errorf("database password of Keystone %s/%s: %w", k.Namespace, k.Name, err)
	}
	generated, err := secrets.EnsureGeneratedSecret(ctx, c, scheme, k, gs)
	if err != nil {
		return reconcile.Outcome{}, err
	}
	if !generated.Ready() {
		return reconcile.Requeue(reconcile.FalseCondition(ConditionConfigReady, secrets.ReasonRestorePending,
			fmt.Sprintf(secrets.MessageRestorePending, gs.RestoreFrom)), secrets.PollInterval), nil
	}
	pw := &corev1.Secret{}
	if err := c.Get(ctx, gs.Key, pw); err != nil {
		return reconcile.Outcome{}, fmt.Errorf("database password of Keystone %s/%s: get Secret %s: %w", k.Namespace, k.Name, gs.Key, err)
	}
	st, err := readPasswordState(pw.Data)
	if err != nil {
		return configFailed(fmt.Errorf("database password of Keystone %s/%s: Secret %s %s: %w",
			k.Namespace, k.Name, gs.Key, err.Error(), ErrInconsistentPasswordSecret))
	}
	if _, err := database.EnsureConnectionSecret(ctx, c, scheme, k, connectionSecret(k, st.active),
		string(pw.Data[accountPasswordKey(st.active)])); err != nil {
		if errors.Is(err, database.ErrInvalidParams) {
			return configError(fmt.Errorf("database connection of Keystone %s/%s: %w", k.Namespace, k.Name, err))
		}
		return configFailed(err)
	}

	data := map[string]string{}
	s := fromSpec(k, reconcile.StateFrom[identitybackend.Projection](ctx).Files)
	if p := k.Spec.Policy; p != nil {
		rules, out, err := loadPolicy(ctx, c, k)
		if err != nil || !out.Continue() {
			return out, err
		}
		rendered, err := policy.Render(rules)
		if err != nil {
			return configError(fmt.Errorf("rendering the policy overrides of Keystone %s/%s: %w", k.Namespace, k.Name, err))
		}
		data[PolicyFile] = rendered
		s.PolicyFile = ConfigDir + "/" + PolicyFile
	}
	conf, err := settings.Render(s)
	if err != nil {
		return configError(fmt.Errorf("rendering keystone.conf of Keystone %s/%s: %w", k.Namespace, k.Name, err))
	}
	data[ConfigFile] = conf
	name, err := config.CreateImmutableConfigMap(ctx, c, scheme, k, names.ConfigBaseName(k), k.Namespace, data)
	if err != nil {
		return configFailed(err)
	}
	k.Status.ConfigMap = name
	return reconcile.Done(reconcile.TrueCondition(ConditionConfigReady, ReasonConfigRendered, "keystone.conf rendered into ConfigMap "+name)), nil
}

// configFailed sets ConfigReady False with ConfigError (the error's text, which names
// objects and never a value) and returns err, retried with back-off.
func configFailed(err error) (reconcile.Outcome, error) {
	return reconcile.Done(reconcile.FalseCondition(ConditionConfigReady, ReasonConfigError, err.Error())), err
}

// configError is configFailed ending the pass without a retry: the input cannot be
// rendered until it changes (the messages of package settings never quote a password
// or an extraConfig value).
func configError(err error) (reconcile.Outcome, error) {
	out, _ := configFailed(err)
	return out, crreconcile.TerminalError(err)
}

// loadPolicy reads the policy overrides of spec.policy.configMapRef. A missing
// ConfigMap or key sets PolicyNotFound and requeues (the ConfigMap carries no label of
// the operator, so its creation is noticed by polling); a document that is not a map
// of strings is a ConfigError. The pass goes on only with no error and out.Continue().
func loadPolicy(ctx context.Context, c client.Client, k *v1alpha1.Keystone) (rules map[string]string, out reconcile.Outcome, err error) {
	ref := k.Spec.Policy.ConfigMapRef
	dataKey := ref.Key
	if dataKey == "" {
		dataKey = policy.PolicyKey
	}
	key := client.ObjectKey{Namespace: k.Namespace, Name: ref.Name}
	rules, err = policy.LoadPolicyFromConfigMap(ctx, renamedKeyClient{Client: c, dataKey: dataKey}, key)
	switch {
	case apierrors.IsNotFound(err):
		return nil, reconcile.Requeue(reconcile.FalseCondition(ConditionConfigReady, ReasonPolicyNotFound,
			fmt.Sprintf("policy ConfigMap %s does not exist", key)), reconcile.RetryInterval), nil
	case errors.Is(err, policy.ErrPolicyKeyMissing):
		return nil, reconcile.Requeue(reconcile.FalseCondition(ConditionConfigReady, ReasonPolicyNotFound,
			fmt.Sprintf("policy ConfigMap %s has no key %q", key, dataKey)), reconcile.RetryInterval), nil
	case errors.Is(err, policy.ErrInvalidPolicyYAML):
		out, err = configError(fmt.Errorf("policy overrides of Keystone %s/%s (key %q): %w", k.Namespace, k.Name, dataKey, err))
		return nil, out, err
	case err != nil:
		return nil, reconcile.Outcome{}, err
	}
	return rules, reconcile.Outcome{}, nil
}

// renamedKeyClient reads a ConfigMap with its key dataKey presented as policy.yaml, the
// key policy.LoadPolicyFromConfigMap reads, and its other keys hidden.
type renamedKeyClient struct {
	client.Client
	dataKey string
}

// Get reads key into obj; a ConfigMap keeps only dataKey, as policy.yaml.
func (c renamedKeyClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		v, found := cm.Data[c.dataKey]
		cm.Data = map[string]string{}
		if found {
			cm.Data[policy.PolicyKey] = v
		}
	}
	return nil
}

// prune is the Prune row after the Deployment: it deletes the older ConfigMaps beyond
// RetainConfigMaps, never the current one and never one that a workload still mounts. A
// failure flips ConfigReady.
func (r *Reconciler) prune(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	opts := config.DefaultPruneOptions()
	opts.Retain, opts.SpareInUse = RetainConfigMaps, true
	if err := config.PruneImmutableConfigMapsWithOptions(ctx, target.Client, k, names.ConfigBaseName(k), k.Namespace,
		k.Status.ConfigMap, opts); err != nil {
		return reconcile.Done(reconcile.FalseCondition(ConditionConfigReady, ReasonConfigError, "pruning older ConfigMaps: "+err.Error())), err
	}
	return reconcile.Outcome{}, nil
}

// fromSpec maps a Keystone to the settings of keystone.conf. domainFiles are the
// keystone.<domain>.conf files of the identity backends (the data keys of the domains
// Secret); their domains turn on domain-specific drivers.
func fromSpec(k *v1alpha1.Keystone, domainFiles []string) settings.Settings {
	s := settings.Settings{
		Debug:                   k.Spec.Debug,
		PublicEndpoint:          k.Spec.Bootstrap.PublicURL,
		MemcachedServers:        k.Spec.MemcachedServers,
		FernetKeyRepository:     settings.DefaultFernetKeyRepository,
		CredentialKeyRepository: settings.DefaultCredentialKeyRepository,
		MaxActiveKeys:           int(k.Spec.Fernet.MaxActiveKeys),
		TokenExpiration:         seconds(k.Spec.Token.Expiration),
		AllowExpiredWindow:      seconds(k.Spec.Token.AllowExpiredWindow),
		ExtraConfig:             k.Spec.ExtraConfig,
	}
	for _, f := range domainFiles {
		s.IdentityDomains = append(s.IdentityDomains, strings.TrimSuffix(strings.TrimPrefix(f, "keystone."), ".conf"))
	}
	return s
}

// CheckSettings renders keystone.conf from k alone, without policy overrides and
// identity domains, and returns settings.Render's error: the errors.Join of one error
// per problem, each wrapping settings.ErrInvalidSettings and naming the field of
// settings.Settings it is about (Settings.PublicEndpoint, Settings.MemcachedServers[i],
// Settings.ExtraConfig["section"]["option"], ...). The Config step refuses k
// (ConfigError, terminal) for every one of them. Messages never quote an extraConfig
// value.
func CheckSettings(k *v1alpha1.Keystone) error {
	_, err := settings.Render(fromSpec(k, nil))
	return err
}

// seconds is d in whole seconds, 0 (the settings default) when unset.
func seconds(d *metav1.Duration) int {
	if d == nil {
		return 0
	}
	return int(d.Seconds())
}

// connection is where account reaches Keystone's database: the MariaDB Service
// <mariadb>.<namespace>.svc; with TLS the CA of the client certificate's Secret, and the
// client certificate PyMySQL presents (the account requires X509).
func connection(k *v1alpha1.Keystone, account string) database.Connection {
	conn := database.Connection{
		Host: mariaDBName(k) + "." + mariaDBNamespace(k) + ".svc",
		Name: databaseName(k),
		User: DatabaseAccountName(k, account),
	}
	if k.Spec.Database.TLS != nil {
		conn.CAFile = DatabaseCAFile
		conn.CertFile, conn.KeyFile = DatabaseTLSDir+"/tls.crt", DatabaseTLSDir+"/tls.key"
	}
	return conn
}

// connectionSecret is the Secret names.ConnectionSecretName(k) holding the URL of
// account: what every Keystone container reads into database.ConnectionEnv.
func connectionSecret(k *v1alpha1.Keystone, account string) database.ConnectionSecretParams {
	return database.ConnectionSecretParams{Name: names.ConnectionSecretName(k), Labels: labels(k), Connection: connection(k, account)}
}

func mariaDBName(k *v1alpha1.Keystone) string { return k.Spec.Database.MariaDBRef.Name }

func mariaDBNamespace(k *v1alpha1.Keystone) string {
	if ns := k.Spec.Database.MariaDBRef.Namespace; ns != "" {
		return ns
	}
	return k.Namespace
}

func databaseName(k *v1alpha1.Keystone) string {
	if n := k.Spec.Database.Name; n != "" {
		return n
	}
	return "keystone"
}

func databaseUser(k *v1alpha1.Keystone) string {
	if n := k.Spec.Database.Username; n != "" {
		return n
	}
	return "keystone"
}
