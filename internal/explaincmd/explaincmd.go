package explaincmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/volbind/volbind/internal/cli"
	"github.com/volbind/volbind/internal/explain"
	"github.com/volbind/volbind/internal/manifest"
)

// Run is "volbind explain": it parses args (after the command name),
// reads the objects, explains the claim or pod and prints the explanation
// to stdout. prog is how the user called the program ("volbind", or
// "kubectl volbind" for the plugin), for its texts. It returns nil when
// the object binds or schedules (exit status 0), cli.ExitError{Code: 1}
// when it cannot and cli.ExitError{Code: 2} after printing to stderr why
// nothing could be explained; flag.ErrHelp for --help and a cli.FlagError
// for a syntax error.
func Run(ctx context.Context, prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parseFlags(prog, args, stderr)
	if err != nil {
		return err
	}
	ok, err := o.run(ctx, stdin, stdout)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "%s explain: %v\n", prog, err)
		return cli.ExitError{Code: 2}
	case !ok:
		return cli.ExitError{Code: 1}
	}
	return nil
}

// run explains the object and reports whether it binds or schedules.
func (o *options) run(ctx context.Context, stdin io.Reader, stdout io.Writer) (bool, error) {
	objs, err := o.read(ctx, stdin)
	if err != nil {
		return false, err
	}
	e, err := explain.New(objs, o.config())
	if err != nil {
		return false, err
	}
	if o.kind == kindClaim {
		opts := explain.ClaimOptions{Max: o.max}
		if len(o.nodes) == 1 {
			opts.Node = o.nodes[0]
		}
		x, err := e.Claim(o.namespace, o.name, opts)
		if err != nil {
			return false, err
		}
		ok := x.Verdict == explain.Bound || x.Verdict == explain.WouldBind || x.Verdict == explain.WillProvision
		return ok, o.write(stdout, x, func(w io.Writer) error { return explain.WriteClaimText(w, x) })
	}
	x, err := e.Pod(ctx, o.namespace, o.name, explain.PodOptions{Max: o.max, Nodes: o.nodes})
	if err != nil {
		return false, err
	}
	ok := x.Verdict == explain.Scheduled || x.Verdict == explain.Schedulable
	return ok, o.write(stdout, x, func(w io.Writer) error { return explain.WritePodText(w, x) })
}

// read returns the objects of the manifests or of the cluster, and sets
// the namespace when the arguments gave none.
func (o *options) read(ctx context.Context, stdin io.Reader) (explain.Objects, error) {
	if len(o.files) > 0 {
		if o.namespace == "" {
			o.namespace = "default" // where the manifests' namespaceless objects go
		}
		m, err := manifest.LoadFiles(o.files, stdin, manifest.Options{AllowUnknown: o.allowUnknown, Storage: true})
		if err != nil {
			return explain.Objects{}, err
		}
		return explain.Objects{Volumes: m.Volumes, Claims: m.Claims, Classes: m.Classes, Nodes: m.Nodes, Pods: m.Pods,
			CSIDrivers: m.CSIDrivers, Capacities: m.Capacities, CSINodes: m.CSINodes}, nil
	}
	cfg, ns, err := o.restConfig()
	if err != nil {
		return explain.Objects{}, err
	}
	if o.namespace == "" {
		o.namespace = ns
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return explain.Objects{}, fmt.Errorf("client: %w", err)
	}
	return o.readCluster(ctx, cs)
}

// write prints x in the output format.
func (o *options) write(w io.Writer, x any, text func(io.Writer) error) error {
	switch o.output {
	case "json":
		b, err := json.MarshalIndent(x, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case "yaml":
		b, err := yaml.Marshal(x)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return text(w)
}
