package visibility

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// utilfeatureSet sets a feature gate for the whole suite (the gates are
// process-wide, as in the manager).
func utilfeatureSet(f featuregate.Feature, enabled bool) error {
	return utilfeature.DefaultMutableFeatureGate.Set(fmt.Sprintf("%s=%t", f, enabled))
}

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }
