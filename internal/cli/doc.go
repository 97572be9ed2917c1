// Package cli holds what the commands of the volbind program share: the
// exit status a command asks for (ExitError), the command-line syntax
// errors the flag packages report (FlagError), the version (Version,
// PrintVersion) and the client configuration of a real cluster
// (ClientConfig, and ClientConfigContext with kubectl's --context), and
// the GC target of the commands that hold a cluster in memory (ApplyGOGC).
// cmd/volbind turns the errors into exit statuses; the commands
// (internal/simulate, internal/controller, internal/explaincmd) return
// them. It is this repository's own: nothing here is for embedders.
package cli
