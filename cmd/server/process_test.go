package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// serverProcessEnv makes this test binary act as the server itself (main, nothing else),
// so that a test can start real server processes without building anything.
const serverProcessEnv = "BP_SERVER_PROCESS"

func TestMain(m *testing.M) {
	if os.Getenv(serverProcessEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startServerProcess runs the server as a separate operating-system process with env (and
// nothing else of this process's environment but PATH), waits until it listens, and stops
// it with SIGTERM when the test ends; it must exit cleanly.
func startServerProcess(t *testing.T, env map[string]string) *testServer {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{serverProcessEnv + "=1", "PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	s := &testServer{
		t:          t,
		env:        env,
		logs:       newLogBuffer(),
		adminToken: env["ADMIN_TOKEN"],
		done:       make(chan error, 1),
		client:     &http.Client{Timeout: 60 * time.Second},
	}
	cmd.Stdout, cmd.Stderr = io.Discard, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start server process: %v", err)
	}
	s.pid = cmd.Process.Pid
	s.stop = func() { _ = cmd.Process.Signal(syscall.SIGTERM) }
	go func() { s.done <- cmd.Wait() }()
	select {
	case addr := <-s.logs.listening:
		s.base = "http://" + addr
	case err := <-s.done:
		t.Fatalf("server process exited before listening: %v\nlogs:\n%s", err, s.logs)
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("server process did not listen within 60s; logs:\n%s", s.logs)
	}
	t.Cleanup(func() {
		if err := s.shutdown(); err != nil && !s.killed.Load() {
			t.Errorf("server process (pid %d) exited with %v", cmd.Process.Pid, err)
		}
		s.checkLogs()
	})
	return s
}

// kill ends the server process with SIGKILL, as a crash would: no
// shutdown, no goodbye to the database.
func (s *testServer) kill(t *testing.T) {
	t.Helper()
	s.killed.Store(true)
	if err := syscall.Kill(s.pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill server process %d: %v", s.pid, err)
	}
}
