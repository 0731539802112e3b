package health

// EndpointURL is the URL a CR's health check requests: path (for example "/v3" or
// "/auth/login/") under endpoint, the base URL the CR publishes once its Service exists
// (status.endpoint). An empty endpoint gives an empty URL, which [Prober.Flow] reports
// as [ReasonEndpointNotReady] without a request, so a health check ahead of the
// Deployment's readiness waits instead of failing.
func EndpointURL(endpoint, path string) string {
	if endpoint == "" {
		return ""
	}
	return endpoint + path
}
