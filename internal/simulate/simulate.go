package simulate

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/volbind/volbind/internal/cli"
	"github.com/volbind/volbind/internal/manifest"
)

// Run is "volbind simulate": it parses args (the flags after the command
// name), builds the cluster in the in-memory API, runs the real Binder on
// it until no work is left (or -deadline passes) and prints the report to
// stdout; -f - reads manifests from stdin, and stderr gets the usage,
// warnings and the progress line. It returns flag.ErrHelp for -h, a
// cli.FlagError for a syntax error, a cli.ExitError for the exit statuses
// of exitCodes, and nil when the work is done and the invariants hold.
// Unless $GOGC is set, it sets the process's GC target to cli.DefaultGOGC.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parseSimulateFlags(args, stderr)
	if err != nil {
		return err
	}
	cli.ApplyGOGC(os.LookupEnv)
	ctx, err = withLogger(ctx, o.Verbosity)
	if err != nil {
		return err
	}
	return simulate(ctx, o, stdin, stdout, stderr)
}

// withLogger returns ctx with the logger the Binder logs to: klog at
// verbosity v, or no logger at all when v is 0 (the simulation's injected
// faults would otherwise fill the terminal).
func withLogger(ctx context.Context, v int) (context.Context, error) {
	if v == 0 {
		return klog.NewContext(ctx, logr.Discard()), nil
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if err := fs.Set("v", strconv.Itoa(v)); err != nil {
		return ctx, fmt.Errorf("log verbosity %d: %w", v, err)
	}
	return klog.NewContext(ctx, klog.Background()), nil
}

// simulate builds the cluster in the in-memory API, runs the real Binder on
// it until no work is left (or the deadline passes) and prints the report.
func simulate(ctx context.Context, o simulateOptions, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	if o.CPUProfile != "" {
		stopProfile, err := startCPUProfile(o.CPUProfile)
		if err != nil {
			return err
		}
		defer func() {
			if stopErr := stopProfile(); err == nil {
				err = stopErr
			}
		}()
	}
	var objs *manifest.Objects
	if len(o.Files) > 0 {
		mo := manifest.Options{AllowUnknown: o.AllowUnknown}
		if o.Progress {
			mo.Progress = func(file string, docs int) {
				fmt.Fprintf(stderr, "\r%-*s", progressWidth, fmt.Sprintf("loading %s: %d documents", file, docs))
			}
		}
		var err error
		if objs, err = manifest.LoadFiles(o.Files, stdin, mo); err != nil {
			return err
		}
		for _, w := range objs.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
	} else {
		objs, _ = o.Scenario.generate()
	}
	res, err := runSimulation(ctx, o, objs, stderr)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "volbind simulate: interrupted before the report was ready:", err)
			return cli.ExitError{Code: 130}
		}
		return err
	}
	switch o.Output {
	case "json":
		err = res.report.writeJSON(stdout)
	case "yaml":
		err = res.report.writeYAML(stdout)
	default:
		err = res.report.writeText(stdout)
	}
	if err != nil {
		return fmt.Errorf("simulate: write the output: %w", err)
	}
	if err := dumpObjects(o.DumpObjects, stdout, res.server); err != nil {
		return err
	}
	if o.Output != "text" {
		for _, v := range res.report.Violations {
			fmt.Fprintln(stderr, "invariant broken:", v)
		}
	}
	return outcome(ctx, res.report)
}

// exitCodes documents simulate's exit statuses (in -h and docs/simulate.md).
const exitCodes = `exit status:
  0    the Binder had nothing left to do (every claim it can bind is bound, every pod that fits is
       scheduled) and the invariants hold
  1    an invariant is broken (a volume bound to two claims, a claim bound to a missing volume, a pod
       scheduled with a claim not Bound to a volume usable from its node), or the input is invalid
       (a manifest that does not decode, an object kube-apiserver would reject)
  2    bad flags
  3    -deadline passed while the Binder (or the scheduler of pods) still had work to do
  130  interrupted (Ctrl-C); the report printed says so
`

// outcome is the error simulate returns after printing r: exit status 130
// when the run was interrupted, 1 when invariants broke, 3 when the
// deadline passed with work left, else nil.
func outcome(ctx context.Context, r *report) error {
	switch {
	case ctx.Err() != nil || r.Interrupted:
		return cli.ExitError{Code: 130}
	case len(r.Violations) > 0:
		return cli.ExitError{Code: 1}
	case !r.Completed:
		return cli.ExitError{Code: 3}
	}
	return nil
}

// objectLister is the part of bindertest.Server that dumpObjects reads.
type objectLister interface{ Objects() []runtime.Object }

// dumpObjects writes srv's objects as YAML to name ("-" is w); "" writes
// nothing and does not list them (a deep copy of every object: 8 s of CPU
// and gigabytes of heap at a million pairs).
func dumpObjects(name string, w io.Writer, srv objectLister) error {
	if name == "" {
		return nil
	}
	objs := srv.Objects()
	if name == "-" {
		return writeObjectsYAML(w, objs)
	}
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("simulate: -dump-objects: %w", err)
	}
	if err := writeObjectsYAML(f, objs); err != nil {
		f.Close()
		return fmt.Errorf("simulate: -dump-objects %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("simulate: -dump-objects %s: %w", name, err)
	}
	return nil
}

// writeObjectsYAML dumps objects as one multi-document YAML stream, with
// apiVersion and kind set so that the dump loads back with -f.
func writeObjectsYAML(w io.Writer, objs []runtime.Object) error {
	for _, obj := range objs {
		obj = obj.DeepCopyObject()
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			return fmt.Errorf("dump objects: %w", err)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		data, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("dump objects: %w", err)
		}
		if _, err := fmt.Fprintf(w, "---\n%s", data); err != nil {
			return err
		}
	}
	return nil
}
