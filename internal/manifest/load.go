package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// ErrNoDocuments is the error of a manifest file without any document.
var ErrNoDocuments = errors.New("no documents (the input is empty or holds only separators and comments)")

// Error reports a document of a manifest file that could not be
// loaded. Doc counts from 1 in the order of the file's non-empty
// documents; Item, when not 0, is the item of a List (from 1). Kind and
// Name (namespace/name for namespaced kinds) say what the document holds,
// as far as it could be read.
type Error struct {
	File string
	Doc  int
	Item int
	Kind string
	Name string
	Err  error
}

func (e *Error) Error() string {
	where := e.File
	if e.Doc > 0 {
		where += fmt.Sprintf(": document %d", e.Doc)
	}
	if e.Item > 0 {
		where += fmt.Sprintf(" item %d", e.Item)
	}
	if e.Kind != "" || e.Name != "" {
		where += fmt.Sprintf(" (%s %s)", orUnknown(e.Kind, "kind?"), orUnknown(e.Name, "name?"))
	}
	return fmt.Sprintf("%s: %v", where, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

func orUnknown(s, unknown string) string {
	if s == "" {
		return unknown
	}
	return s
}

// Objects is what a set of manifests holds, by kind, in file order. The
// zero value is an empty set that Load adds to; LoadFiles returns a
// validated one. The objects are the caller's.
type Objects struct {
	Volumes []*v1.PersistentVolume
	Claims  []*v1.PersistentVolumeClaim
	Classes []*storagev1.StorageClass
	Nodes   []*v1.Node
	Pods    []*v1.Pod
	// CSIDrivers, Capacities (CSIStorageCapacities) and CSINodes are kept
	// only with Options.Storage; otherwise they are skipped with a warning.
	CSIDrivers []*storagev1.CSIDriver
	Capacities []*storagev1.CSIStorageCapacity
	CSINodes   []*storagev1.CSINode
	// Warnings lists the documents that were skipped: kinds volbind does
	// not use, and unknown kinds when Options.AllowUnknown is set.
	Warnings []string

	// allowUnknown skips documents of kinds client-go does not know
	// instead of failing.
	allowUnknown bool
	// storage keeps CSIDrivers, CSIStorageCapacities and CSINodes.
	storage bool
	// progress, when set, is called every progressEvery documents and at
	// the end of each file.
	progress func(file string, docs int)
	// seen maps "Kind namespace/name" to where the object was loaded.
	seen map[string]string
}

// All returns every loaded object, kinds in dependency order.
func (l *Objects) All() []runtime.Object {
	return append(l.infrastructure(), l.Workload()...)
}

// infrastructure returns the classes, nodes and volumes.
func (l *Objects) infrastructure() []runtime.Object {
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

// TakeInfrastructure returns the classes, nodes and volumes and drops l's
// references to them.
func (l *Objects) TakeInfrastructure() []runtime.Object {
	out := l.infrastructure()
	l.Classes, l.Nodes, l.Volumes = nil, nil, nil
	return out
}

// Workload returns the claims and pods.
func (l *Objects) Workload() []runtime.Object {
	var out []runtime.Object
	for _, o := range l.Claims {
		out = append(out, o)
	}
	for _, o := range l.Pods {
		out = append(out, o)
	}
	return out
}

// Options are the options of LoadFiles.
type Options struct {
	// AllowUnknown skips documents of kinds client-go does not know (with
	// a warning) instead of failing.
	AllowUnknown bool
	// Progress, when set, is called every progressEvery documents and at
	// the end of each file, with the number of documents read in it.
	Progress func(file string, docs int)
	// Storage keeps CSIDriver, CSIStorageCapacity and CSINode objects (in
	// Objects.CSIDrivers, Objects.Capacities and Objects.CSINodes) instead
	// of skipping them with a warning: what kube-scheduler reads to place
	// volumes.
	Storage bool
}

// progressEvery is how many documents Load reads between two
// progress reports.
const progressEvery = 1000

// LoadFiles reads every named file ("-" is standard input) into one
// set of objects. A file without documents, a set without any object
// volbind uses, an object kube-apiserver would reject (all are listed) and
// (unless o.AllowUnknown) a document of a kind client-go does not know are
// errors.
func LoadFiles(names []string, stdin io.Reader, o Options) (*Objects, error) {
	out := &Objects{allowUnknown: o.AllowUnknown, progress: o.Progress, storage: o.Storage}
	for _, name := range names {
		if err := loadFile(name, stdin, out); err != nil {
			return nil, err
		}
	}
	if len(out.All()) == 0 {
		return nil, fmt.Errorf("read manifests %q: no StorageClass, Node, PersistentVolume, PersistentVolumeClaim or Pod to simulate", names)
	}
	if err := out.validate(); err != nil {
		return nil, err
	}
	return out, nil
}

func loadFile(name string, stdin io.Reader, out *Objects) error {
	if name == "-" {
		return Load(name, stdin, out)
	}
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("read manifests: %w", err)
	}
	defer f.Close()
	return Load(name, f, out)
}

// strictDecoder decodes JSON and YAML with client-go's scheme and fails on
// unknown and duplicate fields.
var strictDecoder = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// Load decodes a stream of YAML documents (separated by "---") or
// of JSON objects and appends the objects volbind uses to out; List kinds
// (v1 List and typed lists) are expanded, kinds volbind does not use are
// skipped with a warning. Empty documents are not counted: document N is
// the Nth non-empty one. Decoding is strict: an unknown or duplicate
// field, a value of the wrong type, an unknown kind (unless out comes
// from LoadFiles with AllowUnknown) or an object loaded twice fails with a
// *Error naming the file, the document, the object and the field.
func Load(file string, r io.Reader, out *Objects) error {
	next := documents(r)
	doc := 0
	for {
		data, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &Error{File: file, Doc: doc + 1, Err: plainError(err)}
		}
		if isEmptyDocument(data) {
			continue
		}
		doc++
		if err := out.addDocument(data, location{file: file, doc: doc}); err != nil {
			return err
		}
		if out.progress != nil && doc%progressEvery == 0 {
			out.progress(file, doc)
		}
	}
	if out.progress != nil {
		out.progress(file, doc)
	}
	if doc == 0 {
		return &Error{File: file, Err: ErrNoDocuments}
	}
	return nil
}

// documents returns a function that yields the raw documents of r, one
// per call, then io.EOF: JSON objects when r starts with "{", else YAML
// documents.
func documents(r io.Reader) func() ([]byte, error) {
	br := bufio.NewReader(r)
	if first, err := peekNonSpace(br); err == nil && first == '{' {
		dec := json.NewDecoder(br)
		return func() ([]byte, error) {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			return raw, nil
		}
	}
	yr := utilyaml.NewYAMLReader(br)
	return yr.Read
}

func peekNonSpace(br *bufio.Reader) (byte, error) {
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return 0, err
		}
		switch c := b[n-1]; c {
		case ' ', '\t', '\r', '\n':
		default:
			return c, nil
		}
	}
}

// isEmptyDocument reports a document with nothing but separators,
// comments and space (or an explicit null), without parsing it.
func isEmptyDocument(data []byte) bool {
	for line := range bytes.Lines(data) {
		l := bytes.TrimSpace(line)
		switch {
		case len(l) == 0, l[0] == '#', bytes.Equal(l, []byte("---")), bytes.Equal(l, []byte("...")):
		case bytes.Equal(l, []byte("null")), bytes.Equal(l, []byte("~")):
		default:
			return false
		}
	}
	return true
}

// location is where a document or list item comes from.
type location struct {
	file string
	doc  int
	item int
}

func (l location) String() string {
	s := fmt.Sprintf("%s: document %d", l.file, l.doc)
	if l.item > 0 {
		s += fmt.Sprintf(" item %d", l.item)
	}
	return s
}

func (l location) errorf(kind, name string, err error) error {
	return &Error{File: l.file, Doc: l.doc, Item: l.item, Kind: kind, Name: name, Err: err}
}
