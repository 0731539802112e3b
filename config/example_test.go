package config_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/config"
)

// ExampleRenderINI merges a CR's extraConfig over the operator's defaults and renders
// the oslo.config file.
func ExampleRenderINI() {
	defaults := config.Sections{
		"DEFAULT":    {"debug": {"false"}, "use_stderr": {"true"}},
		"federation": {"trusted_dashboard": {"https://dashboard.example/auth/websso/", "https://console.example/auth/websso/"}},
		"cache":      {"enabled": {"true"}, "memcache_servers": {"memcached-0:11211,memcached-1:11211"}},
	}
	extraConfig := map[string]map[string]string{
		"DEFAULT": {"debug": "true"},
		"ldap":    {"user_filter": "(memberOf=cn=openstack,ou=groups,dc=example,dc=org)"},
	}
	rendered, err := config.RenderINI(config.Merge(defaults, config.LiftSections(extraConfig)))
	if err != nil {
		panic(err)
	}
	fmt.Print(rendered)

	_, err = config.RenderINI(config.Sections{"DEFAULT": {"debug\n[database]\nconnection": {"x"}}})
	fmt.Println(err)
	// Output:
	// [DEFAULT]
	// debug = true
	// use_stderr = true
	//
	// [cache]
	// enabled = true
	// memcache_servers = memcached-0:11211,memcached-1:11211
	//
	// [federation]
	// trusted_dashboard = https://dashboard.example/auth/websso/
	// trusted_dashboard = https://console.example/auth/websso/
	//
	// [ldap]
	// user_filter = (memberOf=cn=openstack,ou=groups,dc=example,dc=org)
	// section "DEFAULT" option "debug\n[database]\nconnection": invalid INI name: contains "\n"
}

// ExampleCreateImmutableConfigMap stores a rendered file under a content-addressed
// name, stores a changed file under a new name, and prunes the history. In a
// reconciler the client and scheme come from the manager and the owner is the CR.
func ExampleCreateImmutableConfigMap() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}

	render := func(debug string) map[string]string {
		ini, err := config.RenderINI(config.Sections{"DEFAULT": {"debug": {debug}}})
		if err != nil {
			panic(err)
		}
		return map[string]string{"identity.conf": ini}
	}
	first, err := config.CreateImmutableConfigMap(ctx, c, scheme, owner, "identity-config", ns.Name, render("false"))
	if err != nil {
		panic(err)
	}
	again, err := config.CreateImmutableConfigMap(ctx, c, scheme, owner, "identity-config", ns.Name, render("false"))
	if err != nil {
		panic(err)
	}
	fmt.Println("same content, same name:", first == again)

	current, err := config.CreateImmutableConfigMap(ctx, c, scheme, owner, "identity-config", ns.Name, render("true"))
	if err != nil {
		panic(err)
	}
	fmt.Println("changed content, new name:", current != first)
	fmt.Println("name is base + 8 hex:", len(current) == len("identity-config-")+8)

	// Mount current in the pod template, then drop the history.
	if err := config.PruneImmutableConfigMapsWithOptions(ctx, c, owner, "identity-config", ns.Name, current,
		config.PruneOptions{Retain: 0, SpareInUse: true}); err != nil {
		panic(err)
	}
	var left corev1.ConfigMapList
	if err := c.List(ctx, &left, client.InNamespace(ns.Name),
		client.MatchingLabels{config.ConfigBaseLabel: "identity-config"}); err != nil {
		panic(err)
	}
	fmt.Println("left:", len(left.Items), left.Items[0].Name == current)
	// Output:
	// same content, same name: true
	// changed content, new name: true
	// name is base + 8 hex: true
	// left: 1 true
}
