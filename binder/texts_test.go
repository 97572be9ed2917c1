package binder

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestTextsTable: the package documentation's table of texts names every
// event reason of events.go and contains every message constant (table
// cells wrap, so whitespace is normalized), so the table cannot fall behind
// the code.
func TestTextsTable(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(doc), "# Texts")
	end := strings.Index(string(doc), "# Not managed")
	if start < 0 || end < start {
		t.Fatal(`doc.go has no "# Texts" section before "# Not managed"`)
	}
	table := normalize(strings.ReplaceAll(string(doc[start:end]), "//", " "))
	f, err := parser.ParseFile(token.NewFileSet(), "events.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					continue
				}
				text, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(name.Name, "Reason") || strings.HasPrefix(name.Name, "msg") {
					checked++
					if !strings.Contains(table, normalize(text)) {
						t.Errorf("the texts table of doc.go lacks %s = %q", name.Name, text)
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d constants of events.go, want the reasons and messages (at least 20)", checked)
	}
}

// normalize collapses runs of whitespace into one space.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }
