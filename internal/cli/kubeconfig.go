package cli

import "k8s.io/client-go/tools/clientcmd"

// ClientConfig is the client configuration of a real cluster, read as
// kube-controller-manager reads it: kubeconfig when not empty, else
// $KUBECONFIG, else ~/.kube/config, else the in-cluster configuration;
// master, when not empty, overrides the server. Nothing is read until the
// result is asked for its configuration.
func ClientConfig(kubeconfig, master string) clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	overrides := &clientcmd.ConfigOverrides{}
	if master != "" {
		overrides.ClusterInfo.Server = master
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}
