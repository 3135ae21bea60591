package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"testing"
	"time"
)

func TestRunProfileWritesTheCPUBlockAndMutexProfilesOfTheRun(t *testing.T) {
	dir := t.TempDir()
	p, err := startRunProfile(dir, "scenario")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := startRunProfile(dir, "other"); err == nil {
		t.Error("a second profile while one runs: no error")
	}
	// Contend a mutex: one goroutine holds it while another waits.
	var mu sync.Mutex
	var wg sync.WaitGroup
	mu.Lock()
	wg.Go(func() {
		mu.Lock()
		defer mu.Unlock()
	})
	time.Sleep(20 * time.Millisecond)
	mu.Unlock()
	wg.Wait()
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	gzipMagic := []byte{0x1f, 0x8b}
	for _, name := range []string{"scenario-cpu.pprof", "scenario-block.pprof", "scenario-mutex.pprof"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, gzipMagic) {
			t.Errorf("%s: %d bytes, not a gzipped profile", name, len(b))
		}
	}
	for _, name := range []string{"block", "mutex"} {
		if n := pprof.Lookup(name).Count(); n == 0 {
			t.Errorf("the %s profile recorded no wait on the contended mutex", name)
		}
	}
	// Stopped: another run can be profiled.
	q, err := startRunProfile(dir, "next")
	if err != nil {
		t.Fatalf("a profile after the first stopped: %v", err)
	}
	if err := q.stop(); err != nil {
		t.Fatal(err)
	}
}
