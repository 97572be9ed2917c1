package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// exitError carries the process exit status of a command that ran to the end
// but must report failure (broken invariants).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	klog.Flush()
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(ee.code)
	case errors.Is(err, flag.ErrHelp): // -h: the usage was asked for
	case isFlagError(err):
		os.Exit(2) // the flag package has printed the problem and the usage
	default:
		fmt.Fprintln(os.Stderr, "volbind:", err)
		os.Exit(1)
	}
}

const usage = `usage: volbind <command> [flags]

commands:
  simulate     bind a generated (or -f loaded) cluster on the embedded in-memory API and print a report
  controller   run the Binder against a real cluster (kubeconfig or in-cluster), with leader election
               and HTTPS /metrics, /healthz, /livez, /readyz ("volbind controller --help")

Run "volbind <command> -h" for the flags of a command.
`

// run dispatches to a command; it is main without the process around it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError{code: 2}
	}
	switch args[0] {
	case "simulate":
		o, err := parseSimulateFlags(args[1:], stderr)
		if err != nil {
			return err
		}
		ctx, err = withLogger(ctx, o.Verbosity, true)
		if err != nil {
			return err
		}
		return simulate(ctx, o, stdin, stdout, stderr)
	case "controller":
		o, err := parseControllerFlags(args[1:], stderr)
		if err != nil {
			return err
		}
		if o.showVersion != "false" {
			printVersion(stdout, o.showVersion)
			return nil
		}
		return runController(ctx, o) // configures klog from the logging flags
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

// flagError is a command-line syntax error the flag package reported.
type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }
func (e flagError) Unwrap() error { return e.err }

func isFlagError(err error) bool {
	var fe flagError
	return errors.As(err, &fe)
}

// withLogger returns ctx with the logger the Binder logs to: klog at
// verbosity v, or no logger at all when quietByDefault and v is 0 (the
// simulation's injected faults would otherwise fill the terminal).
func withLogger(ctx context.Context, v int, quietByDefault bool) (context.Context, error) {
	if quietByDefault && v == 0 {
		return klog.NewContext(ctx, logr.Discard()), nil
	}
	if v > 0 {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		if err := fs.Set("v", strconv.Itoa(v)); err != nil {
			return ctx, fmt.Errorf("log verbosity %d: %w", v, err)
		}
	}
	return klog.NewContext(ctx, klog.Background()), nil
}
