package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// runtime is the container-runtime half (containerd's part): it owns pod
// sandboxes and their containers, which here are plain processes. It keeps
// running while the kubelet half is stopped or restarted, as containers
// outlive a kubelet restart on a real node; only the CRI's Stop/Remove
// (kubeadm reset) or the kubelet's sync end them.
type containerRuntime struct {
	images imageStore
	logDir string // /var/log/pods

	mu        sync.Mutex
	sandboxes map[string]*sandbox // by ID
}

type sandbox struct {
	id         string
	pod        *corev1.Pod // the static pod as read from its manifest
	hash       string
	created    time.Time
	ready      bool // false once stopped
	containers []*container
}

type container struct {
	id       string
	name     string
	image    string
	argv     []string
	env      []string
	attempt  int
	started  time.Time
	finished time.Time
	exitCode int
	running  bool
	logPath  string
	proc     *os.Process
	done     chan struct{}
}

func newContainerRuntime(imageDir, logDir string) *containerRuntime {
	return &containerRuntime{images: imageStore{root: imageDir}, logDir: logDir, sandboxes: map[string]*sandbox{}}
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// find returns the ready sandbox of a pod (namespace/name), if any.
func (r *containerRuntime) find(ns, name string) *sandbox {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sandboxes {
		if s.ready && s.pod.Namespace == ns && s.pod.Name == name {
			return s
		}
	}
	return nil
}

// list returns every sandbox, oldest first.
func (r *containerRuntime) list() []*sandbox {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*sandbox, 0, len(r.sandboxes))
	for _, s := range r.sandboxes {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].created.Before(out[j].created) })
	return out
}

// runPod creates a sandbox for pod and starts each of its containers.
func (r *containerRuntime) runPod(pod *corev1.Pod, hash string) (*sandbox, error) {
	s := &sandbox{id: newID(), pod: pod, hash: hash, created: time.Now(), ready: true}
	for _, c := range pod.Spec.Containers {
		if len(c.Command) == 0 {
			return nil, fmt.Errorf("pod %s/%s container %s: no command (an image entrypoint cannot be played)", pod.Namespace, pod.Name, c.Name)
		}
		ct := &container{id: newID(), name: c.Name, image: c.Image, argv: append(append([]string{}, c.Command...), c.Args...)}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				ct.env = append(ct.env, e.Name+"="+e.Value)
			}
		}
		s.containers = append(s.containers, ct)
	}
	r.mu.Lock()
	r.sandboxes[s.id] = s
	r.mu.Unlock()
	for _, c := range s.containers {
		if err := r.start(s, c); err != nil {
			return s, err
		}
	}
	return s, nil
}

// start runs one container's process: the command found in its image
// with the manifest's own arguments, in its own process group, killed if
// this process dies. An image the store lacks fails the start, and the
// kubelet retries after its back-off, as ErrImageNeverPull would.
func (r *containerRuntime) start(s *sandbox, c *container) error {
	bin, berr := r.images.binary(c.image, c.argv[0])
	dir := filepath.Join(r.logDir, fmt.Sprintf("%s_%s_%s", s.pod.Namespace, s.pod.Name, s.pod.UID), c.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r.mu.Lock()
	attempt := c.attempt
	r.mu.Unlock()
	logPath := filepath.Join(dir, fmt.Sprintf("%d.log", attempt))
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if berr != nil {
		fmt.Fprintf(logf, "%v\n", berr)
		logf.Close()
		r.mu.Lock()
		c.exitCode, c.finished, c.logPath = 128, time.Now(), logPath
		r.mu.Unlock()
		return fmt.Errorf("starting %s of %s/%s: %w", c.name, s.pod.Namespace, s.pod.Name, berr)
	}
	cmd := exec.Command(bin, c.argv[1:]...)
	cmd.Args[0] = c.argv[0]
	cmd.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, c.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		r.mu.Lock()
		c.exitCode, c.finished, c.logPath = 128, time.Now(), logPath
		r.mu.Unlock()
		return fmt.Errorf("starting %s of %s/%s: %w", c.name, s.pod.Namespace, s.pod.Name, err)
	}
	done := make(chan struct{})
	r.mu.Lock()
	c.proc, c.running, c.started, c.logPath, c.done = cmd.Process, true, time.Now(), logPath, done
	r.mu.Unlock()
	logf.Close()
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			code = 128
		}
		r.mu.Lock()
		c.running, c.finished, c.exitCode = false, time.Now(), code
		r.mu.Unlock()
		close(done)
	}()
	return nil
}

// restartExited restarts the exited containers of a ready sandbox (restart
// policy Always, as every control-plane pod has), at most once per backoff.
func (r *containerRuntime) restartExited(s *sandbox, backoff time.Duration) []error {
	var errs []error
	for _, c := range s.containers {
		r.mu.Lock()
		due := s.ready && !c.running && time.Since(c.finished) >= backoff
		if due {
			c.attempt++
		}
		r.mu.Unlock()
		if due {
			if err := r.start(s, c); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// stop ends a sandbox's processes: SIGTERM to each process group, SIGKILL
// after grace.
func (r *containerRuntime) stop(s *sandbox, grace time.Duration) {
	r.mu.Lock()
	s.ready = false
	var waits []chan struct{}
	for _, c := range s.containers {
		if c.running && c.proc != nil {
			_ = syscall.Kill(-c.proc.Pid, syscall.SIGTERM)
			waits = append(waits, c.done)
		}
	}
	r.mu.Unlock()
	deadline := time.After(grace)
	for _, w := range waits {
		select {
		case <-w:
		case <-deadline:
			r.mu.Lock()
			for _, c := range s.containers {
				if c.running && c.proc != nil {
					_ = syscall.Kill(-c.proc.Pid, syscall.SIGKILL)
				}
			}
			r.mu.Unlock()
			<-w
		}
	}
}

// remove forgets a stopped sandbox.
func (r *containerRuntime) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.sandboxes, id)
}

// stopAll is the node powering down its runtime.
func (r *containerRuntime) stopAll(grace time.Duration) {
	var wg sync.WaitGroup
	for _, s := range r.list() {
		wg.Add(1)
		go func() { defer wg.Done(); r.stop(s, grace) }()
	}
	wg.Wait()
}

// running reports whether every container of the sandbox runs.
func (r *containerRuntime) running(s *sandbox) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range s.containers {
		if !c.running {
			return false
		}
	}
	return s.ready
}

// snapshot copies a container's state under the lock.
func (r *containerRuntime) snapshot(c *container) container {
	r.mu.Lock()
	defer r.mu.Unlock()
	return *c
}
