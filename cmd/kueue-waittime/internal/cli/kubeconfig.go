package cli

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig loads the kubeconfig at path (empty: $KUBECONFIG, then
// ~/.kube/config, then the in-cluster configuration) and returns its REST
// configuration and the namespace to use: namespace when it is not empty,
// else the kubeconfig's current context's.
func RESTConfig(path, namespace string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	config := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	if namespace == "" {
		var err error
		if namespace, _, err = config.Namespace(); err != nil {
			return nil, "", err
		}
	}
	restConfig, err := config.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	return restConfig, namespace, nil
}
