package apply

import "sigs.k8s.io/controller-runtime/pkg/client"

// Capable is a client that carries an [Applier]'s capabilities: the operator's field
// manager, the converged-apply skip and the ownership mode (owner reference or claim
// labels, ApplierOptions.Remote). The SDK's helpers find the Applier through this
// interface, never through the client's concrete type, so a wrapper that carries it
// keeps all three. *Applier implements it, so does every client built by [Wrap], and so
// does a struct that embeds *Applier. See "Wrapping the Applier" in the package
// documentation.
type Capable interface {
	client.Client
	// AsApplier returns the Applier whose capabilities the client carries; never nil.
	AsApplier() *Applier
}

// AsApplier returns a itself: an *Applier is [Capable].
func (a *Applier) AsApplier() *Applier { return a }

// ApplierOf returns the Applier c carries ([Capable]), or nil when c carries none (a
// plain client: the SDK's default field manager, no skip, owner references).
func ApplierOf(c client.Client) *Applier {
	if cap, ok := c.(Capable); ok && !isNil(cap) {
		return cap.AsApplier()
	}
	return nil
}

// Wrap returns wrapper carrying the capabilities of inner. wrapper is a client built
// around inner (an interceptor.NewClient, a fault injector, a request counter): every
// call goes through wrapper, and the helpers still write under inner's field manager,
// skip converged applies and record ownership as inner does. When inner carries no
// Applier, Wrap returns wrapper unchanged.
//
//	applier := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: "my-operator"})
//	c := apply.Wrap(interceptor.NewClient(applier, funcs), applier)
func Wrap(wrapper, inner client.Client) client.Client {
	a := ApplierOf(inner)
	if a == nil {
		return wrapper
	}
	return &carrier{Client: wrapper, a: a}
}

// carrier is a wrapper client that carries an Applier.
type carrier struct {
	client.Client
	a *Applier
}

func (c *carrier) AsApplier() *Applier { return c.a }
