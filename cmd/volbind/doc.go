// Command volbind runs the volbind Binder.
//
//	volbind simulate [flags]     bind a generated (or -f loaded) cluster on the embedded in-memory API and report
//	volbind controller [flags]   run the Binder against a real cluster, with leader election
//
// This package only dispatches: each command lives in its own package,
// internal/simulate and internal/controller, and internal/cli holds what
// they share (exit statuses, flag errors, the version, the client
// configuration). An error a command returns becomes the exit status: a
// cli.ExitError its code, a flag syntax error 2, -h 0, any other error 1
// after printing it.
//
// Run "volbind <command> --help" for the flags of a command.
package main
