package explaincmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/volbind/volbind/internal/cli"
	"github.com/volbind/volbind/internal/explain"
)

// The kinds of object explained.
const (
	kindClaim = "pvc"
	kindPod   = "pod"
)

// The controllers whose behaviour --controller selects.
const (
	controllerKCM     = "kube-controller-manager"
	controllerVolbind = "volbind"
)

// volbindAvailableDelay is `volbind controller --available-delay`'s
// default.
const volbindAvailableDelay = 5 * time.Second

// options are the flags and arguments of "volbind explain".
type options struct {
	kind string
	// namespace and name are the object's; namespace is "" when neither
	// the argument nor --namespace gave one.
	namespace, name string

	files        []string
	allowUnknown bool
	output       string
	max          int
	nodes        []string

	controller     string
	availableDelay time.Duration
	recycler       bool

	kubeconfig, master, context string
}

const usageText = `usage: %[1]s explain (pvc|pod) [NAMESPACE/]NAME [flags]

Explains why a PersistentVolumeClaim is not bound, volume by volume, or why a pod's volumes keep it
from being scheduled, node by node: the verdict, then for each volume (closest first) the first rule
that rejects it and how far off it is, or for each node kube-scheduler's reason and the claim, volume
or CSIStorageCapacity that decided it.

It reads the cluster of the kubeconfig (one LIST per kind; only get and list permissions are needed),
or with -f manifests, such as a dump made with
  kubectl get pv,pvc,sc,nodes,pods,csidrivers,csistoragecapacities,csinodes -A -o yaml > cluster.yaml

Exit status: 0 when the claim is bound, would bind now or will be provisioned (a pod: is scheduled or
fits on some node); 1 when it cannot; 2 when nothing could be explained (bad flags or manifests, an
object that is not there, a cluster that cannot be read).

Flags:
`

// parseFlags parses args (after "explain"). --help returns flag.ErrHelp,
// a syntax error a cli.FlagError.
func parseFlags(prog string, args []string, stderr io.Writer) (options, error) {
	o := options{output: "text", controller: controllerKCM, recycler: true}
	fs := pflag.NewFlagSet(prog+" explain", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringSliceVarP(&o.files, "filename", "f", nil, `Read the objects from these manifest files ("-" is standard input) instead of a cluster.`)
	fs.BoolVar(&o.allowUnknown, "allow-unknown", false, "With -f, skip documents of kinds client-go does not know instead of failing.")
	fs.StringVarP(&o.output, "output", "o", o.output, "Output format: text, json or yaml.")
	fs.IntVar(&o.max, "max", 0, fmt.Sprintf("Volumes to list per claim (and node); the others are counted by rule. 0: %d for a claim, %d for a pod; negative: all.",
		explain.DefaultMax, explain.DefaultPodMax))
	fs.StringSliceVar(&o.nodes, "node", nil, "A pod: explain only these nodes. A WaitForFirstConsumer claim: match its volumes as kube-scheduler does on this node.")
	fs.StringVar(&o.controller, "controller", o.controller, `The controller that binds the cluster's volumes: "kube-controller-manager" or "volbind" (volbind controller: `+
		`--available-delay 5s, no dynamic provisioning).`)
	fs.DurationVar(&o.availableDelay, "available-delay", 0, "The controller's --available-delay (volbind only); default 5s for --controller=volbind.")
	fs.BoolVar(&o.recycler, "recycler", o.recycler, "Whether the controller scrubs released Recycle volumes (volbind controller --recycler).")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig file. Empty: $KUBECONFIG, then ~/.kube/config, then the in-cluster configuration.")
	fs.StringVar(&o.master, "master", "", "The address of the Kubernetes API server (overrides any value in kubeconfig).")
	fs.StringVar(&o.master, "server", "", "Same as --master (kubectl's name).")
	fs.StringVar(&o.context, "context", "", "The kubeconfig context to use.")
	fs.StringVarP(&o.namespace, "namespace", "n", "", "The namespace of NAME. Default: the context's namespace (\"default\" with -f).")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), usageText, prog)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return o, flag.ErrHelp
		}
		return o, cli.FlagError{Err: err}
	}
	if err := o.setObject(fs.Args()); err != nil {
		fs.Usage()
		return o, cli.FlagError{Err: err}
	}
	if err := o.validate(fs); err != nil {
		return o, cli.FlagError{Err: err}
	}
	return o, nil
}

// setObject reads the kind and name arguments.
func (o *options) setObject(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("explain: want a kind (pvc or pod) and a name, got %q", args)
	}
	switch strings.ToLower(args[0]) {
	case "pvc", "pvcs", "persistentvolumeclaim", "persistentvolumeclaims":
		o.kind = kindClaim
	case "pod", "pods", "po":
		o.kind = kindPod
	default:
		return fmt.Errorf("explain: unknown kind %q: want pvc or pod", args[0])
	}
	ns, name, ok := strings.Cut(args[1], "/")
	if !ok {
		ns, name = "", args[1]
	}
	switch {
	case name == "" || ok && ns == "" || strings.Contains(name, "/"):
		return fmt.Errorf("explain: %q is not NAME or NAMESPACE/NAME", args[1])
	case ok && o.namespace != "" && ns != o.namespace:
		return fmt.Errorf("explain: %q names namespace %q, but --namespace is %q", args[1], ns, o.namespace)
	case ok:
		o.namespace = ns
	}
	o.name = name
	return nil
}

func (o *options) validate(fs *pflag.FlagSet) error {
	switch {
	case o.output != "text" && o.output != "json" && o.output != "yaml":
		return fmt.Errorf("explain: --output must be text, json or yaml, got %q", o.output)
	case o.controller != controllerKCM && o.controller != controllerVolbind:
		return fmt.Errorf("explain: --controller must be %s or %s, got %q", controllerKCM, controllerVolbind, o.controller)
	case o.availableDelay < 0:
		return fmt.Errorf("explain: --available-delay must not be negative, got %v", o.availableDelay)
	case fs.Changed("available-delay") && o.controller != controllerVolbind:
		return fmt.Errorf("explain: --available-delay applies to --controller=volbind only")
	case o.kind == kindClaim && len(o.nodes) > 1:
		return fmt.Errorf("explain: a claim is matched on one --node, got %q", o.nodes)
	case len(o.files) > 0 && (o.kubeconfig != "" || o.master != "" || o.context != ""):
		return fmt.Errorf("explain: -f reads manifests; --kubeconfig, --master and --context select a cluster")
	}
	if o.controller == controllerVolbind && !fs.Changed("available-delay") {
		o.availableDelay = volbindAvailableDelay
	}
	return nil
}

// config is the explain.Config of the controller the flags describe.
func (o *options) config() explain.Config {
	return explain.Config{
		UnmarkedCandidates: o.availableDelay > 0,
		// volbind controller runs the Binder without ProvisioningConfig.
		NoProvisioning: o.controller == controllerVolbind,
		NoRecycling:    !o.recycler,
		ClaimedFirst:   o.controller == controllerVolbind,
	}
}
