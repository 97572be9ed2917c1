//go:build e2e && linux

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// unusedRules are the permissions of the example that an end-to-end run
// need not exercise, each with the code path that needs it.
var unusedRules = map[string]string{
	// client-go's informers stream their initial list through a watch
	// (WatchListClient) where the API server supports it, and fall back
	// to LIST where it does not or the stream fails.
	"core persistentvolumes list":        "informer: LIST when a streaming list is not available",
	"core persistentvolumeclaims list":   "informer: LIST when a streaming list is not available",
	"storage.k8s.io storageclasses list": "informer: LIST when a streaming list is not available",
	"core pods list":                     "informer: LIST when a streaming list is not available",
	"core pods get":                      "recycler: a restarted replica reads a recycler pod it finds (adoption)",
	"core events patch":                  "client-go's event correlator patches an event that repeats within minutes",
}

// auditEvent is the part of an audit.k8s.io/v1 Event the check reads.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	URI   string `json:"requestURI"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Received metav1.MicroTime `json:"requestReceivedTimestamp"`
}

// call is one kind of API call: who cannot tell two gets of different
// volumes apart needs no more.
type call struct {
	namespace, group, resource, verb, name string
}

func (c call) String() string {
	g := c.group
	if g == "" {
		g = "core"
	}
	s := fmt.Sprintf("%s %s %s", c.verb, g, c.resource)
	if c.namespace != "" {
		s += " in " + c.namespace
	}
	if c.name != "" {
		s += " named " + c.name
	}
	return s
}

// rule is the policy rule that allows exactly c.
func (c call) rule() rbacv1.PolicyRule {
	r := rbacv1.PolicyRule{APIGroups: []string{c.group}, Resources: []string{c.resource}, Verbs: []string{c.verb}}
	if c.name != "" {
		r.ResourceNames = []string{c.name}
	}
	return r
}

// auditedCalls reads the calls of user since the given time from the
// cluster's audit log, with the number of refusals (403) of each.
func auditedCalls(t *testing.T, user string, since time.Time) map[call]int {
	t.Helper()
	f, err := os.Open(filepath.Join(testCluster.dir, "audit.log"))
	if err != nil {
		t.Fatalf("audit log of the cluster (hack/cluster-up.sh writes it): %v", err)
	}
	defer f.Close()
	calls := map[call]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log: %v", err)
		}
		if ev.User.Username != user || ev.Received.Time.Before(since) || ev.Stage != "ResponseComplete" {
			continue
		}
		if ev.ObjectRef == nil {
			t.Errorf("non-resource request %s %s", ev.Verb, ev.URI)
			continue
		}
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		c := call{namespace: ev.ObjectRef.Namespace, group: ev.ObjectRef.APIGroup, resource: res, verb: ev.Verb}
		// Names matter only where a rule names its objects (the
		// authentication ConfigMap); keep the set small otherwise.
		if c.resource == "configmaps" {
			c.name = ev.ObjectRef.Name
		}
		if _, ok := calls[c]; !ok {
			calls[c] = 0
		}
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code == 403 {
			calls[c]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("audit log: %v", err)
	}
	return calls
}

// grant is the rules of one role bound to the program, in a namespace
// ("" for a ClusterRoleBinding), and whether the example defines the role.
type grant struct {
	namespace string
	rules     []rbacv1.PolicyRule
	own       bool
	role      string
}

// exampleGrants returns what the example's bindings grant the program's
// ServiceAccount, with the rules read back from the cluster (the built-in
// roles the example binds included).
func exampleGrants(t *testing.T, admin kubernetes.Interface, objs []*unstructured.Unstructured) []grant {
	t.Helper()
	own := map[string]bool{}
	for _, u := range objs {
		if k := u.GetKind(); k == "Role" || k == "ClusterRole" {
			own[k+"/"+u.GetNamespace()+"/"+u.GetName()] = true
		}
	}
	var grants []grant
	for _, u := range objs {
		kind := u.GetKind()
		if kind != "RoleBinding" && kind != "ClusterRoleBinding" {
			continue
		}
		var b rbacv1.RoleBinding // a ClusterRoleBinding has the same fields
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == programSA && s.Namespace == programNS
		}) {
			continue
		}
		g := grant{namespace: b.Namespace, role: b.RoleRef.Kind + " " + b.RoleRef.Name}
		var err error
		switch b.RoleRef.Kind {
		case "ClusterRole":
			var r *rbacv1.ClusterRole
			r, err = admin.RbacV1().ClusterRoles().Get(t.Context(), b.RoleRef.Name, metav1.GetOptions{})
			if err == nil {
				g.rules, g.own = r.Rules, own["ClusterRole//"+r.Name]
			}
		case "Role":
			var r *rbacv1.Role
			r, err = admin.RbacV1().Roles(b.Namespace).Get(t.Context(), b.RoleRef.Name, metav1.GetOptions{})
			if err == nil {
				g.rules, g.own = r.Rules, own["Role/"+r.Namespace+"/"+r.Name]
			}
		}
		if err != nil {
			t.Fatalf("role of binding %s %s: %v", kind, b.Name, err)
		}
		grants = append(grants, g)
	}
	return grants
}

// checkAuditedCalls compares the API calls of the program's
// ServiceAccount since started with the example's RBAC: none refused,
// each allowed by the example's bindings, each rule of the example's own
// roles used (or listed in unusedRules with the code path that needs it).
func checkAuditedCalls(t *testing.T, admin kubernetes.Interface, started time.Time) {
	t.Helper()
	calls := auditedCalls(t, "system:serviceaccount:"+programNS+":"+programSA, started)
	if len(calls) == 0 {
		t.Fatal("the audit log has no call of the program")
	}
	grants := exampleGrants(t, admin, readExample(t))
	var seen []string
	for c, refused := range calls {
		seen = append(seen, c.String())
		if refused > 0 {
			t.Errorf("%s: refused %d times (403)", c, refused)
		}
		var rules []rbacv1.PolicyRule
		for _, g := range grants {
			if g.namespace == "" || g.namespace == c.namespace {
				rules = append(rules, g.rules...)
			}
		}
		if ok, _ := validation.Covers(rules, []rbacv1.PolicyRule{c.rule()}); !ok {
			t.Errorf("%s: not allowed by the example's RBAC", c)
		}
	}
	slices.Sort(seen)
	t.Logf("API calls of the program (%d kinds):\n  %s", len(seen), strings.Join(seen, "\n  "))

	for _, g := range grants {
		if !g.own {
			continue
		}
		for _, r := range g.rules {
			for _, group := range r.APIGroups {
				for _, res := range r.Resources {
					for _, verb := range r.Verbs {
						if used(calls, g.namespace, group, res, verb) {
							continue
						}
						key := strings.TrimSpace(fmt.Sprintf("%s %s %s", map[bool]string{true: "core", false: group}[group == ""], res, verb))
						if reason, ok := unusedRules[key]; ok {
							t.Logf("%s (namespace %q) grants %s, not used in this run: %s", g.role, g.namespace, key, reason)
							continue
						}
						t.Errorf("%s grants %s (namespace %q), which the program never used: remove it or name the code path in unusedRules", g.role, key, g.namespace)
					}
				}
			}
		}
	}
}

// used reports whether a call of verb on group/resource was made, in
// namespace ("" matches any).
func used(calls map[call]int, namespace, group, resource, verb string) bool {
	for c := range calls {
		if c.group == group && c.resource == resource && c.verb == verb && (namespace == "" || c.namespace == namespace) {
			return true
		}
	}
	return false
}
