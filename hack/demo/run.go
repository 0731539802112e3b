package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// options configure run.
type options struct {
	// Out receives the demo's output.
	Out io.Writer
	// Live redraws the condition table in place (Out is a terminal); otherwise each
	// change is one line.
	Live bool
	// Width is the terminal's width; live lines are cut to it. 0 means no cut.
	Width int
	// Pause is the wait before each step the demo takes in place of another operator,
	// so that the progression can be followed.
	Pause time.Duration
	// PhaseTimeout bounds each phase.
	PhaseTimeout time.Duration
	// LogDir receives the operator's log (operator.log); empty means a new temporary
	// directory.
	LogDir string
	// TimeZones are the values spec.timeZone takes one after the other, each a new
	// ConfigMap and rollout; FinalTimeZone is the last one, after which the prune has
	// deleted the ConfigMaps past its retention.
	TimeZones     []string
	FinalTimeZone string
	// NewKey returns a new SECRET_KEY for each sync.
	NewKey func() (string, error)
	// NewPassword returns the Keystone's admin password, which ESO syncs.
	NewPassword func() (string, error)
	// NewClientSecret returns the OpenID Connect client secret of the Keystone scene's
	// identity provider, which ESO syncs.
	NewClientSecret func() (string, error)
	// afterRotation, when set, receives the data of the fernet key Secret after the
	// Keystone scene rotated it, so that a test can check that no key was printed or
	// logged.
	afterRotation func(data map[string][]byte)
	// afterFederation, when set, receives the data of the federation Secret the
	// Keystone's Deployment mounts and of the SAML service provider's key pair Secret
	// once the Keystone scene's identity providers are projected, so that a test can
	// check that no value was printed or logged.
	afterFederation func(federation, keyPair map[string][]byte)
	// Scene picks what the demo shows: sceneHorizon, sceneKeystone or sceneAll (both,
	// Horizon first).
	Scene string
}

// The scenes of the demo, the values of -scene.
const (
	sceneHorizon  = "horizon"
	sceneKeystone = "keystone"
	sceneAll      = "all"
)

// errUnknownScene is wrapped by the error of run for a Scene it does not know.
var errUnknownScene = errors.New("unknown scene")

// scenesOf lists the scenes that scene stands for, in the order they run.
func scenesOf(scene string) ([]string, error) {
	switch scene {
	case sceneHorizon, sceneKeystone:
		return []string{scene}, nil
	case sceneAll, "":
		return []string{sceneHorizon, sceneKeystone}, nil
	}
	return nil, fmt.Errorf("%w %q: want %s, %s or %s", errUnknownScene, scene, sceneHorizon, sceneKeystone, sceneAll)
}

// defaultOptions are the options of `make demo`, without Out and Live.
func defaultOptions() options {
	return options{
		Pause:           1500 * time.Millisecond,
		PhaseTimeout:    3 * time.Minute,
		TimeZones:       []string{"Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"},
		FinalTimeZone:   "America/Sao_Paulo",
		NewKey:          randomKey,
		NewPassword:     randomKey,
		NewClientSecret: randomKey,
		Scene:           sceneAll,
	}
}

// randomKey is a secret (a SECRET_KEY, a password, a client secret) as a secret
// backend would hold one: 48 random bytes, base64.
func randomKey() (string, error) {
	b := make([]byte, 48)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a random secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// run is the whole demo: the control plane, then each scene of o.Scene with its
// operator. It returns nil when every phase finished; the control plane and the
// operators are stopped on every path.
func run(ctx context.Context, o options) (err error) {
	if o.Out == nil || o.NewKey == nil || o.NewPassword == nil || o.NewClientSecret == nil || o.PhaseTimeout <= 0 {
		return errors.New("demo: Out, NewKey, NewPassword, NewClientSecret and a positive PhaseTimeout are required")
	}
	scenes, err := scenesOf(o.Scene)
	if err != nil {
		return err
	}
	d := newDisplay(o.Out, o.Live, o.Width)
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir, err := logDir(o.LogDir)
	if err != nil {
		return err
	}
	logPath := operatorLogPath(dir)
	closeLog, err := logTo(logPath)
	if err != nil {
		return err
	}
	defer closeLog()
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\n(the operator's log: %s)", err, logPath)
		}
	}()

	d.Linef("Starting kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok with the Horizon and Keystone CRDs ...")
	started := time.Now()
	env, err := startControlPlane(root)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.Stop()) }()
	d.Linef("  up in %.1f s", time.Since(started).Seconds())

	for _, scene := range scenes {
		d.Reset()
		run := runHorizon
		if scene == sceneKeystone {
			run = runKeystone
		}
		if err := run(ctx, env, d, o, root); err != nil {
			return err
		}
	}
	d.Linef("The operator's log: %s", logPath)
	return d.Err()
}

// runHorizon is the Horizon scene: the Horizon operator runs while the phases of
// scenario do; it is stopped on every path.
func runHorizon(ctx context.Context, env *testenv.Env, d *display, o options, root string) (err error) {
	srv := newLoginServer()
	defer srv.Close()
	stopOperator, err := startOperator(ctx, env, probeURLFor(srv))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopOperator()) }()
	d.Linef("")
	d.Linef("Horizon. The Horizon operator runs in-process (field manager %s); no dashboard container runs on the fake node,",
		controller.FieldManager)
	d.Linef("so its health check asks a local stand-in for the login page: %s%s", srv.URL, controller.LoginPath)

	s := &scenario{c: env.Client, d: d, o: o, root: root}
	for _, step := range []func(context.Context) error{s.firstRollout, s.rotateKey, s.changeConfig} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	s.epilogue()
	return nil
}
