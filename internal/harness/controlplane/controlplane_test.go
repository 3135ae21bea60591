package controlplane

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
)

// TestValidateResources checks that a bad DeviceClass mapping fails
// StartKueue with Kueue's own validation message, and that the defaults of
// a Configuration without job integrations are not reported.
func TestValidateResources(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := configapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		mappings []configapi.DeviceClassMapping
		wantErr  string
	}{
		"no mappings": {},
		"one GPU mapping": {
			mappings: []configapi.DeviceClassMapping{{Name: "example.com/gpu", DeviceClassNames: []corev1.ResourceName{"gpu.example.com"}}},
		},
		"invalid logical name": {
			mappings: []configapi.DeviceClassMapping{{Name: "GPU!", DeviceClassNames: []corev1.ResourceName{"gpu.example.com"}}},
			wantErr:  `resources.deviceClassMappings[0].name: Invalid value: "GPU!"`,
		},
		"no device class": {
			mappings: []configapi.DeviceClassMapping{{Name: "example.com/gpu"}},
			wantErr:  "resources.deviceClassMappings[0].deviceClassNames: Required value",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &configapi.Configuration{}
			if tc.mappings != nil {
				c.Resources = &configapi.Resources{DeviceClassMappings: tc.mappings}
			}
			scheme.Default(c)
			errs := validateResources(c, scheme)
			switch {
			case tc.wantErr == "" && len(errs) > 0:
				t.Errorf("validateResources: %v", errs.ToAggregate())
			case tc.wantErr != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.wantErr)):
				t.Errorf("validateResources = %v, want an error containing %q", errs.ToAggregate(), tc.wantErr)
			}
		})
	}
}
