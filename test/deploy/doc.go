// Package deploy checks what an operator deploys: the manifests `make
// manifests` renders from config/ over Kueue v0.19.2's own, and the image
// `make image` builds.
//
// The tests read _output/manifests/ and _output/image/ and fail when those are
// missing: run them through `make test-deploy`, which builds both first. They
// check that
//
//   - every rendered object is accepted by a real kube-apiserver (envtest,
//     KUBEBUILDER_ASSETS): the CRDs and the namespace are created, everything
//     else is applied server-side with dry run;
//   - the overlay differs from upstream's render only in the manager image,
//     the WaitTimeEstimation gate and the waitTimeEstimation section of the
//     manager's Configuration, which loads and validates through Kueue's own
//     pkg/config with the values documented as the defaults;
//   - the image tarball is well formed, runs /manager as 65532:65532 from a
//     reproducible layer, and its statically linked manager starts.
package deploy
