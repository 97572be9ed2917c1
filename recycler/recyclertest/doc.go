// Package recyclertest provides Pods, an in-memory recycler.PodAPI for
// tests and examples. Tests play the kubelet with SetStatus, Finish,
// FinishOnCreate or OnCreate; play other clients and the API server with
// Add, Remove, EndWatches, SendWatchError and FailNext; and inspect what the
// recycler did with Calls, Pod, Len and Watches. It is deliberately small:
// binder/bindertest's in-memory API implements recycler.PodAPI too, with
// resourceVersion conflicts and fault injection for every kind of object.
//
// It is for embedders who test code that calls a Recycler, and for the
// recycler package's own tests and examples.
package recyclertest
