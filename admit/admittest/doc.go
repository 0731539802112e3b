// Package admittest holds the test helpers of admission webhooks built on package
// admit, for the _test files of an operator's webhook package: defaulting tables
// ([ExpectDefault], [RequestContext]); validation tables ([CreateTable], [UpdateTable],
// [ExpectValidateCreate], [ExpectValidateUpdate], [Causes]); the registration on a
// scheme that lacks the kind ([ExpectNotInScheme]); and, on the test's control plane,
// webhooks the API server calls ([Serve]) with objects created the way a user's
// manifest reaches it ([Admitted], [ExpectRefusedUpdate], [CreateManifest],
// [CreateFile], [CreateStrict]), so that the webhooks see what they will see in
// production.
//
// The Expect helpers report through the testing.TB they are given; comparisons are
// cmp.Diff, (-want +got).
package admittest
