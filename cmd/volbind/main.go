// Command volbind runs the volbind Binder.
//
//	volbind simulate [flags]     bind a generated (or -f loaded) cluster on the embedded in-memory API and report
//	volbind controller [flags]   run the Binder against a real cluster, with leader election
//	volbind explain (pvc|pod) [NAMESPACE/]NAME [flags]
//	                             why a claim or pod waits, volume by volume and node by node
//
// This package only dispatches: each command lives in its own package,
// internal/simulate, internal/controller and internal/explaincmd, and
// internal/cli holds what they share (exit statuses, flag errors, the
// version, the client configuration). An error a command returns becomes the exit status: a
// cli.ExitError its code, a flag syntax error 2, -h 0, any other error 1
// after printing it.
//
// Installed (or linked) as kubectl-volbind, the program is a kubectl
// plugin: "kubectl volbind explain pvc NAME" runs "kubectl-volbind explain
// pvc NAME", and the texts name it "kubectl volbind".
//
// Run "volbind <command> --help" for the flags of a command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/volbind/volbind/internal/cli"
	"github.com/volbind/volbind/internal/controller"
	"github.com/volbind/volbind/internal/explaincmd"
	"github.com/volbind/volbind/internal/simulate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, programName(os.Args[0]), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	klog.Flush()
	os.Exit(exitStatus(err, os.Stderr))
}

const usage = `usage: %[1]s <command> [flags]

commands:
  simulate     bind a generated (or -f loaded) cluster on the embedded in-memory API and print a report
  controller   run the Binder against a real cluster (kubeconfig or in-cluster), with leader election
               and HTTPS /metrics, /healthz, /livez, /readyz ("%[1]s controller --help")
  explain      why a claim or pod waits, volume by volume and node by node ("%[1]s explain pvc NAMESPACE/NAME")

Run "%[1]s <command> -h" for the flags of a command.
`

// pluginName is the program's name as a kubectl plugin: kubectl runs
// kubectl-volbind for "kubectl volbind".
const pluginName = "kubectl-volbind"

// programName is how the user calls the program, for its texts: "kubectl
// volbind" when it runs as the kubectl plugin, else "volbind".
func programName(arg0 string) string {
	if strings.TrimSuffix(filepath.Base(arg0), ".exe") == pluginName {
		return "kubectl volbind"
	}
	return "volbind"
}

// run dispatches to a command; it is main without the process around it.
// prog is programName's answer.
func run(ctx context.Context, prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, prog)
		return cli.ExitError{Code: 2}
	}
	switch args[0] {
	case "simulate":
		return simulate.Run(ctx, args[1:], stdin, stdout, stderr)
	case "controller":
		return controller.Run(ctx, args[1:], stdout, stderr)
	case "explain":
		return explaincmd.Run(ctx, prog, args[1:], stdin, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stdout, usage, prog)
		return nil
	default:
		fmt.Fprintf(stderr, usage, prog)
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
