// Package fields holds the test that no field of our API is accepted and then ignored: every
// field path of the generated SparkApplication, ScheduledSparkApplication, SparkConnect and
// Queue CRDs either has a test showing its effect (effects.txt) or is on the short no-effect
// list of its kind (webhook/validation.NoEffect and ConnectNoEffect, explained in
// docs/fields.md), for which the validating webhook warns. A new field fails this test until
// one of the two says what it does.
package fields

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sparkop/spark-operator/test/cluster"
	"github.com/sparkop/spark-operator/test/crdpaths"
	"github.com/sparkop/spark-operator/webhook/validation"
)

// entry is one line of effects.txt.
type entry struct {
	line    int
	kind    string
	path    string // without "/**"
	subtree bool
	pkg     string // package directory, from the repository root
	test    string // test function
}

func readEffects(t *testing.T) []entry {
	t.Helper()
	f, err := os.Open("effects.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []entry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Fields(line)
		if len(parts) != 3 || !strings.Contains(parts[2], ".") {
			t.Fatalf("effects.txt:%d: want \"Kind path package.TestName\", got %q", n, line)
		}
		dot := strings.LastIndex(parts[2], ".")
		e := entry{line: n, kind: parts[0], path: parts[1], pkg: parts[2][:dot], test: parts[2][dot+1:]}
		if p, ok := strings.CutSuffix(e.path, "/**"); ok {
			e.path, e.subtree = p, true
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// own strips the collection markers a path ends in: ".spec.arguments[]" is covered by
// ".spec.arguments".
func own(path string) string {
	for {
		p, ok := strings.CutSuffix(path, "[]")
		if !ok {
			p, ok = strings.CutSuffix(path, "{}")
		}
		if !ok {
			return path
		}
		path = p
	}
}

// under reports whether path is root or below it.
func under(path, root string) bool {
	if path == root {
		return true
	}
	if !strings.HasPrefix(path, root) {
		return false
	}
	next := path[len(root)]
	return next == '.' || next == '[' || next == '{'
}

// crds are the CRDs whose every field must have an effect: file (under
// charts/spark-operator/crds) and served version.
var crds = []struct{ file, version string }{
	{"sparkoperator.k8s.io_sparkapplications.yaml", "v1beta2"},
	{"sparkoperator.k8s.io_scheduledsparkapplications.yaml", "v1beta2"},
	{"sparkoperator.k8s.io_sparkconnects.yaml", "v1alpha1"},
	{"scheduling.sparkop.dev_queues.yaml", "v1alpha1"},
	{"scheduling.sparkop.dev_reservations.yaml", "v1alpha1"},
}

func schemaFields(t *testing.T, root string) []crdpaths.Field {
	t.Helper()
	var all []crdpaths.Field
	for _, crd := range crds {
		fields, err := crdpaths.Load(filepath.Join(root, "charts", "spark-operator", "crds", crd.file), crd.version)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, fields...)
	}
	return all
}

// noEffect lists, by kind, the fields the operator accepts and ignores, which the validating
// webhook warns about (webhook/validation).
var noEffect = map[string][]validation.IgnoredField{
	"SparkApplication": validation.NoEffect,
	"SparkConnect":     validation.ConnectNoEffect,
}

// TestEveryFieldHasAnEffect walks every field path of our CRDs.
func TestEveryFieldHasAnEffect(t *testing.T) {
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	fields := schemaFields(t, root)
	effects := readEffects(t)

	// Groupings (objects with fields of their own) do nothing by themselves: their fields are
	// checked one by one. A list or map is not a grouping of its own items.
	grouping := map[string]bool{}
	for _, f := range fields {
		for _, g := range fields {
			if g.Kind == f.Kind && own(g.Path) != f.Path && under(g.Path, f.Path) {
				grouping[f.Kind+" "+f.Path] = true
				break
			}
		}
	}
	covered := func(f crdpaths.Field) bool {
		p := own(f.Path)
		for _, e := range effects {
			if e.kind == f.Kind && (p == e.path || e.subtree && under(p, e.path)) {
				return true
			}
		}
		for _, n := range noEffect[f.Kind] {
			if under(p, n.Path) {
				return true
			}
		}
		return grouping[f.Kind+" "+p] || f.Path == "."
	}
	missing := 0
	for _, f := range fields {
		if !covered(f) {
			missing++
			t.Errorf("%s %s (%s): no test shows its effect; add one to effects.txt, or put the field on "+
				"its kind's no-effect list in webhook/validation and docs/fields.md with the reason it does nothing", f.Kind, f.Path, f.Type)
		}
	}
	if missing > 0 {
		t.Logf("%d of %d field paths uncovered", missing, len(fields))
	}

	known := map[string]bool{}
	for _, f := range fields {
		known[f.Kind+" "+f.Path] = true
	}
	testsOf := map[string]string{} // package directory → its test sources
	for _, e := range effects {
		if !known[e.kind+" "+e.path] {
			t.Errorf("effects.txt:%d: %s %s is not a field of our CRDs", e.line, e.kind, e.path)
			continue
		}
		src, ok := testsOf[e.pkg]
		if !ok {
			src = testSources(t, filepath.Join(root, e.pkg))
			testsOf[e.pkg] = src
		}
		if !regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(e.test) + `\(t \*testing\.T\)`).MatchString(src) {
			t.Errorf("effects.txt:%d: %s has no test %s", e.line, e.pkg, e.test)
			continue
		}
		// The tests must at least name the field they are said to show.
		if name := fieldName(e.path); name != "" && !strings.Contains(strings.ToLower(src), strings.ToLower(name)) {
			t.Errorf("effects.txt:%d: the tests of %s never name %q, so %s cannot show what %s does", e.line, e.pkg, name, e.test, e.path)
		}
	}
}

// fieldName is the last name in path, which the test showing its effect must mention; none
// for the object's own metadata.
func fieldName(path string) string {
	if !strings.HasPrefix(path, ".spec") && !strings.HasPrefix(path, ".status") {
		return ""
	}
	p := own(path)
	return p[strings.LastIndexAny(p, ".]}")+1:]
}

// testSources is the text of every _test.go file in dir and of its testdata.
func testSources(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Errorf("no tests in %s", dir)
		return ""
	}
	more, _ := filepath.Glob(filepath.Join(dir, "testdata", "*"))
	var b strings.Builder
	for _, f := range append(files, more...) {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		b.Write(data)
	}
	return b.String()
}

// TestNoEffectFieldsDocumented requires each field on the no-effect list to exist in our CRDs
// and to be explained in docs/fields.md.
func TestNoEffectFieldsDocumented(t *testing.T) {
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "fields.md"))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, f := range schemaFields(t, root) {
		known[f.Kind+" "+f.Path] = true
	}
	for kind, list := range noEffect {
		for _, n := range list {
			if !known[kind+" "+n.Path] {
				t.Errorf("no-effect field %s is not a field of our %s CRD", n.Path, kind)
			}
			if !strings.Contains(string(doc), fmt.Sprintf("`%s`", strings.TrimPrefix(n.Path, "."))) {
				t.Errorf("docs/fields.md does not explain %s %s (as `%s`)", kind, n.Path, strings.TrimPrefix(n.Path, "."))
			}
		}
	}
}
