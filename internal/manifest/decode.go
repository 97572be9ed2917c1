package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"
)

// header is what a document says it is, read before decoding it so that
// errors can name it.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func (h header) name() string {
	return cache.NewObjectName(h.Metadata.Namespace, h.Metadata.Name).String()
}

// readHeader checks that data (YAML or JSON) is an object and reads its
// apiVersion, kind and name.
func readHeader(data []byte) (header, error) {
	var h header
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return h, plainError(err)
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return h, plainError(err)
	}
	if _, ok := v.(map[string]any); !ok {
		return h, fmt.Errorf("the document is %s, not an object with apiVersion and kind", describeJSON(v))
	}
	// Wrong types here are reported by the strict decoding below.
	_ = json.Unmarshal(j, &h)
	switch {
	case h.Kind == "" && h.APIVersion == "":
		return h, errors.New("apiVersion and kind are required")
	case h.Kind == "":
		return h, errors.New("kind is required")
	case h.APIVersion == "":
		return h, errors.New("apiVersion is required")
	}
	return h, nil
}

func describeJSON(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", truncate(v, 40))
	case float64:
		return fmt.Sprintf("the number %v", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case []any:
		return "a list"
	}
	return "empty"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// addDocument decodes one document (or list item) and adds its objects.
func (l *Objects) addDocument(data []byte, at location) error {
	h, err := readHeader(data)
	if err != nil {
		return at.errorf(h.Kind, h.name(), err)
	}
	obj, gvk, err := strictDecoder.Decode(data, nil, nil)
	if runtime.IsNotRegisteredError(err) {
		if !l.allowUnknown {
			return at.errorf(h.Kind, h.name(), fmt.Errorf("unknown kind %q of apiVersion %q (-allow-unknown skips it)", h.Kind, h.APIVersion))
		}
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s: skipped: unknown kind %s of apiVersion %s", at, h.Kind, h.APIVersion))
		return nil
	}
	if err != nil {
		return at.errorf(h.Kind, h.name(), plainError(err))
	}
	return l.addObject(obj, gvk, h, at)
}

func (l *Objects) addObject(obj runtime.Object, gvk *schema.GroupVersionKind, h header, at location) error {
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		return l.add(at, "PersistentVolume", o, func() { l.Volumes = append(l.Volumes, o) })
	case *v1.PersistentVolumeClaim:
		defaultNamespace(o)
		return l.add(at, "PersistentVolumeClaim", o, func() { l.Claims = append(l.Claims, o) })
	case *storagev1.StorageClass:
		return l.add(at, "StorageClass", o, func() { l.Classes = append(l.Classes, o) })
	case *v1.Node:
		return l.add(at, "Node", o, func() { l.Nodes = append(l.Nodes, o) })
	case *v1.Pod:
		defaultNamespace(o)
		return l.add(at, "Pod", o, func() { l.Pods = append(l.Pods, o) })
	case *storagev1.CSIDriver:
		if l.storage {
			return l.add(at, "CSIDriver", o, func() { l.CSIDrivers = append(l.CSIDrivers, o) })
		}
	case *storagev1.CSIStorageCapacity:
		if l.storage {
			defaultNamespace(o)
			return l.add(at, "CSIStorageCapacity", o, func() { l.Capacities = append(l.Capacities, o) })
		}
	case *storagev1.CSINode:
		if l.storage {
			return l.add(at, "CSINode", o, func() { l.CSINodes = append(l.CSINodes, o) })
		}
	case *v1.List, *v1.PersistentVolumeList, *v1.PersistentVolumeClaimList, *storagev1.StorageClassList, *v1.NodeList, *v1.PodList,
		*storagev1.CSIDriverList, *storagev1.CSIStorageCapacityList, *storagev1.CSINodeList:
		return l.addList(obj, gvk, h, at)
	}
	l.Warnings = append(l.Warnings, fmt.Sprintf("%s: skipped: kind %s is not used by volbind", at, gvk.Kind))
	return nil
}

// defaultNamespace puts a namespaced object without a namespace in
// "default", the namespace kubectl uses when neither the object nor the
// context names one.
func defaultNamespace(o metav1.Object) {
	if o.GetNamespace() == "" {
		o.SetNamespace(metav1.NamespaceDefault)
	}
}

// addList adds the items of a list document; items of a List within a
// List keep the outer item's number.
func (l *Objects) addList(obj runtime.Object, gvk *schema.GroupVersionKind, h header, at location) error {
	items, err := meta.ExtractList(obj)
	if err != nil {
		return at.errorf(h.Kind, h.name(), plainError(err))
	}
	itemKind := strings.TrimSuffix(gvk.Kind, "List")
	for i, item := range items {
		itemAt := at
		if itemAt.item == 0 {
			itemAt.item = i + 1
		}
		switch it := item.(type) {
		case nil:
			err = itemAt.errorf("", "", errors.New("empty item"))
		case *runtime.Unknown:
			err = l.addDocument(it.Raw, itemAt)
		default:
			ih := header{Kind: itemKind}
			if m, mErr := meta.Accessor(it); mErr == nil {
				ih.Metadata.Name, ih.Metadata.Namespace = m.GetName(), m.GetNamespace()
			}
			itemGVK := gvk.GroupVersion().WithKind(itemKind)
			err = l.addObject(it, &itemGVK, ih, itemAt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// add records an object under its kind and key and runs store, or fails
// when the same object was loaded before.
func (l *Objects) add(at location, kind string, o metav1.Object, store func()) error {
	name := cache.MetaObjectToName(o).String()
	key := kind + " " + name
	if prev, ok := l.seen[key]; ok {
		return at.errorf(kind, name, fmt.Errorf("the same object is defined in %s", prev))
	}
	if l.seen == nil {
		l.seen = make(map[string]string)
	}
	l.seen[key] = at.String()
	store()
	return nil
}

var (
	// goStructField matches encoding/json's type errors, which name Go
	// types: "json: cannot unmarshal string into Go struct field
	// PersistentVolume.spec.capacity of type v1.ResourceList".
	goStructField = regexp.MustCompile(`(?:json: )?cannot unmarshal (\w+) into Go struct field [A-Za-z0-9_]+\.([^ ]+) of type (\S+)`)
	goValue       = regexp.MustCompile(`(?:json: )?cannot unmarshal (\w+) into Go value of type (\S+)`)
	// badMapKey matches sigs.k8s.io/yaml's error for a mapping key that is
	// null, a list or a mapping, which prints Go values.
	badMapKey = regexp.MustCompile(`unsupported map key of type: .*|invalid map key: .*`)
)

// plainError rewrites a decoding error so that it names fields by their
// path and values by their JSON type, never by Go types; a strict
// decoding error lists its problems.
func plainError(err error) error {
	if se, ok := runtime.AsStrictDecodingError(err); ok {
		msgs := make([]string, 0, len(se.Errors()))
		for _, e := range se.Errors() {
			msgs = append(msgs, plainError(e).Error())
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	msg := err.Error()
	msg = goStructField.ReplaceAllStringFunc(msg, func(m string) string {
		s := goStructField.FindStringSubmatch(m)
		return fmt.Sprintf("field %q: got %s, want %s", s[2], article(s[1]), jsonType(s[3]))
	})
	msg = badMapKey.ReplaceAllString(msg, "a mapping has a key that is null, a list or a mapping; keys must be strings")
	if i := strings.Index(msg, "interface {}"); i >= 0 {
		// Any other message that prints a Go value: keep its start.
		msg = strings.TrimRight(msg[:strings.LastIndex(msg[:i], ":")+1], ":") + ": a value of an unsupported shape"
	}
	msg = goValue.ReplaceAllStringFunc(msg, func(m string) string {
		s := goValue.FindStringSubmatch(m)
		return fmt.Sprintf("got %s, want %s", article(s[1]), jsonType(s[2]))
	})
	return errors.New(msg)
}

func article(jsonKind string) string {
	switch jsonKind {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	}
	return "a " + jsonKind
}

// jsonType names the JSON value a Go type decodes from.
func jsonType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.HasSuffix(goType, "List"):
		return "an object"
	case goType == "string" || isStringType(goType):
		return "a string"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "a boolean"
	case strings.HasSuffix(goType, "Quantity"):
		return "a quantity such as 10Gi"
	}
	return "an object"
}

// isStringType reports the string-based API types of core/v1 and
// storage/v1 that manifests commonly get wrong.
func isStringType(goType string) bool {
	switch strings.TrimPrefix(goType, "v1.") {
	case "PersistentVolumeAccessMode", "PersistentVolumeReclaimPolicy", "PersistentVolumeMode",
		"VolumeBindingMode", "NodeSelectorOperator", "LabelSelectorOperator", "ResourceName",
		"PersistentVolumePhase", "PersistentVolumeClaimPhase", "PodPhase":
		return true
	}
	return false
}
