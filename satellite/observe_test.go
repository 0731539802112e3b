package satellite_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/satellite"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

const backendsConf = "[DEFAULT]\nenabled_backends = fast:s3, slow:s3\n\n[fast]\ns3_store_host = https://s3.example\n"

// TestSectionProjected follows the chain Deployment → pod volume → Secret → data key
// on the test control plane, one row per link that can be missing.
func TestSectionProjected(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	create(t,
		deployment(ns, "glance", configMapVolume("policy", "glance-policy"), secretVolume("backends", "glance-backends-abc")),
		secret(ns, "glance-backends-abc", map[string]string{"backends.conf": backendsConf, "identity.ldap.conf": "[ldap]\n"}),
		deployment(ns, "dangling", secretVolume("backends", "glance-backends-gone")),
		deployment(ns, "scratch", emptyDirVolume("backends")),
	)
	env.CreateBeingDeleted(t, deployment(ns, "leaving", secretVolume("backends", "glance-backends-abc")))

	type args struct {
		deployment, volume, header, key string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   bool
	}{
		"SectionPresent": {
			reason: "The mounted Secret carries [fast] as a line of backends.conf.",
			args:   args{deployment: "glance", volume: "backends", header: "[fast]", key: "backends.conf"},
			want:   true,
		},
		"SectionAbsent": {
			reason: "slow is named in an option value, but has no section of its own yet.",
			args:   args{deployment: "glance", volume: "backends", header: "[slow]", key: "backends.conf"},
		},
		"MissingDeployment": {
			reason: "No Deployment, no evidence.",
			args:   args{deployment: "absent", volume: "backends", header: "[fast]", key: "backends.conf"},
		},
		"MissingVolume": {
			reason: "The pod template has no volume of that name.",
			args:   args{deployment: "glance", volume: "nope", header: "[fast]", key: "backends.conf"},
		},
		"ConfigMapVolume": {
			reason: "A volume that mounts a ConfigMap is not the projection.",
			args:   args{deployment: "glance", volume: "policy", header: "[fast]", key: "backends.conf"},
		},
		"EmptyDirVolume": {
			reason: "A volume that mounts an emptyDir is not the projection.",
			args:   args{deployment: "scratch", volume: "backends", header: "[fast]", key: "backends.conf"},
		},
		"MissingSecret": {
			reason: "The volume names a Secret that does not exist.",
			args:   args{deployment: "dangling", volume: "backends", header: "[fast]", key: "backends.conf"},
		},
		"AbsentDataKey": {
			reason: "The Secret exists but lacks the data key.",
			args:   args{deployment: "glance", volume: "backends", header: "[fast]", key: "barbican.conf"},
		},
		"EmptyHeaderKeyPresent": {
			reason: "With no header, the data key itself is the satellite's file and its presence is the evidence.",
			args:   args{deployment: "glance", volume: "backends", key: "identity.ldap.conf"},
			want:   true,
		},
		"EmptyHeaderKeyAbsent": {
			reason: "With no header, an absent data key is not projected.",
			args:   args{deployment: "glance", volume: "backends", key: "identity.corp.conf"},
		},
		"DeploymentBeingDeleted": {
			reason: "The pod template is read as it stands, also on a Deployment being deleted.",
			args:   args{deployment: "leaving", volume: "backends", header: "[fast]", key: "backends.conf"},
			want:   true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := satellite.SectionProjected(ctx, satellite.ObserveParams{
				Children:      env.Client,
				DeploymentKey: client.ObjectKey{Namespace: ns, Name: tc.args.deployment},
				VolumeName:    tc.args.volume,
				SectionHeader: tc.args.header,
				DataKey:       tc.args.key,
			})
			if err != nil {
				t.Fatalf("%s\nunexpected error: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nprojected: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSectionProjectedReadsThroughChildren checks that both reads go through the
// Children client: one Get of the Deployment, one of the Secret, nothing else.
func TestSectionProjectedReadsThroughChildren(t *testing.T) {
	ns := env.Namespace(t)
	create(t,
		deployment(ns, "barbican", secretVolume("config", "barbican-config-1")),
		secret(ns, "barbican-config-1", map[string]string{"barbican.conf": "[DEFAULT]\n[secretstore:vault]\nplugin = vault\n"}),
	)
	fi := faults.NewInjector()
	got, err := satellite.SectionProjected(context.Background(), satellite.ObserveParams{
		Children:      fi.Client(env.Client),
		DeploymentKey: client.ObjectKey{Namespace: ns, Name: "barbican"},
		VolumeName:    "config",
		SectionHeader: "[secretstore:vault]",
		DataKey:       "barbican.conf",
	})
	if err != nil || !got {
		t.Fatalf("SectionProjected = %v, %v; want true, nil", got, err)
	}
	for _, v := range faults.Verbs() {
		want := 0
		if v == faults.VerbGet {
			want = 2
		}
		if n := fi.Calls(v); n != want {
			t.Errorf("%s calls = %d, want %d", v, n, want)
		}
	}
}

// TestSectionProjectedGetFaults fails each of the two reads with each fault a read can
// meet: the error names the object it failed to read and wraps the cause.
func TestSectionProjectedGetFaults(t *testing.T) {
	ns := env.Namespace(t)
	create(t,
		deployment(ns, "glance", secretVolume("backends", "glance-backends-abc")),
		secret(ns, "glance-backends-abc", map[string]string{"backends.conf": backendsConf}),
	)
	reads := []string{
		fmt.Sprintf("fetching Deployment %s/glance: ", ns),
		fmt.Sprintf("fetching projection Secret %s/glance-backends-abc: ", ns),
	}
	for i, prefix := range reads {
		for _, f := range faults.Reads() {
			t.Run(fmt.Sprintf("Get%d/%s", i+1, f.Name), func(t *testing.T) {
				fi := faults.NewInjector()
				fi.Arm(faults.VerbGet, i+1, f)
				got, err := satellite.SectionProjected(context.Background(), satellite.ObserveParams{
					Children:      fi.Client(env.Client),
					DeploymentKey: client.ObjectKey{Namespace: ns, Name: "glance"},
					VolumeName:    "backends",
					SectionHeader: "[fast]",
					DataKey:       "backends.conf",
				})
				if got {
					t.Error("projected = true on a failed read")
				}
				if err == nil || !strings.HasPrefix(err.Error(), prefix) || !errors.Is(err, faults.ErrInjected) {
					t.Fatalf("error = %v, want one starting %q wrapping the injected fault", err, prefix)
				}
				if f.Name == faults.Internal.Name && !apierrors.IsInternalError(err) {
					t.Errorf("the API status of the cause is lost: %v", err)
				}
			})
		}
	}
}

// TestSectionProjectedInvalidParams checks that each required field is refused with
// ErrInvalidParams, naming the field, before any API call.
func TestSectionProjectedInvalidParams(t *testing.T) {
	cases := map[string]struct {
		reason string
		mutate func(p *satellite.ObserveParams)
		field  string
	}{
		"NilChildren":     {reason: "Nothing to read with.", mutate: func(p *satellite.ObserveParams) { p.Children = nil }, field: "ObserveParams.Children"},
		"NoDeployment":    {reason: "The Deployment needs a name.", mutate: func(p *satellite.ObserveParams) { p.DeploymentKey.Name = "" }, field: "ObserveParams.DeploymentKey.Name"},
		"EmptyVolumeName": {reason: "The volume to follow needs a name.", mutate: func(p *satellite.ObserveParams) { p.VolumeName = "" }, field: "ObserveParams.VolumeName"},
		"EmptyDataKey":    {reason: "The rendered file needs a key.", mutate: func(p *satellite.ObserveParams) { p.DataKey = "" }, field: "ObserveParams.DataKey"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fi := faults.NewInjector()
			p := satellite.ObserveParams{
				Children:      fi.Client(env.Client),
				DeploymentKey: client.ObjectKey{Namespace: "default", Name: "glance"},
				VolumeName:    "backends",
				SectionHeader: "[fast]",
				DataKey:       "backends.conf",
			}
			tc.mutate(&p)
			got, err := satellite.SectionProjected(context.Background(), p)
			if got || !errors.Is(err, satellite.ErrInvalidParams) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%s\nSectionProjected = %v, %v; want false and ErrInvalidParams naming %s", tc.reason, got, err, tc.field)
			}
			if n := fi.Calls(faults.VerbGet); n != 0 {
				t.Errorf("%s\n%d Get calls before the params were checked, want 0", tc.reason, n)
			}
		})
	}
}

// TestSectionProjectedWithPackageRole runs SectionProjected as a user bound only to
// the ClusterRole generated from rbac.go (rbac/satellite/role.yaml): a missing rule
// fails with Forbidden.
func TestSectionProjectedWithPackageRole(t *testing.T) {
	roles, err := testenv.LoadClusterRoles("../rbac/satellite/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	create(t,
		deployment(ns, "identity", secretVolume("domains", "identity-domains-1")),
		secret(ns, "identity-domains-1", map[string]string{"identity.corp.conf": "[identity]\ndriver = ldap\n"}),
	)
	c := env.ClientAs(t, "satellite", roles...)
	got, err := satellite.SectionProjected(context.Background(), satellite.ObserveParams{
		Children:      c,
		DeploymentKey: client.ObjectKey{Namespace: ns, Name: "identity"},
		VolumeName:    "domains",
		DataKey:       "identity.corp.conf",
	})
	if err != nil || !got {
		t.Fatalf("SectionProjected with the package's ClusterRole only = %v, %v; want true, nil", got, err)
	}
}
