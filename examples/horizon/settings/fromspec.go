package settings

import (
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
)

// FromSpec maps the desired state of a Horizon custom resource to the Settings that
// Render writes. The controller renders the result into the ConfigMap, and the admission
// webhook passes it to DeclaredSettings, so both read the resource the same way.
//
//	spec.keystoneEndpoint  → KeystoneURL
//	spec.image             → Image (the cache KEY_PREFIX)
//	spec.memcachedServers  → MemcachedServers
//	spec.debug             → Debug
//	spec.timeZone          → TimeZone
//	spec.gateway != nil    → Gateway (SECURE_PROXY_SSL_HEADER)
//	spec.websso            → WebSSO
//	spec.multiDomain       → MultiDomain
//	spec.extraConfig       → ExtraConfig
//
// AllowedHosts stays empty (["*"]): the pods sit behind a Service or a Gateway, which
// decide the host names that reach them. The result shares no memory with spec.
func FromSpec(spec *v1alpha1.HorizonSpec) Settings {
	s := Settings{
		KeystoneURL:      spec.KeystoneEndpoint,
		Image:            spec.Image,
		MemcachedServers: append([]string(nil), spec.MemcachedServers...),
		Debug:            spec.Debug,
		TimeZone:         spec.TimeZone,
		Gateway:          spec.Gateway != nil,
	}
	if w := spec.WebSSO; w != nil {
		s.WebSSO = &WebSSO{Enabled: w.Enabled, InitialChoice: w.InitialChoice, KeystoneURL: w.KeystoneURL}
		for _, c := range w.Choices {
			s.WebSSO.Choices = append(s.WebSSO.Choices, Choice{ID: c.ID, Label: c.Label})
		}
		if len(w.IDPMapping) > 0 {
			s.WebSSO.IDPMapping = make(map[string]IDPMapping, len(w.IDPMapping))
			for id, m := range w.IDPMapping {
				s.WebSSO.IDPMapping[id] = IDPMapping{IDP: m.IDP, Protocol: m.Protocol}
			}
		}
	}
	if m := spec.MultiDomain; m != nil {
		s.MultiDomain = &MultiDomain{Enabled: m.Enabled, DefaultDomain: m.DefaultDomain, Dropdown: m.Dropdown}
		for _, d := range m.Domains {
			s.MultiDomain.Domains = append(s.MultiDomain.Domains, DomainChoice{ID: d.ID, Label: d.Label})
		}
	}
	if len(spec.ExtraConfig) > 0 {
		s.ExtraConfig = make(map[string]string, len(spec.ExtraConfig))
		for k, v := range spec.ExtraConfig {
			s.ExtraConfig[k] = v
		}
	}
	return s
}
