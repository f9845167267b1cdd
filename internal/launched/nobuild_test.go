package launched

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Resolving a uvx release asks the index what would run; it never runs
// it. A release the index offers only as an sdist would be built by uv to
// learn its metadata, which runs the sdist's own build backend: code from
// the index, run by the check that is meant to vet it before anything runs
// (crawlcheck run's gate resolves before it starts the server). The sdist
// here has an in-tree backend that leaves a file behind if it ever runs.
func TestIndexHashesRunsNoBuild(t *testing.T) {
	dir := os.Getenv("CRAWLCHECK_LAUNCHED_DEPS")
	uv := filepath.Join(dir, "venv", "bin", "uv")
	if _, err := os.Stat(uv); dir == "" || err != nil {
		if os.Getenv("CRAWLCHECK_NEED_SERVERS") != "" {
			t.Fatalf("uv is not installed under CRAWLCHECK_LAUNCHED_DEPS=%q: make test-launched installs it", dir)
		}
		t.Skip("CRAWLCHECK_LAUNCHED_DEPS names no uv (make test-launched)")
	}
	tmp := t.TempDir()
	marker := filepath.Join(tmp, "backend-ran")
	const project, version = "crawlcheck-nobuild-probe", "1.0.0"
	root := project + "-" + version + "/"
	backend := fmt.Sprintf("open(%q, 'w').write('ran')\n"+
		"def get_requires_for_build_wheel(config_settings=None): return []\n"+
		"def prepare_metadata_for_build_wheel(d, config_settings=None): raise SystemExit(1)\n"+
		"def build_wheel(d, config_settings=None, metadata_directory=None): raise SystemExit(1)\n", marker)
	var sdist bytes.Buffer
	gz := gzip.NewWriter(&sdist)
	tw := tar.NewWriter(gz)
	for _, f := range []struct{ name, body string }{
		{root + "pyproject.toml", "[build-system]\nrequires = []\nbuild-backend = \"probe_backend\"\nbackend-path = [\".\"]\n\n[project]\nname = \"" + project + "\"\ndynamic = [\"version\", \"dependencies\"]\n"},
		{root + "probe_backend.py", backend},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if tw.Close() != nil || gz.Close() != nil {
		t.Fatal("writing the sdist")
	}
	name := project + "-" + version + ".tar.gz"
	sum := sha256.Sum256(sdist.Bytes())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/" + project + "/":
			fmt.Fprintf(w, "<!DOCTYPE html>\n<html><body>\n<a href=\"/files/%s#sha256=%x\">%s</a>\n</body></html>\n", name, sum, name)
		case "/files/" + name:
			w.Write(sdist.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	env := append(os.Environ(), "UV_CACHE_DIR="+filepath.Join(tmp, "uv-cache"), "UV_INDEX_URL="+srv.URL+"/simple",
		"UV_DEFAULT_INDEX="+srv.URL+"/simple", "UV_PYTHON_DOWNLOADS=never", "UV_NO_PROGRESS=1")
	r := ResolveWith(context.Background(), []string{"uvx", project + "==" + version}, Options{UV: uv, Env: env, Dir: tmp})
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("resolving %s==%s ran the sdist's build backend (resolution %+v)", project, version, r)
	}
	if r.Package == nil || r.Package.Hashes[0] != fmt.Sprintf("sha256:%x", sum) {
		t.Fatalf("resolution %+v (package %+v), want the sdist's hash", r, r.Package)
	}
	// The probe works: a resolution that needs the metadata (with its
	// dependencies) builds the sdist, and the backend leaves its file.
	cmd := exec.Command(uv, "pip", "compile", "-", "--no-cache", "--quiet")
	cmd.Env, cmd.Stdin = env, strings.NewReader(project+"=="+version+"\n")
	_ = cmd.Run() // the backend then refuses to build
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("uv building the probe's sdist did not run its backend (%v): this test would prove nothing", err)
	}
}
