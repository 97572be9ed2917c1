package simulate

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/volbind/volbind/internal/cli"
)

// simulateOptions are the flags of "volbind simulate".
type simulateOptions struct {
	Scenario     scenario
	Files        []string // -f, repeatable; "-" is standard input
	AllowUnknown bool     // skip documents of unknown kinds instead of failing
	Workers      int
	ResyncPeriod time.Duration // negative disables the resync
	ResyncAuto   bool          // -resync auto: ResyncPeriod is set from the cluster's size (autoResync)
	Deadline     time.Duration
	DeadlineAuto bool    // -deadline auto: Deadline is set from the cluster's size (autoDeadline)
	Provision    bool    // provision volumes for claims no volume satisfies (provisioner.go)
	ConflictRate float64 // fraction of writes that fail with a Conflict
	FailRate     float64 // fraction of writes that fail with an internal error
	Output       string  // text, json or yaml: the report
	DumpObjects  string  // file the final objects are written to as YAML; "" none, "-" stdout
	Progress     bool    // progress line on stderr
	Verbosity    int     // klog verbosity; 0 discards the Binder's logs
	MemProfile   string  // file the heap profile is written to once every claim is synced; "" none
	CPUProfile   string  // file the CPU profile of the whole run is written to; "" none
}

// autoDuration is a flag whose value is auto or a duration that is not
// negative.
type autoDuration struct {
	d    *time.Duration
	auto *bool
}

func (f autoDuration) String() string {
	switch {
	case f.auto == nil:
		return "" // the zero value, for flag.PrintDefaults
	case *f.auto:
		return "auto"
	}
	return f.d.String()
}

func (f autoDuration) Set(v string) error {
	if v == "auto" {
		*f.auto, *f.d = true, 0
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("want auto or a duration that is not negative, got %q", v)
	}
	*f.auto, *f.d = false, d
	return nil
}

// Resync periods of -resync auto.
const (
	// defaultResync is kube-controller-manager's
	// --pvclaimbinder-sync-period.
	defaultResync = 15 * time.Second
	// maxResyncRate bounds the syncs a second that the resync of a large
	// cluster adds: every object is synced once per period, and the
	// syncs of a million pairs resynced every 15 s (133,000 a second) took
	// most of the run's CPU; at 60 s (33,000 a second) they doubled its
	// time, at 200 s (10,000 a second) they added a quarter (2 cores).
	maxResyncRate = 5_000
)

// autoResync is -resync auto's period for a cluster of objects volumes
// and claims: 15 s, or longer when that would resync more than 5,000
// objects a second (400 s at a million pairs).
func autoResync(objects int) time.Duration {
	return max(defaultResync, time.Duration(objects)*time.Second/maxResyncRate)
}

// autoDeadline is -deadline auto for a cluster of objects volumes and
// claims: 2 minutes, and one more per 200,000 objects (12 minutes at a
// million pairs, which bind in about one on 2 cores).
func autoDeadline(objects int) time.Duration {
	return 2*time.Minute + time.Duration(objects)*time.Minute/200_000
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func parseSimulateFlags(args []string, stderr io.Writer) (simulateOptions, error) {
	o := simulateOptions{Scenario: defaultScenario(), ResyncAuto: true, DeadlineAuto: true}
	fs := flag.NewFlagSet("volbind simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: volbind simulate [flags]\n\n"+
			"Builds a cluster in the embedded in-memory API (generated, or loaded with -f), runs the Binder\n"+
			"until it has nothing left to do and prints a report. Pods without a node (from -f, or -pods) are\n"+
			"scheduled onto the cluster's nodes through binder/scheduling, as kube-scheduler's VolumeBinding\n"+
			"plugin does, so that their WaitForFirstConsumer claims bind too.\n\n"+exitCodes+"\nflags:\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&o.Scenario.Volumes, "volumes", o.Scenario.Volumes, "PersistentVolumes to generate")
	fs.IntVar(&o.Scenario.Claims, "claims", o.Scenario.Claims, "PersistentVolumeClaims to generate")
	fs.IntVar(&o.Scenario.Zones, "zones", o.Scenario.Zones, "zones to spread the generated volumes over (one node each)")
	fs.IntVar(&o.Scenario.Classes, "classes", o.Scenario.Classes, "storage classes")
	fs.IntVar(&o.Scenario.Namespaces, "namespaces", o.Scenario.Namespaces, "namespaces to spread the generated claims over")
	fs.Float64Var(&o.Scenario.PreBound, "prebound", o.Scenario.PreBound, "fraction of claims whose volume is pre-bound to them")
	fs.Float64Var(&o.Scenario.Unbindable, "unbindable", o.Scenario.Unbindable, "fraction of claims that no volume can satisfy")
	fs.IntVar(&o.Scenario.Pods, "pods", o.Scenario.Pods, "StatefulSet-shaped pods to generate (db-0, …), each with one WaitForFirstConsumer claim (data-db-0, …)\nthat the simulated scheduler binds to a hostname-local volume of the -nodes nodes")
	fs.IntVar(&o.Scenario.Nodes, "nodes", o.Scenario.Nodes, "nodes to generate for -pods (node-000, …, labelled with hostname and zone),\neach with enough hostname-local volumes for its share of the pods and one spare")
	fs.Uint64Var(&o.Scenario.Seed, "seed", o.Scenario.Seed, "random seed of the generated cluster and of fault injection")
	fs.Var((*stringList)(&o.Files), "f", "load the cluster from a manifest file instead of generating one (YAML or JSON, multi-document, List kinds;\ndecoded strictly and validated as kube-apiserver does); repeatable; - is stdin")
	fs.BoolVar(&o.AllowUnknown, "allow-unknown", false, "with -f: skip documents of kinds client-go does not know (a warning each) instead of failing")
	fs.BoolVar(&o.Provision, "provision", false, "provision a volume for each claim of a class with a provisioner that no volume satisfies\n(a CSI volume in the zone, or on the host, of a WaitForFirstConsumer claim's selected node)")
	fs.IntVar(&o.Workers, "workers", 2, "workers per queue (claims, volumes)")
	fs.Var(autoDuration{&o.ResyncPeriod, &o.ResyncAuto}, "resync", "periodic resync of every object: a `period`, 0 to disable it, or auto: kube-controller-manager's 15s,\nlengthened for clusters of more than 75,000 volumes and claims so as to resync at most 5,000 objects a second\n(400s at a million pairs)")
	fs.Var(autoDuration{&o.Deadline, &o.DeadlineAuto}, "deadline", "give up waiting for the Binder after this `duration`; auto is 2m, and 1m more per 200,000 volumes and claims")
	fs.Float64Var(&o.ConflictRate, "conflict-rate", 0, "fraction of API writes that fail with a Conflict")
	fs.Float64Var(&o.FailRate, "fail-rate", 0, "fraction of API writes that fail with an internal error")
	fs.StringVar(&o.Output, "o", "text", "report format: text, json or yaml")
	fs.StringVar(&o.DumpObjects, "dump-objects", "", "also write the final objects as multi-document YAML (loadable with -f) to this file; - is stdout, after the report")
	fs.StringVar(&o.MemProfile, "memprofile", "", "write the heap profile (go tool pprof) to this file once the Binder has nothing left to do, after a garbage collection")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write the CPU profile (go tool pprof) of the whole run, from loading the input to the report, to this file")
	fs.IntVar(&o.Verbosity, "v", 0, "log verbosity of the Binder (klog); 0 discards its logs")
	progress := fs.String("progress", "auto", "progress line on stderr: auto (when stderr is a terminal), always or never")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, cli.FlagError{Err: err}
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("simulate: unexpected arguments %q", fs.Args())
	}
	if err := checkGeneratorFlags(fs, o.Files); err != nil {
		return o, err
	}
	switch o.Output {
	case "text", "json", "yaml":
	default:
		return o, fmt.Errorf("simulate: -o must be text, json or yaml, not %q", o.Output)
	}
	switch *progress {
	case "auto":
		o.Progress = isTerminal(stderr)
	case "always":
		o.Progress = true
	case "never":
	default:
		return o, fmt.Errorf("simulate: -progress must be auto, always or never, not %q", *progress)
	}
	if o.Verbosity < 0 {
		return o, fmt.Errorf("simulate: -v must not be negative, got %d", o.Verbosity)
	}
	if o.Workers < 1 {
		return o, fmt.Errorf("simulate: -workers must be at least 1, got %d", o.Workers)
	}
	if !o.DeadlineAuto && o.Deadline == 0 {
		return o, fmt.Errorf("simulate: -deadline must be positive or auto, got %v", o.Deadline)
	}
	if !o.ResyncAuto && o.ResyncPeriod == 0 {
		o.ResyncPeriod = -1 // binder.Config: negative disables the resync
	}
	for _, r := range []float64{o.ConflictRate, o.FailRate} {
		if !(r >= 0 && r < 1) {
			return o, fmt.Errorf("simulate: -conflict-rate and -fail-rate must be within [0, 1), got %v", r)
		}
	}
	if len(o.Files) == 0 {
		if err := o.Scenario.validate(); err != nil {
			return o, err
		}
	}
	return o, nil
}

// generatorFlags are the flags that shape a generated cluster.
var generatorFlags = []string{"volumes", "claims", "zones", "classes", "namespaces", "prebound", "unbindable", "pods", "nodes"}

// checkGeneratorFlags refuses generator flags together with -f, which
// would ignore them.
func checkGeneratorFlags(fs *flag.FlagSet, files []string) error {
	if len(files) == 0 {
		return nil
	}
	var set []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(generatorFlags, f.Name) {
			set = append(set, "-"+f.Name)
		}
	})
	if len(set) > 0 {
		return fmt.Errorf("simulate: %s shape a generated cluster and cannot be used with -f, which loads one", strings.Join(set, ", "))
	}
	return nil
}
