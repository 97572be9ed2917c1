package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/volbind/volbind/internal/cli"
	"github.com/volbind/volbind/internal/controller"
	"github.com/volbind/volbind/internal/simulate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	klog.Flush()
	os.Exit(exitStatus(err, os.Stderr))
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
		return cli.ExitError{Code: 2}
	}
	switch args[0] {
	case "simulate":
		return simulate.Run(ctx, args[1:], stdin, stdout, stderr)
	case "controller":
		return controller.Run(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

// exitStatus is the process exit status for the error run returned; it
// prints the error to stderr when no one has told the user yet.
func exitStatus(err error, stderr io.Writer) int {
	var ee cli.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code // the command has said why
	case errors.Is(err, flag.ErrHelp): // -h: the usage was asked for
		return 0
	case cli.IsFlagError(err):
		return 2 // the flag package has printed the problem and the usage
	}
	fmt.Fprintln(stderr, "volbind:", err)
	return 1
}
