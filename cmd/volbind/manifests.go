package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// manifestError reports a document of a manifest file that could not be
// decoded. Doc counts from 1 in the order the documents appear in the file.
type manifestError struct {
	File string
	Doc  int
	Err  error
}

func (e *manifestError) Error() string {
	return fmt.Sprintf("%s: document %d: %v", e.File, e.Doc, e.Err)
}

func (e *manifestError) Unwrap() error { return e.Err }

// loadedObjects is what a set of manifests holds, by kind, in file order.
type loadedObjects struct {
	Volumes []*v1.PersistentVolume
	Claims  []*v1.PersistentVolumeClaim
	Classes []*storagev1.StorageClass
	Nodes   []*v1.Node
	Pods    []*v1.Pod
	// Warnings lists the documents that were skipped (unknown kinds).
	Warnings []string
}

// objects returns every loaded object, kinds in dependency order.
func (l *loadedObjects) objects() []runtime.Object {
	return append(l.infrastructure(), l.workload()...)
}

// infrastructure returns the classes, nodes and volumes.
func (l *loadedObjects) infrastructure() []runtime.Object {
	var out []runtime.Object
	for _, o := range l.Classes {
		out = append(out, o)
	}
	for _, o := range l.Nodes {
		out = append(out, o)
	}
	for _, o := range l.Volumes {
		out = append(out, o)
	}
	return out
}

// workload returns the claims and pods.
func (l *loadedObjects) workload() []runtime.Object {
	var out []runtime.Object
	for _, o := range l.Claims {
		out = append(out, o)
	}
	for _, o := range l.Pods {
		out = append(out, o)
	}
	return out
}

// loadManifestFiles reads every named file ("-" is standard input) into one
// set of objects.
func loadManifestFiles(names []string, stdin io.Reader) (*loadedObjects, error) {
	out := &loadedObjects{}
	for _, name := range names {
		if err := loadManifestFile(name, stdin, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func loadManifestFile(name string, stdin io.Reader, out *loadedObjects) error {
	if name == "-" {
		return loadManifests(name, stdin, out)
	}
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("read manifests: %w", err)
	}
	defer f.Close()
	return loadManifests(name, f, out)
}

// loadManifests decodes a stream of YAML or JSON documents with the
// universal deserializer of client-go's scheme (which recognizes JSON, YAML
// and protobuf by their content) and appends the objects volbind uses to
// out; List kinds (v1 List and typed lists) are expanded, other kinds are
// skipped with a warning. Empty documents are not counted: document N is
// the Nth non-empty one. A document that does not decode fails with a
// *manifestError naming the file and the document.
func loadManifests(file string, r io.Reader, out *loadedObjects) error {
	dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
	decoder := scheme.Codecs.UniversalDeserializer()
	for doc := 1; ; {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return &manifestError{File: file, Doc: doc, Err: err}
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 || string(bytes.TrimSpace(raw.Raw)) == "null" {
			continue
		}
		if err := addDecoded(decoder, raw.Raw, fmt.Sprintf("%s: document %d", file, doc), out); err != nil {
			return &manifestError{File: file, Doc: doc, Err: err}
		}
		doc++
	}
}

// addDecoded decodes one object (where names it in warnings) and adds it
// to out.
func addDecoded(decoder runtime.Decoder, data []byte, where string, out *loadedObjects) error {
	obj, gvk, err := decoder.Decode(data, nil, nil)
	if err != nil {
		if runtime.IsNotRegisteredError(err) {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s: skipped: %s", where, kindOf(gvk, err)))
			return nil
		}
		return err
	}
	return addObject(decoder, obj, gvk.Kind, where, out)
}

func addObject(decoder runtime.Decoder, obj runtime.Object, kind, where string, out *loadedObjects) error {
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		out.Volumes = append(out.Volumes, o)
	case *v1.PersistentVolumeClaim:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		out.Claims = append(out.Claims, o)
	case *storagev1.StorageClass:
		out.Classes = append(out.Classes, o)
	case *v1.Node:
		out.Nodes = append(out.Nodes, o)
	case *v1.Pod:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		out.Pods = append(out.Pods, o)
	case *v1.List, *v1.PersistentVolumeList, *v1.PersistentVolumeClaimList, *storagev1.StorageClassList, *v1.NodeList, *v1.PodList:
		items, err := meta.ExtractList(obj)
		if err != nil {
			return err
		}
		for i, item := range items {
			itemWhere := fmt.Sprintf("%s item %d", where, i+1)
			var err error
			switch it := item.(type) {
			case nil:
				err = errors.New("empty item")
			case *runtime.Unknown:
				err = addDecoded(decoder, it.Raw, itemWhere, out)
			default:
				err = addObject(decoder, it, kind, itemWhere, out)
			}
			if err != nil {
				return fmt.Errorf("item %d: %w", i+1, err)
			}
		}
	default:
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s: skipped: kind %s is not used by volbind", where, kind))
	}
	return nil
}

func kindOf(gvk *schema.GroupVersionKind, err error) string {
	if gvk == nil || gvk.Kind == "" {
		return err.Error()
	}
	return fmt.Sprintf("unknown kind %s", gvk.String())
}
