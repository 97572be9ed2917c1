// Package manifest reads Kubernetes manifests (YAML or JSON, several
// documents, List kinds) into the objects volbind works on: storage
// classes, nodes, PersistentVolumes, claims and pods. Decoding is strict
// and every object is validated as kube-apiserver validates a create, so
// that bad input fails with an Error naming the file, the document, the
// object and the field, or an InvalidObjectsError listing every object
// kube-apiserver would reject.
//
// LoadFiles is what "volbind simulate -f" calls; Load adds one stream to a
// set of Objects. It is this repository's own, for the volbind program's
// commands; embedders decode with client-go.
package manifest
