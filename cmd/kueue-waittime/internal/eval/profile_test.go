package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
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
	// Contend a mutex: one goroutine holds it while another waits. The
	// holder lets go only once the waiter is parked on it (however long a
	// loaded machine takes to run the waiter), and 20 ms later, so that
	// the wait is longer than the block profile's rate and recorded.
	var mu sync.Mutex
	var wg sync.WaitGroup
	mu.Lock()
	wg.Go(func() {
		mu.Lock()
		defer mu.Unlock()
	})
	waitParkedOnMutex(t, "TestRunProfileWritesTheCPUBlockAndMutexProfilesOfTheRun")
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

// waitParkedOnMutex waits until a goroutine started by the function named
// fn is parked in sync.Mutex.Lock, as the runtime's dump of every
// goroutine shows it ("goroutine N [sync.Mutex.Lock]:" over its stack).
func waitParkedOnMutex(t *testing.T, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(time.Minute); ; {
		dump := string(buf[:runtime.Stack(buf, true)])
		for g := range strings.SplitSeq(dump, "\n\n") {
			header, _, _ := strings.Cut(g, "\n")
			if strings.Contains(header, "[sync.Mutex.Lock") && strings.Contains(g, "."+fn+".") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine of %s parked on the mutex within a minute:\n%s", fn, dump)
		}
		time.Sleep(time.Millisecond)
	}
}
