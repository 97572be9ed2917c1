package controller

import (
	"runtime"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/apiserver/pkg/server/routes"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/component-base/logs"
)

// newDebugging returns the defaults of the debugging options, as
// kube-controller-manager has them: profiling on (it costs nothing until a
// profile is asked for, and every request for one is authenticated and
// authorized like /metrics), contention profiling off (it samples every
// blocking event while on).
func newDebugging() componentbaseconfig.DebuggingConfiguration {
	return componentbaseconfig.DebuggingConfiguration{EnableProfiling: true}
}

// addDebuggingFlags adds kube-controller-manager's debugging flags for c
// to fs.
func addDebuggingFlags(fs *pflag.FlagSet, c *componentbaseconfig.DebuggingConfiguration) {
	fs.BoolVar(&c.EnableProfiling, "profiling", c.EnableProfiling,
		"Serve Go's profiles under /debug/pprof/ and the log verbosity under /debug/flags/v on --secure-port (authenticated and authorized like /metrics).")
	fs.BoolVar(&c.EnableContentionProfiling, "contention-profiling", c.EnableContentionProfiling,
		"Record every blocking event for /debug/pprof/block, if --profiling is on.")
}

// applyContentionProfiling turns on the block profile when the options ask
// for it, as kube-controller-manager does when it builds its handler. It
// changes process-wide state.
func applyContentionProfiling(c componentbaseconfig.DebuggingConfiguration) {
	if c.EnableProfiling && c.EnableContentionProfiling {
		runtime.SetBlockProfileRate(1)
	}
}

// installDebugging adds the routes of --profiling to m: k8s.io/apiserver's
// /debug/pprof/ (every runtime/pprof profile: heap, goroutine, allocs,
// block, mutex, CPU profile and trace) and /debug/flags/v, whose PUT
// sets the klog verbosity. Nothing is added when profiling is off.
func installDebugging(m *mux.PathRecorderMux, c componentbaseconfig.DebuggingConfiguration) {
	if !c.EnableProfiling {
		return
	}
	routes.Profiling{}.Install(m)
	routes.DebugFlags{}.Install(m, "v", routes.StringFlagPutHandler(logs.GlogSetter))
}
