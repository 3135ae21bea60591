package controlplane

import (
	"sigs.k8s.io/kueue/pkg/visibility"
)

// visibilityServerOptions are the visibility server options that depend on
// the running Kueue.
func visibilityServerOptions(_ *Kueue) []visibility.ServerOption {
	return nil
}
